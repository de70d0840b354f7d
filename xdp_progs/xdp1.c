/* xdp1: parses Ethernet (up to two VLAN tags, 802.1Q/802.1ad) and IPv4/IPv6, counts packets per IP protocol
 * (IPv4 protocol / IPv6 next header; 0 for anything else) in the per-CPU array rxcnt, and drops every packet.
 * As the Linux sample samples/bpf/xdp1_kern.c. Traffic: any Ethernet frames (UDP, TCP, ICMP, IPv6, VLAN, ARP);
 * every frame is DROPped. Maps: rxcnt starts empty (all zero).
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} rxcnt SEC(".maps");

static __always_inline int parse_ipv4(void *data, __u64 nh_off, void *data_end)
{
	struct iphdr *iph = data + nh_off;

	if ((void *)(iph + 1) > data_end)
		return 0;
	return iph->protocol;
}

static __always_inline int parse_ipv6(void *data, __u64 nh_off, void *data_end)
{
	struct ipv6hdr *ip6h = data + nh_off;

	if ((void *)(ip6h + 1) > data_end)
		return 0;
	return ip6h->nexthdr;
}

SEC("xdp")
int xdp1_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u16 h_proto;
	__u64 nh_off;
	__u32 ipproto;
	__u64 *value;

	if (parse_eth(data, data_end, &h_proto, &nh_off))
		return XDP_DROP;
	if (h_proto == bpf_htons(ETH_P_IP))
		ipproto = parse_ipv4(data, nh_off, data_end);
	else if (h_proto == bpf_htons(ETH_P_IPV6))
		ipproto = parse_ipv6(data, nh_off, data_end);
	else
		ipproto = 0;

	value = bpf_map_lookup_elem(&rxcnt, &ipproto);
	if (value)
		*value += 1;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
