/* A program that reads through what a lookup in a map of maps returned: the kernel lets it read the inner map's
 * struct bpf_map, which the NIC has not (the compiler refuses it, naming why). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

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
} outer SEC(".maps");

SEC("xdp")
int handle_load(struct xdp_md *ctx)
{
	__u32 k = 0;
	volatile __u32 *m = bpf_map_lookup_elem(&outer, &k);

	return m && *m ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
