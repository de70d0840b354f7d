/* Refused by the kernel's verifier: a store 8 bytes past the end of an 8-byte array value. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

SEC("xdp")
int overflow(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&counters, &key);

	if (v)
		v[1] = 7;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
