/* Lookups in both kinds of maps of maps, keyed by the packet: an ARRAY_OF_MAPS slot (set statically, empty or past
 * the end) and a HASH_OF_MAPS with 20-byte keys (Katran's VIP key length: the inner id is read with the slot's
 * header, not after the key); the inner arrays' values are written into the packet, which goes back (XDP_TX). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct key20 {
	__u32 w[5];
};

struct inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
};

struct inner arr_a SEC(".maps");
struct inner arr_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, __u32);
	__array(values, struct inner);
} by_index SEC(".maps") = {
	.values = { [1] = &arr_a, [3] = &arr_b },
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, struct key20);
	__array(values, struct inner);
} by_key SEC(".maps");

SEC("xdp")
int outer_lookups(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *p = data;
	__u32 idx, zero = 0, one = 1, *a, *b;
	struct key20 k;
	void *m, *n;

	if (data + 14 + 1 + sizeof(k) + 8 > data_end)
		return XDP_ABORTED;
	idx = p[14];
	__builtin_memcpy(&k, p + 15, sizeof(k));
	m = bpf_map_lookup_elem(&by_index, &idx);
	if (!m)
		return XDP_PASS;
	a = bpf_map_lookup_elem(m, &zero);
	if (!a)
		return XDP_ABORTED;
	n = bpf_map_lookup_elem(&by_key, &k);
	if (!n)
		return XDP_DROP;
	b = bpf_map_lookup_elem(n, &one);
	if (!b)
		return XDP_ABORTED;
	__builtin_memcpy(p + 35, a, 4);
	__builtin_memcpy(p + 39, b, 4);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
