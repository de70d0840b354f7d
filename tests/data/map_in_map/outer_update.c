/* A program that writes a slot of its ARRAY_OF_MAPS: the kernel verifier refuses it, the compiler too. */
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
int outer_update(struct xdp_md *ctx)
{
	__u32 k = 0, v = 1;

	return bpf_map_update_elem(&outer, &k, &v, BPF_ANY) ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
