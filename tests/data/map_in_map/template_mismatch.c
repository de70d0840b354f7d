/* A static `.values` slot naming a map that does not fit the outer map's template (u64 values, template u32). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} a SEC(".maps");

struct inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct inner);
} outer SEC(".maps") = {
	.values = { [1] = &a },
};

SEC("xdp")
int template_mismatch(struct xdp_md *ctx)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&outer, &k) ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
