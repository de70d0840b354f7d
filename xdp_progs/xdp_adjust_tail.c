/* xdp_adjust_tail: IPv4 frames longer than MAX_PCKT_SIZE bytes are answered with an ICMP "fragmentation needed"
 * (type 3 code 4, next-hop MTU MAX_PCKT_SIZE - 14): the frame is cut to its first ICMP_TOOBIG_SIZE bytes with
 * bpf_xdp_adjust_tail, 28 bytes of room are made in front with bpf_xdp_adjust_head, the Ethernet, IPv4 and ICMP
 * headers are rebuilt (MACs swapped, addresses swapped, checksums with bpf_csum_diff) and the reply is sent back
 * (XDP_TX); icmpcnt[0] counts the replies. Everything else PASSes. As samples/bpf/xdp_adjust_tail_kern.c.
 * Traffic: IPv4 frames above and below the limit (UDP/TCP/ICMP), IPv6 and ARP frames. Maps: icmpcnt starts zero.
 */
#include "common.h"

#define MAX_PCKT_SIZE 600
#define ICMP_TOOBIG_SIZE 98
#define ICMP_TOOBIG_PAYLOAD_SIZE 92
#define DEFAULT_TTL 64

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} icmpcnt SEC(".maps");

static __always_inline void count_icmp(void)
{
	__u32 key = 0;
	__u64 *icmp_count = bpf_map_lookup_elem(&icmpcnt, &key);

	if (icmp_count)
		__sync_fetch_and_add(icmp_count, 1);
}

static __always_inline void swap_mac(void *data, struct ethhdr *orig_eth)
{
	struct ethhdr *eth = data;

	__builtin_memcpy(eth->h_source, orig_eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, orig_eth->h_source, ETH_ALEN);
	eth->h_proto = orig_eth->h_proto;
}

static __always_inline __u16 csum_fold_helper(__u32 csum)
{
	csum = (csum & 0xffff) + (csum >> 16);
	return ~((csum & 0xffff) + (csum >> 16));
}

static __always_inline void ipv4_csum(void *data_start, int data_size, __u32 *csum)
{
	*csum = bpf_csum_diff(0, 0, data_start, data_size, *csum);
	*csum = csum_fold_helper(*csum);
}

static __always_inline int send_icmp4_too_big(struct xdp_md *xdp)
{
	int headroom = (int)sizeof(struct iphdr) + (int)sizeof(struct icmphdr);
	struct iphdr *iph, *orig_iph;
	struct icmphdr *icmp_hdr;
	struct ethhdr *orig_eth;
	void *data, *data_end;
	__u32 csum = 0;
	__u64 off = 0;

	if (bpf_xdp_adjust_head(xdp, 0 - headroom))
		return XDP_DROP;
	data = (void *)(long)xdp->data;
	data_end = (void *)(long)xdp->data_end;
	if (data + (ICMP_TOOBIG_SIZE + headroom) > data_end)
		return XDP_DROP;

	orig_eth = data + headroom;
	swap_mac(data, orig_eth);
	off += sizeof(struct ethhdr);
	iph = data + off;
	off += sizeof(struct iphdr);
	icmp_hdr = data + off;
	off += sizeof(struct icmphdr);
	orig_iph = data + off;
	icmp_hdr->type = ICMP_DEST_UNREACH;
	icmp_hdr->code = ICMP_FRAG_NEEDED;
	icmp_hdr->un.frag.__unused = 0;
	icmp_hdr->un.frag.mtu = bpf_htons(MAX_PCKT_SIZE - sizeof(struct ethhdr));
	icmp_hdr->checksum = 0;
	ipv4_csum(icmp_hdr, ICMP_TOOBIG_PAYLOAD_SIZE, &csum);
	icmp_hdr->checksum = csum;
	iph->ttl = DEFAULT_TTL;
	iph->daddr = orig_iph->saddr;
	iph->saddr = orig_iph->daddr;
	iph->version = 4;
	iph->ihl = 5;
	iph->protocol = IPPROTO_ICMP;
	iph->tos = 0;
	iph->id = 0;
	iph->frag_off = 0;
	iph->tot_len = bpf_htons(ICMP_TOOBIG_SIZE + headroom - sizeof(struct ethhdr));
	iph->check = 0;
	csum = 0;
	ipv4_csum(iph, sizeof(struct iphdr), &csum);
	iph->check = csum;
	count_icmp();
	return XDP_TX;
}

static __always_inline int handle_ipv4(struct xdp_md *xdp)
{
	void *data_end = (void *)(long)xdp->data_end;
	void *data = (void *)(long)xdp->data;
	int pckt_size = data_end - data;
	int offset;

	if (pckt_size > MAX_PCKT_SIZE) {
		offset = pckt_size - ICMP_TOOBIG_SIZE;
		if (bpf_xdp_adjust_tail(xdp, 0 - offset))
			return XDP_PASS;
		return send_icmp4_too_big(xdp);
	}
	return XDP_PASS;
}

SEC("xdp")
int xdp_adjust_tail_prog(struct xdp_md *xdp)
{
	void *data_end = (void *)(long)xdp->data_end;
	void *data = (void *)(long)xdp->data;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return handle_ipv4(xdp);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
