/* Legacy map definitions in the "maps" section (struct bpf_map_def, defined here as old samples did). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct bpf_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

struct bpf_map_def SEC("maps") rxcnt = {
	.type = BPF_MAP_TYPE_PERCPU_ARRAY,
	.key_size = sizeof(__u32),
	.value_size = sizeof(long),
	.max_entries = 256,
};

struct bpf_map_def SEC("maps") blacklist = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = sizeof(__u32),
	.value_size = sizeof(__u64),
	.max_entries = 10000,
	.map_flags = BPF_F_NO_PREALLOC,
};

SEC("xdp")
int xdp_legacy(struct xdp_md *ctx)
{
	__u32 key = ctx->rx_queue_index;
	long *value = bpf_map_lookup_elem(&rxcnt, &key);
	if (value)
		*value += 1;
	if (bpf_map_lookup_elem(&blacklist, &key))
		return XDP_DROP;
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
