// Board test program: the action depends on the input port (ingress_ifindex = port + 1).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int ifx(struct xdp_md *ctx)
{
	return ctx->ingress_ifindex == 2 ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
