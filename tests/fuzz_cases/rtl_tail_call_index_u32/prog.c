/* fuzz seed 20261127 program 163, reduced: a tail call whose index register has its upper half set. The index is
 * the helper's u32 argument (the kernel's JIT compares w3): entry 2 is taken. The RTL compared all 64 bits and
 * fell through. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct { __uint(type, BPF_MAP_TYPE_PROG_ARRAY); __uint(max_entries, 4); __type(key, __u32);
	__type(value, __u32); } jmp SEC(".maps");

SEC("xdp")
int tc_index_u32(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (data + 8 > data_end)
		return XDP_PASS;
	/* the first 8 bytes as one u64: a destination MAC 02:00:00:00:.. gives index 2 with bits above 32 set */
	bpf_tail_call(ctx, &jmp, *(__u64 *)data);
	return XDP_TX;
}

SEC("xdp")
int tc_target(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
