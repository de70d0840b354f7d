/* xdp_router_ipv4: an IPv4 router. The destination address is looked up in the LPM trie routes (longest prefix);
 * the route gives the egress port and the next hop (0 = directly connected: the destination itself); the next
 * hop's MAC comes from the hash map neigh and the port's own MAC from the array port_mac. The frame gets the new
 * MACs, its TTL is decremented with an incremental checksum update, the port's counter in the per-CPU array
 * stats is incremented and the frame is redirected through the devmap tx_port (entry = port; a port without an
 * entry DROPs, the helper's fallback action). Frames that are not IPv4, have IP options, a TTL <= 1, no route
 * or no neighbour PASS to the kernel stack, as samples/bpf/xdp_router_ipv4_kern.c does.
 * Traffic: IPv4 frames to several prefixes (/16, /24, /32 routes, via gateways and direct), to an unknown
 * network, with TTL 1, to a gateway without neighbour entry, to a port without devmap entry; IPv6 and ARP.
 * Maps: routes, neigh, port_mac, tx_port (kernel configuration: every devmap entry is ifindex 1, lo).
 */
#include "common.h"

struct lpm_key {
	__u32 prefixlen;
	__be32 addr;
};

struct route {
	__u32 port;
	__be32 nexthop;
};

struct mac {
	__u8 addr[ETH_ALEN];
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 64);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm_key);
	__type(value, struct route);
} routes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __be32);
	__type(value, struct mac);
} neigh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct mac);
} port_mac SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* ip_decrease_ttl of include/net/ip.h */
static __always_inline void ip_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xFFFF));
	iph->ttl--;
}

SEC("xdp")
int xdp_router_ipv4_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	struct lpm_key key;
	struct route *rt;
	struct mac *dmac, *smac;
	__be32 nexthop;
	__u32 port;
	__u64 *cnt;

	if ((void *)(iph + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	if (iph->ihl != 5 || iph->ttl <= 1)
		return XDP_PASS;

	key.prefixlen = 32;
	key.addr = iph->daddr;
	rt = bpf_map_lookup_elem(&routes, &key);
	if (!rt)
		return XDP_PASS;
	port = rt->port;
	nexthop = rt->nexthop ? rt->nexthop : iph->daddr;
	dmac = bpf_map_lookup_elem(&neigh, &nexthop);
	if (!dmac)
		return XDP_PASS;
	smac = bpf_map_lookup_elem(&port_mac, &port);
	if (!smac)
		return XDP_PASS;

	__builtin_memcpy(eth->h_dest, dmac->addr, ETH_ALEN);
	__builtin_memcpy(eth->h_source, smac->addr, ETH_ALEN);
	ip_decrease_ttl(iph);
	cnt = bpf_map_lookup_elem(&stats, &port);
	if (cnt)
		*cnt += 1;
	return bpf_redirect_map(&tx_port, port, XDP_DROP);
}

char _license[] SEC("license") = "GPL";
