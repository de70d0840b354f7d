/* A callback passed by address (bpf_loop): lddw of a function, src=PSEUDO_FUNC after loading. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

static long add_index(__u32 index, void *ctx)
{
	*(__u32 *)ctx += index;
	return 0;
}

SEC("xdp")
int loop_prog(struct xdp_md *ctx)
{
	__u32 sum = 0;
	bpf_loop(4, add_index, &sum, 0);
	return sum == 6 ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
