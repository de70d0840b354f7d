/* grant_mix: rows taking the map grant in several modes, picked by the frame (tests/test_multicore_skip.py). Byte 1 & 3
 * picks: 0 a hash lookup (shared, several cycles), 1 a hash update (exclusive), 2 an atomic add in an array value
 * (write), 3 a load of that value (shared); byte 0 & 7 is the hash key. Every frame leaves (XDP_TX) with what
 * it read in byte 2. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} count SEC(".maps");

SEC("xdp")
int grant_mix(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data;
	__u8 *end = (void *)(long)ctx->data_end;
	__u32 zero = 0, key;
	__u64 value, *v;

	if (data + 4 > end)
		return XDP_ABORTED;
	key = data[0] & 7;
	switch (data[1] & 3) {
	case 0:
		v = bpf_map_lookup_elem(&table, &key);
		data[2] = v ? (__u8)*v : 0xff;
		break;
	case 1:
		value = data[3];
		bpf_map_update_elem(&table, &key, &value, BPF_ANY);
		break;
	case 2:
		v = bpf_map_lookup_elem(&count, &zero);
		if (v)
			__sync_fetch_and_add(v, 1);
		break;
	default:
		v = bpf_map_lookup_elem(&count, &zero);
		data[2] = v ? (__u8)*v : 0xff;
	}
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
