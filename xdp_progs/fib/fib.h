/* fib.h: the part of xdp_fwd and xdp_fib_probe that fills a struct bpf_fib_lookup from a frame, as the kernel's
 * samples/bpf/xdp_fwd_kern.c does (IPv4: tos, protocol, tot_len, addresses; IPv6: flow info, next header, payload
 * length, addresses), and the TTL / hop-limit decrement of a forwarded frame. */
#ifndef HXDP_FIB_H
#define HXDP_FIB_H

#include "../common.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif
#define IPV6_FLOWINFO_MASK bpf_htonl(0x0FFFFFFF)

/* The frame's L3 header in `p` (ifindex: the ingress); 0 = not IPv4/IPv6 or TTL/hop limit <= 1, -1 = truncated. */
static __always_inline int fib_params_of(struct xdp_md *ctx, struct bpf_fib_lookup *p)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return -1;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end)
			return -1;
		if (iph->ttl <= 1)
			return 0;
		p->family = AF_INET;
		p->tos = iph->tos;
		p->l4_protocol = iph->protocol;
		p->tot_len = bpf_ntohs(iph->tot_len);
		p->ipv4_src = iph->saddr;
		p->ipv4_dst = iph->daddr;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = (void *)(eth + 1);
		struct in6_addr *src = (struct in6_addr *)p->ipv6_src;
		struct in6_addr *dst = (struct in6_addr *)p->ipv6_dst;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		if (ip6h->hop_limit <= 1)
			return 0;
		p->family = AF_INET6;
		p->flowinfo = *(__be32 *)ip6h & IPV6_FLOWINFO_MASK;
		p->l4_protocol = ip6h->nexthdr;
		p->tot_len = bpf_ntohs(ip6h->payload_len);
		*src = ip6h->saddr;
		*dst = ip6h->daddr;
	} else {
		return 0;
	}
	p->ifindex = ctx->ingress_ifindex;
	return 1;
}

/* ip_decrease_ttl of include/net/ip.h */
static __always_inline void fib_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xFFFF));
	iph->ttl--;
}

#endif
