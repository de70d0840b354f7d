/* l4_load_balancer: a Katran-like L4 load balancer. TCP/UDP packets to a VIP (hash map vips keyed by address,
 * port and protocol; an entry with port 0 serves every port of the address) are sent to a backend: an existing
 * flow keeps its backend (LRU hash conn_table keyed by the 5-tuple); a new flow takes the backend of its slot in
 * the VIP's consistent-hashing ring (array ch_rings, RING_SIZE slots per VIP, Maglev-style, filled by the
 * control plane), the slot being a jhash of the 5-tuple. The packet is IPIP-encapsulated with
 * bpf_xdp_adjust_head (outer source from ctl, destination = backend address, fresh checksum; MACs: gateway MAC
 * from ctl, source = old destination MAC) and sent back (XDP_TX); per-VIP packets and bytes are counted in
 * stats (atomic adds). Non-VIP, non-IPv4, non-TCP/UDP traffic PASSes; IPv4 options, fragments and a ring slot
 * naming a missing backend DROP. Traffic: new and repeated TCP flows to VIP 0, UDP flows to VIP 1, UDP to the
 * any-port VIP 2, flows to VIP 3 whose ring names no backend, non-VIP/ICMP/IPv6/ARP, IP options, a fragment.
 * Maps: vips, ch_rings, reals, ctl.
 */
#include "common.h"
#include "jhash.h"

#define RING_SIZE 13
#define MAX_VIPS 4
#define MAX_REALS 16
#define IPPROTO_IPIP_ 4

struct vip_key {
	__be32 addr;
	__be16 port;
	__u8 proto;
	__u8 pad;
};

struct vip_meta {
	__u32 vip_num;
	__u32 flags;
};

struct flow_key {
	__be32 src;
	__be32 dst;
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 pad[3];
};

struct real_def {
	__be32 addr;
	__u32 flags;
};

struct lb_stats {
	__u64 packets;
	__u64 bytes;
};

struct ctl_value {
	__u8 gw_mac[6];
	__u16 pad;
	__be32 tunnel_src;
	__u32 pad2;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct vip_key);
	__type(value, struct vip_meta);
} vips SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_VIPS * RING_SIZE);
	__type(key, __u32);
	__type(value, __u32);
} ch_rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_REALS);
	__type(key, __u32);
	__type(value, struct real_def);
} reals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct flow_key);
	__type(value, __u32);
} conn_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_VIPS);
	__type(key, __u32);
	__type(value, struct lb_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctl_value);
} ctl SEC(".maps");

SEC("xdp")
int l4_load_balancer_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	struct udphdr *l4 = (void *)(iph + 1); /* TCP and UDP share the port fields */
	struct vip_key vk = {};
	struct flow_key fk = {};
	struct vip_meta *vip;
	struct real_def *real;
	struct lb_stats *st;
	struct ctl_value *cv;
	struct ethhdr *new_eth, *old_eth;
	__u8 gw_mac[ETH_ALEN], old_dst[ETH_ALEN];
	__u32 *rp, real_idx, pos, zero = 0, csum = 0, tunnel_src;
	__u16 payload_len, *p16;
	__u64 pkt_len = data_end - data;

	if ((void *)(iph + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	if (iph->ihl != 5 || (iph->frag_off & bpf_htons(0x3fff)))
		return XDP_DROP;
	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP)
		return XDP_PASS;
	if ((void *)(l4 + 1) > data_end)
		return XDP_DROP;

	vk.addr = iph->daddr;
	vk.port = l4->dest;
	vk.proto = iph->protocol;
	vip = bpf_map_lookup_elem(&vips, &vk);
	if (!vip) {
		vk.port = 0;
		vip = bpf_map_lookup_elem(&vips, &vk);
		if (!vip)
			return XDP_PASS;
	}

	st = bpf_map_lookup_elem(&stats, &vip->vip_num);
	if (st) {
		__sync_fetch_and_add(&st->packets, 1);
		__sync_fetch_and_add(&st->bytes, pkt_len);
	}

	fk.src = iph->saddr;
	fk.dst = iph->daddr;
	fk.sport = l4->source;
	fk.dport = l4->dest;
	fk.proto = iph->protocol;
	rp = bpf_map_lookup_elem(&conn_table, &fk);
	if (rp) {
		real_idx = *rp;
	} else {
		pos = jhash_3words(fk.src, ((__u32)fk.sport << 16) | fk.dport, fk.proto, fk.dst) % RING_SIZE;
		pos += vip->vip_num * RING_SIZE;
		rp = bpf_map_lookup_elem(&ch_rings, &pos);
		if (!rp)
			return XDP_DROP;
		real_idx = *rp;
		bpf_map_update_elem(&conn_table, &fk, &real_idx, BPF_ANY);
	}
	real = bpf_map_lookup_elem(&reals, &real_idx);
	if (!real)
		return XDP_DROP;
	cv = bpf_map_lookup_elem(&ctl, &zero);
	if (!cv)
		return XDP_DROP;
	__builtin_memcpy(gw_mac, cv->gw_mac, ETH_ALEN);
	__builtin_memcpy(old_dst, eth->h_dest, ETH_ALEN);
	tunnel_src = cv->tunnel_src;
	payload_len = bpf_ntohs(iph->tot_len);

	if (bpf_xdp_adjust_head(ctx, 0 - (int)sizeof(struct iphdr)))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	new_eth = data;
	iph = data + sizeof(*new_eth);
	old_eth = data + sizeof(*iph);
	if ((void *)(old_eth + 1) > data_end || (void *)(iph + 1) > data_end)
		return XDP_DROP;

	__builtin_memcpy(new_eth->h_dest, gw_mac, ETH_ALEN);
	__builtin_memcpy(new_eth->h_source, old_dst, ETH_ALEN);
	new_eth->h_proto = bpf_htons(ETH_P_IP);

	iph->version = 4;
	iph->ihl = 5;
	iph->tos = 0;
	iph->tot_len = bpf_htons(payload_len + sizeof(*iph));
	iph->id = 0;
	iph->frag_off = 0;
	iph->ttl = 64;
	iph->protocol = IPPROTO_IPIP_;
	iph->check = 0;
	iph->saddr = tunnel_src;
	iph->daddr = real->addr;
	p16 = (__u16 *)iph;
#pragma unroll
	for (int i = 0; i < (int)sizeof(*iph) >> 1; i++)
		csum += *p16++;
	iph->check = csum_fold(csum);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
