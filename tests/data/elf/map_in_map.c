/* Map-in-map: an array of hash maps declared with __array(values, ...), one inner map initialised. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32);
	__type(key, __u32);
	__type(value, __u16);
} inner_a SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct inner);
} outer SEC(".maps") = {
	.values = {&inner_a},
};

SEC("xdp")
int map_in_map(struct xdp_md *ctx)
{
	__u32 k = 0;
	void *m = bpf_map_lookup_elem(&outer, &k);
	if (!m)
		return XDP_ABORTED;
	return bpf_map_lookup_elem(m, &k) ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
