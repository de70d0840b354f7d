/* fuzz seed 20261127 programs 1057 and 2293, reduced: a tail call's target entered with a packet its caller shrank
 * below PKT_MIN_LEN (60) bytes. The compiler treats packet bytes 0..59 as always readable at a program's entry
 * (hxdp/compiler/dataflow.py speculation_safe_load, reduce.py remove_bounds_checks) and runs the target's load of
 * p + 40 above its `data + 50 > data_end` check: the compiled ROM faults where the kernel returns XDP_PASS. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct { __uint(type, BPF_MAP_TYPE_PROG_ARRAY); __uint(max_entries, 4); __type(key, __u32);
	__type(value, __u32); } jmp SEC(".maps");

SEC("xdp")
int tc_shrink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	/* keep 40 bytes */
	if (bpf_xdp_adjust_tail(ctx, 40 - (int)(data_end - data)))
		return XDP_ABORTED;
	bpf_tail_call(ctx, &jmp, 2);
	return XDP_TX;
}

SEC("xdp")
int tc_short_target(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *p = data;

	if (data + 50 > data_end)
		return XDP_PASS;
	return *(__u64 *)(p + 40) & 1 ? XDP_DROP : XDP_REDIRECT;
}

char _license[] SEC("license") = "GPL";
