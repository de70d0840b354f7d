/* Two programs in one section plus one in xdp.frags: selection by --section and --prog. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int first_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

SEC("xdp")
int second_pass(struct xdp_md *ctx)
{
	return ctx->rx_queue_index ? XDP_PASS : XDP_TX;
}

SEC("xdp.frags")
int frags_prog(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
