/* rxcnt.h: the part xdp1 and xdp2 share (as the Linux samples xdp1_kern.c / xdp2_kern.c do): parse Ethernet
 * (up to two VLAN tags) and IPv4/IPv6, and count packets per IP protocol (IPv4 protocol / IPv6 next header; 0
 * for anything else) in the per-CPU array rxcnt.
 */
#ifndef HXDP_RXCNT_H
#define HXDP_RXCNT_H

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

/* Counts the frame's IP protocol in rxcnt and returns it; -1 (nothing counted) when the Ethernet header is
 * incomplete. */
static __always_inline int count_ipproto(void *data, void *data_end)
{
	__u16 h_proto;
	__u64 nh_off;
	__u32 ipproto;
	__u64 *value;

	if (parse_eth(data, data_end, &h_proto, &nh_off))
		return -1;
	if (h_proto == bpf_htons(ETH_P_IP))
		ipproto = parse_ipv4(data, nh_off, data_end);
	else if (h_proto == bpf_htons(ETH_P_IPV6))
		ipproto = parse_ipv6(data, nh_off, data_end);
	else
		ipproto = 0;

	value = bpf_map_lookup_elem(&rxcnt, &ipproto);
	if (value)
		*value += 1;
	return ipproto;
}

#endif
