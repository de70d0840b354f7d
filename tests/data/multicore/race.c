/* Two cores racing on one hash bucket and one atomic counter (docs/execution_contract.md section 8).
 * Every frame's first byte & 3 is its flow: flows[flow] counts the flow's frames (a missing key is inserted with
 * BPF_NOEXIST; the core that loses the insert race finds the other's entry and adds to it), total[0] counts every
 * frame, total[1] the inserts that found the key already there. The frame goes back out (XDP_TX; flow 3 is dropped)
 * with its flow's count before it in bytes 8..15: over a flow's frames these are 0..n-1 exactly once each, whatever
 * the cores' order, when the count is atomic. Bytes 16..19 get the core's number (bpf_get_smp_processor_id), and
 * the per-CPU cpu_frames counts each core's frames.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} total SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_frames SEC(".maps");

SEC("xdp")
int race(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	unsigned char *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0, one = 1;
	__u64 first = 1, *v, *t, *c;
	__u32 key;

	if (data + 20 > data_end)
		return XDP_ABORTED;
	key = data[0] & 3;
	v = bpf_map_lookup_elem(&flows, &key);
	if (!v) {
		if (bpf_map_update_elem(&flows, &key, &first, BPF_NOEXIST) == 0) {
			*(__u64 *)(data + 8) = 0;
			v = 0;
		} else {
			t = bpf_map_lookup_elem(&total, &one);
			if (t)
				__sync_fetch_and_add(t, 1);
			v = bpf_map_lookup_elem(&flows, &key);
		}
	}
	if (v)
		*(__u64 *)(data + 8) = __sync_fetch_and_add(v, 1);
	t = bpf_map_lookup_elem(&total, &zero);
	if (t)
		__sync_fetch_and_add(t, 1);
	c = bpf_map_lookup_elem(&cpu_frames, &zero);
	if (c)
		*c += 1;
	*(__u32 *)(data + 16) = bpf_get_smp_processor_id();
	return key == 3 ? XDP_DROP : XDP_TX;
}

char _license[] SEC("license") = "GPL";
