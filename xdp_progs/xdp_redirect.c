/* xdp_redirect: microbenchmark, swaps the MAC addresses and redirects every frame to egress port
 * EGRESS_IFINDEX with the bpf_redirect helper (XDP_REDIRECT), like the Linux sample xdp_redirect.
 * Traffic: any Ethernet frames of at least 60 bytes. Maps: none.
 */
#include "common.h"

#ifndef EGRESS_IFINDEX
#define EGRESS_IFINDEX 1
#endif

SEC("xdp")
int xdp_redirect_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_ABORTED;
	swap_src_dst_mac(eth);
	return bpf_redirect(EGRESS_IFINDEX, 0);
}

char _license[] SEC("license") = "GPL";
