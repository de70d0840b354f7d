/* xdp_tail_chain: a program that tail-calls itself through a PROG_ARRAY until the chain is as long as the frame
 * asks, or the kernel's limit of 33 tail calls ends it. Each run increments the last byte of the source MAC and
 * counts itself in `runs`; when that byte reaches the last byte of the destination MAC the frame goes back
 * (XDP_TX); a tail call that falls through (the limit) drops the frame. So a frame whose MAC bytes differ by 1 to
 * 34 is sent back after that many runs, one that differs by more is dropped after 34 runs (1 + 33 tail calls).
 * Traffic: UDP frames whose MAC bytes differ by 1..40. Maps: chain[0] = this program, set from the host.
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} chain SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} runs SEC(".maps");

SEC("xdp")
int xdp_tail_chain(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u32 zero = 0;
	__u64 *n;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	n = bpf_map_lookup_elem(&runs, &zero);
	if (n)
		*n += 1;
	eth->h_source[5] += 1;
	if (eth->h_source[5] == eth->h_dest[5])
		return XDP_TX;
	bpf_tail_call(ctx, &chain, 0);
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
