/* xdp_bytes_swap: a reflector in the manner of xdp-bench's tx mode, reading and writing the frame only through
 * bpf_xdp_load_bytes / bpf_xdp_store_bytes (no direct packet pointers): it copies the Ethernet header (and a VLAN tag)
 * and the IPv4 or IPv6 header with the UDP header behind it into stack structs, sends UDP back (XDP_TX) with the MAC
 * addresses swapped and written back, drops UDP to the discard port 9, and passes the rest. A frame too short for the
 * headers it announces (a snapped IPv6 frame) makes the helper return -EINVAL: it is counted and dropped.
 * Traffic: UDP over IPv4 and IPv6, with and without a VLAN tag, to port 9 and others; TCP; ARP; IPv6 frames cut
 * short. Maps: stats (array of four u64 counters: tx, discard, pass, short) starts at zero.
 */
#include "common.h"

#define EINVAL 22
#define DISCARD_PORT 9

enum { STAT_TX, STAT_DISCARD, STAT_PASS, STAT_SHORT, STAT_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct ip4_udp {
	struct iphdr ip;
	struct udphdr udp;
};

struct ip6_udp {
	struct ipv6hdr ip;
	struct udphdr udp;
};

static __always_inline int count(__u32 stat, int action)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &stat);

	if (n)
		__sync_fetch_and_add(n, 1);
	return action;
}

SEC("xdp")
int xdp_bytes_swap(struct xdp_md *ctx)
{
	struct ethhdr eth;
	struct vlan_hdr vlan;
	union {
		struct ip4_udp v4;
		struct ip6_udp v6;
	} l3;
	__u32 off = sizeof(eth);
	__u8 mac[ETH_ALEN];
	__u16 proto, dport;
	__u8 l4;
	long r;

	/* a frame holds at least 60 bytes (shorter ones are runts): these two never fail */
	bpf_xdp_load_bytes(ctx, 0, &eth, sizeof(eth));
	proto = eth.h_proto;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		bpf_xdp_load_bytes(ctx, off, &vlan, sizeof(vlan));
		proto = vlan.h_vlan_encapsulated_proto;
		off += sizeof(vlan);
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		r = bpf_xdp_load_bytes(ctx, off, &l3.v4, sizeof(l3.v4));
		l4 = l3.v4.ip.protocol;
		dport = l3.v4.udp.dest;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		r = bpf_xdp_load_bytes(ctx, off, &l3.v6, sizeof(l3.v6));
		l4 = l3.v6.ip.nexthdr;
		dport = l3.v6.udp.dest;
	} else {
		return count(STAT_PASS, XDP_PASS);
	}
	if (r == -EINVAL)
		return count(STAT_SHORT, XDP_DROP);
	if (l4 != IPPROTO_UDP)
		return count(STAT_PASS, XDP_PASS);
	if (dport == bpf_htons(DISCARD_PORT))
		return count(STAT_DISCARD, XDP_DROP);

	__builtin_memcpy(mac, eth.h_dest, ETH_ALEN);
	__builtin_memcpy(eth.h_dest, eth.h_source, ETH_ALEN);
	__builtin_memcpy(eth.h_source, mac, ETH_ALEN);
	if (bpf_xdp_store_bytes(ctx, 0, &eth, 2 * ETH_ALEN))
		return XDP_ABORTED;
	return count(STAT_TX, XDP_TX);
}

char _license[] SEC("license") = "GPL";
