/* Shared helpers of the hXDP program suite: headers, packet parsing and checksums (header-only, static inline). */
#ifndef HXDP_COMMON_H
#define HXDP_COMMON_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/icmp.h>
#include <linux/udp.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#ifndef ETH_P_8021Q
#define ETH_P_8021Q 0x8100
#endif
#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif

struct vlan_hdr {
	__be16 h_vlan_TCI;
	__be16 h_vlan_encapsulated_proto;
};

/* Swap the Ethernet source and destination addresses in place, 16 bits at a time as the Linux samples do
 * (the frame start is 2-byte aligned; eth must be bounds-checked). */
static __always_inline void swap_src_dst_mac(void *data)
{
	__u16 *p = data;
	__u16 dst[3];

	dst[0] = p[0];
	dst[1] = p[1];
	dst[2] = p[2];
	p[0] = p[3];
	p[1] = p[4];
	p[2] = p[5];
	p[3] = dst[0];
	p[4] = dst[1];
	p[5] = dst[2];
}

/* Fold a 32-bit one's complement sum to 16 bits. */
static __always_inline __u16 csum_fold(__u32 csum)
{
	csum = (csum & 0xffff) + (csum >> 16);
	csum = (csum & 0xffff) + (csum >> 16);
	return (__u16)~csum;
}

/* Parse Ethernet and up to two VLAN tags; returns the L3 protocol (network order) and sets *l3off. */
static __always_inline int parse_eth(void *data, void *data_end, __u16 *proto, __u64 *l3off)
{
	struct ethhdr *eth = data;
	__u64 off = sizeof(*eth);
	__u16 p;

	if (data + off > data_end)
		return -1;
	p = eth->h_proto;
#pragma unroll
	for (int i = 0; i < 2; i++) {
		if (p == bpf_htons(ETH_P_8021Q) || p == bpf_htons(ETH_P_8021AD)) {
			struct vlan_hdr *vh = data + off;

			if ((void *)(vh + 1) > data_end)
				return -1;
			off += sizeof(*vh);
			p = vh->h_vlan_encapsulated_proto;
		}
	}
	*proto = p;
	*l3off = off;
	return 0;
}

#endif
