/* chain_filter: the second program of a dispatcher chain: reads the tag chain_tag left in the metadata and drops
 * ICMP (tag 1); a frame without metadata (chain_tag dropped it and the chain went on) is counted as untagged and
 * sent back (XDP_TX). Counts in `verdicts`: 0 untagged, 1 dropped, 2 passed. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} verdicts SEC(".maps");

static __always_inline int verdict(__u32 k, int action)
{
	__u64 *n = bpf_map_lookup_elem(&verdicts, &k);

	if (n)
		*n += 1;
	return action;
}

SEC("xdp")
int chain_filter(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	__u32 *meta = (void *)(long)ctx->data_meta;

	if ((void *)(meta + 1) > data)
		return verdict(0, XDP_TX);
	if (*meta == 1)
		return verdict(1, XDP_DROP);
	return verdict(2, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
