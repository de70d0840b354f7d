/* BTF-defined maps of several types, written both with __type() and with key_size/value_size. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct flow_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u8 proto;
};

struct lpm_v4 {
	__u32 prefixlen;
	__u32 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct flow_key);
	__type(value, __u64);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__uint(key_size, 4);
	__uint(value_size, 24);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} percpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 256);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm_v4);
	__type(value, __u32);
} routes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u32);
} ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 128);
	__type(key, __u64);
	__type(value, __u8[6]);
} macs SEC(".maps");

SEC("xdp")
int use_maps(struct xdp_md *ctx)
{
	struct flow_key fk = {.saddr = ctx->ingress_ifindex, .proto = 17};
	__u32 idx = 3;
	__u64 *v = bpf_map_lookup_elem(&flows, &fk);
	if (v)
		*v += 1;
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);
	if (c)
		*c += 2;
	__u64 *p = bpf_map_lookup_elem(&percpu, &idx);
	if (p)
		*p += 3;
	struct lpm_v4 lk = {.prefixlen = 32, .addr = ctx->rx_queue_index};
	__u32 *r = bpf_map_lookup_elem(&routes, &lk);
	__u64 mk = idx;
	if (bpf_map_lookup_elem(&macs, &mk))
		return XDP_DROP;
	if (r)
		return bpf_redirect_map(&ports, *r, 0);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
