/* race: cores racing on shared maps (tests/test_rtl_multicore.py). Every packet counts itself in an atomic counter
 * and in a counter under a spin lock, stores its sequence byte (byte 1) under its flow key (byte 0 & 3) in a hash,
 * so that back-to-back packets of one flow race on one bucket, and writes the number of the core that ran it into
 * its first byte (XDP_TX). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct counters {
	struct bpf_spin_lock lock;
	__u64 locked;
	__u64 atomic;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct counters);
} totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u32);
} last SEC(".maps");

SEC("xdp")
int race(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data;
	__u8 *end = (void *)(long)ctx->data_end;
	__u32 zero = 0, key, seq;
	struct counters *c;

	if (data + 2 > end)
		return XDP_ABORTED;
	key = data[0] & 3;
	seq = data[1];
	c = bpf_map_lookup_elem(&totals, &zero);
	if (!c)
		return XDP_ABORTED;
	__sync_fetch_and_add(&c->atomic, 1);
	bpf_spin_lock(&c->lock);
	c->locked++;
	bpf_spin_unlock(&c->lock);
	bpf_map_update_elem(&last, &key, &seq, BPF_ANY);
	data[0] = bpf_get_smp_processor_id();
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
