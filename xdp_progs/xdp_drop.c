/* xdp_drop: microbenchmark, drops every packet (XDP_DROP). Traffic: any frames. Maps: none. */
#include "common.h"

SEC("xdp")
int xdp_drop_prog(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
