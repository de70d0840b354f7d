// A store 64 bytes past an 8-byte map value: into the neighbour map (the kernel verifier refuses it).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} small SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 8);
} neighbour SEC(".maps");

SEC("xdp")
int overflow(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&small, &key);

	if (!v)
		return XDP_PASS;
	v[8] = 0xdead;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
