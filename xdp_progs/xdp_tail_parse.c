/* xdp_tail_parse: a packet parser split into tail-called stages, as the kernel's sockex3 and the XDP tail-call
 * samples split theirs: the entry program reads Ethernet (popping one VLAN tag with bpf_xdp_adjust_head, so the
 * stages see the frame as it is now) and tail-calls the L3 stage of `stages` indexed by the EtherType (0 IPv4,
 * 1 IPv6, 4..11 the others); the L3 stages tail-call the L4 stage indexed by 8 + the IP protocol (TCP 14, UDP 25).
 * The host fills the PROG_ARRAY with the stage programs; ICMP's entry (9) and the other EtherTypes' are left
 * empty and ICMPv6's (66) is past max_entries, so those calls fall through. Each stage counts its packets in `seen`; the L4 stages drop telnet (TCP 23) and the
 * discard port (UDP 9), the others pass.
 * Traffic: TCP/UDP over IPv4 and IPv6, tagged and untagged, ICMP, ICMPv6, ARP. Maps: stages set from the host
 * (maps/xdp_tail_parse.json names the programs), seen starts at zero.
 */
#include "common.h"

enum { ST_ETH, ST_IPV4, ST_IPV6, ST_TCP, ST_UDP, ST_FALLTHROUGH, ST_N };
enum { L3_IPV4 = 0, L3_IPV6 = 1, L3_N = 4, L4_BASE = 8 };

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 32);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} stages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ST_N);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

static __always_inline void count(__u32 stage)
{
	__u64 *n = bpf_map_lookup_elem(&seen, &stage);

	if (n)
		*n += 1;
}

/* Tail-call the stage for `index`; back here only when the call falls through (the verifier's view). */
static __always_inline int next_stage(struct xdp_md *ctx, __u32 index)
{
	bpf_tail_call(ctx, &stages, index);
	count(ST_FALLTHROUGH);
	return XDP_PASS;
}

SEC("xdp")
int xdp_tail_parse(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u32 index;
	__u16 proto;

	count(ST_ETH);
	if ((void *)(eth + 1) + sizeof(struct vlan_hdr) > data_end)
		return XDP_PASS;
	proto = eth->h_proto;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		struct vlan_hdr *vh = (void *)(eth + 1);
		struct ethhdr copy = *eth;

		proto = vh->h_vlan_encapsulated_proto;
		copy.h_proto = proto;
		/* the addresses move up over the tag, then the frame starts 4 bytes later */
		__builtin_memcpy((void *)eth + sizeof(struct vlan_hdr), &copy, sizeof(copy));
		if (bpf_xdp_adjust_head(ctx, (int)sizeof(struct vlan_hdr)))
			return XDP_ABORTED;
	}
	if (proto == bpf_htons(ETH_P_IP))
		index = L3_IPV4;
	else if (proto == bpf_htons(ETH_P_IPV6))
		index = L3_IPV6;
	else
		index = L3_N + bpf_ntohs(proto) % 8;  /* empty entries: falls through */
	return next_stage(ctx, index);
}

SEC("xdp")
int parse_ipv4(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct iphdr *iph = data + sizeof(struct ethhdr);

	count(ST_IPV4);
	if ((void *)(iph + 1) > data_end)
		return XDP_DROP;
	return next_stage(ctx, L4_BASE + iph->protocol);
}

SEC("xdp")
int parse_ipv6(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ipv6hdr *ip6h = data + sizeof(struct ethhdr);

	count(ST_IPV6);
	if ((void *)(ip6h + 1) > data_end)
		return XDP_DROP;
	return next_stage(ctx, L4_BASE + ip6h->nexthdr);
}

/* The L4 header's offset: the stages re-read the L3 header (a tail call keeps no registers). */
static __always_inline void *l4_header(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);

	if ((void *)(iph + 1) > data_end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return (void *)iph + iph->ihl * 4;
	return data + sizeof(*eth) + sizeof(struct ipv6hdr);
}

SEC("xdp")
int parse_tcp(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct tcphdr *th = l4_header(data, data_end);

	count(ST_TCP);
	if (!th || (void *)(th + 1) > data_end)
		return XDP_DROP;
	return th->dest == bpf_htons(23) ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int parse_udp(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct udphdr *uh = l4_header(data, data_end);

	count(ST_UDP);
	if (!uh || (void *)(uh + 1) > data_end)
		return XDP_DROP;
	return uh->dest == bpf_htons(9) ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
