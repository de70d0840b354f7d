// Board test program: per-CPU maps (the board has one CPU): a per-CPU array of packet and byte counts and a
// per-CPU hash keyed by IPv4 protocol.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 2);
} pcount SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 8);
} perproto SEC(".maps");

SEC("xdp")
int pcpu_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct iphdr *ip = data + sizeof(struct ethhdr);
	__u32 k0 = 0, k1 = 1, proto;
	__u64 one = 1, *v;

	v = bpf_map_lookup_elem(&pcount, &k0);
	if (v)
		*v += 1;
	v = bpf_map_lookup_elem(&pcount, &k1);
	if (v)
		*v += data_end - data;
	if ((void *)(ip + 1) > data_end)
		return XDP_PASS;
	proto = ip->protocol;
	v = bpf_map_lookup_elem(&perproto, &proto);
	if (v)
		*v += 1;
	else
		bpf_map_update_elem(&perproto, &proto, &one, BPF_NOEXIST);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
