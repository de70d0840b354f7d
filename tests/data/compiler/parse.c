// Header parsing with several bounds checks, zero-initialised key structs and a hash map (firewall-like).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct flow {
	__u32 saddr, daddr;
	__u16 sport, dport;
	__u8 proto, pad[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct flow);
	__type(value, __u64);
} flows SEC(".maps");

SEC("xdp")
int parse(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct udphdr *udp = (void *)ip + sizeof(*ip);
	struct flow f;
	__u64 one = 1, *cnt;

	__builtin_memset(&f, 0, sizeof(f));
	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	if ((void *)(ip + 1) > data_end)
		return XDP_DROP;
	if (ip->protocol != IPPROTO_UDP && ip->protocol != IPPROTO_TCP)
		return XDP_PASS;
	if ((void *)(udp + 1) > data_end)
		return XDP_DROP;
	f.saddr = ip->saddr;
	f.daddr = ip->daddr;
	f.sport = udp->source;
	f.dport = udp->dest;
	f.proto = ip->protocol;
	cnt = bpf_map_lookup_elem(&flows, &f);
	if (cnt) {
		*cnt += 1;
		return *cnt > 3 ? XDP_DROP : XDP_PASS;
	}
	bpf_map_update_elem(&flows, &f, &one, BPF_ANY);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
