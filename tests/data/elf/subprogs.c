/* bpf-to-bpf calls: static and global subprograms in .text, a nested call, two programs sharing callees. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

static __attribute__((noinline)) __u32 mix(__u32 a, __u32 b)
{
	return (a * 31) ^ (b >> 3);
}

static __attribute__((noinline)) __u32 twice_mix(__u32 a, __u32 b)
{
	return mix(a, b) + mix(b, a);
}

__attribute__((noinline)) int global_pick(__u32 h)
{
	return h & 1 ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int calls_main(struct xdp_md *ctx)
{
	__u32 h = twice_mix(ctx->ingress_ifindex, ctx->rx_queue_index);
	return global_pick(h);
}

SEC("xdp/alt")
int calls_alt(struct xdp_md *ctx)
{
	return global_pick(mix(ctx->rx_queue_index, 7));
}

char _license[] SEC("license") = "GPL";
