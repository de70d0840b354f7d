/* xdp_balancer: an L4 load balancer of our own with the shape of upstream Katran's balancer_ingress (none of its
 * code): IPv4 and IPv6 VIPs (hash vip_map keyed by address, port and protocol; port 0 serves every port), a
 * per-CPU connection table reached through a map of maps (lru_mapping, an ARRAY_OF_MAPS whose slot i holds CPU
 * i's LRU hash; fallback_cache when the slot is empty), a consistent-hash ring of over a million slots (ch_rings,
 * RING_SIZE slots for each of MAX_VIPS VIPs: off-chip map memory), reals marked down per VIP (down_reals, a
 * HASH_OF_MAPS keyed by the VIP number: a flow whose slot names a down real is rehashed once), QUIC connection ids
 * and a TCP option carrying a server id (server_id_map), ICMP echo replies and ICMP/ICMPv6 "too big" errors
 * steered to the real of the flow they quote, inline decapsulation of IPIP, IPv6-in-IPv6 and GUE sent to the
 * balancer's own address, and encapsulation to the chosen real: IPIP or GUE (UDP 6080) over IPv4, IPv4/IPv6 in
 * IPv6, per VIP and real flags. Per-VIP, per-real and global counters in per-CPU arrays (stats, reals_stats).
 * Traffic: new, repeated, reset and migrated flows over every path, hits and misses of every map.
 * Maps: vip_map, ch_rings, reals, ctl_array, server_id_map, down_reals (with its inner maps).
 */
#include <stdbool.h>
#include <linux/icmpv6.h>
#include "common.h"
#include "jhash.h"

#define RING_SIZE 257
#define MAX_VIPS 4099 /* ch_rings: 1,053,443 slots */
#define MAX_REALS 4096
#define MAX_CPUS 8
#define LRU_SIZE 1000
#define MAX_QUIC_REALS 1024
#define MAX_TCP_OPTS 8
#define GUE_PORT 6080
#define TPR_OPT_KIND 0xb7
#define HASH_SEED_RETRY 0x9e3779b9

/* global counters: stats[MAX_VIPS + n] */
#define CNT_VIP_MISS 0
#define CNT_LRU_MISS 1
#define CNT_CH_DROP 2
#define CNT_DOWN_RETRY 3
#define CNT_ICMP 4
#define CNT_DECAP 5
#define CNT_QUIC 6
#define CNT_TPR 7
#define CNT_FALLBACK_LRU 8
#define STATS_SIZE (MAX_VIPS + 16)

/* vip_meta.flags */
#define F_LRU_BYPASS (1 << 0)
#define F_QUIC_VIP (1 << 1)
#define F_GUE (1 << 2)
#define F_LOCAL (1 << 3)
#define F_HASH_NO_SRC_PORT (1 << 4)
/* real_definition.flags */
#define F_REAL_IPV6 (1 << 0)
/* packet flags */
#define P_SYN (1 << 0)
#define P_RST (1 << 1)
#define P_ICMP (1 << 2)

#define IPPROTO_IPIP_ 4
#define IPPROTO_IPV6_ 41
#define NEXTHDR_FRAG 44
#define ICMP_TOO_BIG_TYPE 3
#define ICMP_TOO_BIG_CODE 4
#define ICMP6_TOO_BIG 2
#define ICMP6_ECHO_REQ 128
#define ICMP6_ECHO_REP 129

struct flow_key {
	union {
		__be32 src;
		__be32 srcv6[4];
	};
	union {
		__be32 dst;
		__be32 dstv6[4];
	};
	union {
		__u32 ports;
		__be16 port16[2];
	};
	__u8 proto;
	__u8 pad[3];
};

struct vip_definition {
	union {
		__be32 vip;
		__be32 vipv6[4];
	};
	__be16 port;
	__u8 proto;
	__u8 pad;
};

struct vip_meta {
	__u32 flags;
	__u32 vip_num;
};

struct real_pos_lru {
	__u32 pos;
	__u32 hits;
};

struct real_definition {
	union {
		__be32 dst;
		__be32 dstv6[4];
	};
	__u8 flags;
	__u8 pad[3];
};

struct ctl_value {
	__u8 gw_mac[6];
	__u16 pad;
	__be32 src4;
	__be32 src6[4];
};

struct lb_stats {
	__u64 v1;
	__u64 v2;
};

struct packet {
	struct flow_key flow;
	__u32 real_index;
	__u32 flags;
	__u16 bytes;
	__u8 tos;
	__u8 pad;
	__u64 l4off;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 512);
	__type(key, struct vip_definition);
	__type(value, struct vip_meta);
} vip_map SEC(".maps");

/* before lru_mapping: clang's BTF of an inner-map template holds only a forward declaration of a struct that
 * no earlier map defined, and libbpf cannot size a forward declaration */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LRU_SIZE);
	__type(key, struct flow_key);
	__type(value, struct real_pos_lru);
} fallback_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_CPUS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_LRU_HASH);
		__uint(max_entries, LRU_SIZE);
		__type(key, struct flow_key);
		__type(value, struct real_pos_lru);
	});
} lru_mapping SEC(".maps");

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
	__type(value, struct real_definition);
} reals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 64);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_HASH);
		__uint(max_entries, 64);
		__type(key, __u32);
		__type(value, __u8);
	});
} down_reals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_QUIC_REALS);
	__type(key, __u32);
	__type(value, __u32);
} server_id_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctl_value);
} ctl_array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STATS_SIZE);
	__type(key, __u32);
	__type(value, struct lb_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_REALS);
	__type(key, __u32);
	__type(value, struct lb_stats);
} reals_stats SEC(".maps");

/* jhash2 of the 32-bit words of an IPv6 flow: addresses and ports (9 words) */
static __always_inline __u32 jhash_flow6(const struct flow_key *f, __u32 initval)
{
	__u32 a, b, c;

	a = b = c = JHASH_INITVAL + (9 << 2) + initval;
	a += f->srcv6[0]; b += f->srcv6[1]; c += f->srcv6[2];
	JHASH_MIX(a, b, c);
	a += f->srcv6[3]; b += f->dstv6[0]; c += f->dstv6[1];
	JHASH_MIX(a, b, c);
	a += f->dstv6[2]; b += f->dstv6[3]; c += f->ports;
	JHASH_FINAL(a, b, c);
	return c;
}

static __always_inline __u32 flow_hash(const struct flow_key *f, bool is_ipv6, __u32 vip_flags, __u32 seed)
{
	__u32 ports = f->ports;

	if (vip_flags & F_HASH_NO_SRC_PORT)
		ports &= 0xffff0000; /* port16[1], the destination port, is the high half on this little-endian target */
	if (is_ipv6) {
		struct flow_key g = *f;

		g.ports = ports;
		return jhash_flow6(&g, seed);
	}
	return jhash_3words(f->src, ports, f->proto, f->dst ^ seed);
}

static __always_inline void count(__u32 n, __u64 bytes)
{
	__u32 key = MAX_VIPS + n;
	struct lb_stats *st = bpf_map_lookup_elem(&stats, &key);

	if (st) {
		st->v1 += 1;
		st->v2 += bytes;
	}
}

static __always_inline __u16 ip_csum(struct iphdr *iph)
{
	__u16 *p16 = (__u16 *)iph;
	__u32 csum = 0;

#pragma unroll
	for (int i = 0; i < (int)sizeof(*iph) >> 1; i++)
		csum += p16[i];
	return csum_fold(csum);
}

/* Strip an IPIP, IPv6-in-IPv6 or GUE header addressed to the balancer (ctl src4/src6): 1 when one was removed,
 * 0 when the frame is not ours to decapsulate, -1 when it is malformed. */
static __always_inline int decap(struct xdp_md *ctx, struct ctl_value *cv)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ethhdr *neweth;
	__u16 inner_proto;
	int strip;

	if ((void *)(eth + 1) > data_end)
		return -1;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end)
			return -1;
		if (iph->daddr != cv->src4 || iph->ihl != 5)
			return 0;
		if (iph->protocol == IPPROTO_IPIP_) {
			strip = sizeof(*iph);
			inner_proto = bpf_htons(ETH_P_IP);
		} else if (iph->protocol == IPPROTO_IPV6_) {
			strip = sizeof(*iph);
			inner_proto = bpf_htons(ETH_P_IPV6);
		} else if (iph->protocol == IPPROTO_UDP) {
			struct udphdr *uh = (void *)(iph + 1);
			__u8 *ver;

			if ((void *)(uh + 1) + 1 > data_end)
				return -1;
			if (uh->dest != bpf_htons(GUE_PORT))
				return 0;
			ver = (void *)(uh + 1);
			strip = sizeof(*iph) + sizeof(*uh);
			inner_proto = (*ver >> 4) == 6 ? bpf_htons(ETH_P_IPV6) : bpf_htons(ETH_P_IP);
		} else {
			return 0;
		}
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = (void *)(eth + 1);

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		if (ip6h->daddr.in6_u.u6_addr32[0] != cv->src6[0] || ip6h->daddr.in6_u.u6_addr32[1] != cv->src6[1] ||
		    ip6h->daddr.in6_u.u6_addr32[2] != cv->src6[2] || ip6h->daddr.in6_u.u6_addr32[3] != cv->src6[3])
			return 0;
		if (ip6h->nexthdr == IPPROTO_IPIP_)
			inner_proto = bpf_htons(ETH_P_IP);
		else if (ip6h->nexthdr == IPPROTO_IPV6_)
			inner_proto = bpf_htons(ETH_P_IPV6);
		else
			return 0;
		strip = sizeof(*ip6h);
	} else {
		return 0;
	}
	/* the Ethernet header moves forward over the outer header */
	neweth = (void *)eth + strip;
	if ((void *)(neweth + 1) > data_end)
		return -1;
	__builtin_memcpy(neweth->h_dest, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(neweth->h_source, eth->h_source, ETH_ALEN);
	neweth->h_proto = inner_proto;
	if (bpf_xdp_adjust_head(ctx, strip))
		return -1;
	return 1;
}

/* Parse the L3 and L4 headers into pkt: -1 to go on balancing, else the action to return. */
static __always_inline int parse(struct xdp_md *ctx, bool is_ipv6, struct packet *pkt)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 off = sizeof(struct ethhdr);

	if (is_ipv6) {
		struct ipv6hdr *ip6h = data + off;

		if ((void *)(ip6h + 1) > data_end)
			return XDP_DROP;
		if (ip6h->nexthdr == NEXTHDR_FRAG)
			return XDP_DROP;
		pkt->flow.proto = ip6h->nexthdr;
		pkt->bytes = bpf_ntohs(ip6h->payload_len) + sizeof(*ip6h);
		pkt->tos = (ip6h->priority << 4) | (ip6h->flow_lbl[0] >> 4);
		__builtin_memcpy(pkt->flow.srcv6, ip6h->saddr.in6_u.u6_addr32, 16);
		__builtin_memcpy(pkt->flow.dstv6, ip6h->daddr.in6_u.u6_addr32, 16);
		off += sizeof(*ip6h);
	} else {
		struct iphdr *iph = data + off;

		if ((void *)(iph + 1) > data_end)
			return XDP_DROP;
		if (iph->ihl != 5 || (iph->frag_off & bpf_htons(0x3fff)))
			return XDP_DROP;
		pkt->flow.proto = iph->protocol;
		pkt->bytes = bpf_ntohs(iph->tot_len);
		pkt->tos = iph->tos;
		pkt->flow.src = iph->saddr;
		pkt->flow.dst = iph->daddr;
		off += sizeof(*iph);
	}
	pkt->l4off = off;
	if (pkt->flow.proto == IPPROTO_TCP) {
		struct tcphdr *th = data + off;

		if ((void *)(th + 1) > data_end)
			return XDP_DROP;
		if (th->syn)
			pkt->flags |= P_SYN;
		if (th->rst)
			pkt->flags |= P_RST;
		pkt->flow.port16[0] = th->source;
		pkt->flow.port16[1] = th->dest;
		return -1;
	}
	if (pkt->flow.proto == IPPROTO_UDP) {
		struct udphdr *uh = data + off;

		if ((void *)(uh + 1) > data_end)
			return XDP_DROP;
		pkt->flow.port16[0] = uh->source;
		pkt->flow.port16[1] = uh->dest;
		return -1;
	}
	return XDP_PASS;
}

static __always_inline struct vip_meta *find_vip(struct packet *pkt, bool is_ipv6)
{
	struct vip_definition vd = {};
	struct vip_meta *vip;

	if (is_ipv6)
		__builtin_memcpy(vd.vipv6, pkt->flow.dstv6, 16);
	else
		vd.vip = pkt->flow.dst;
	vd.port = pkt->flow.port16[1];
	vd.proto = pkt->flow.proto;
	vip = bpf_map_lookup_elem(&vip_map, &vd);
	if (!vip) {
		vd.port = 0;
		vip = bpf_map_lookup_elem(&vip_map, &vd);
	}
	return vip;
}

/* ICMP: an echo request to a VIP is answered (XDP_TX); a "too big" error quoting a flow to a VIP is balanced as
 * that flow (returns -1 with pkt filled from the quoted header); anything else passes. */
static __always_inline int icmp4(struct xdp_md *ctx, struct packet *pkt)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct iphdr *iph = data + sizeof(struct ethhdr);
	struct icmphdr *ih = data + pkt->l4off;
	struct iphdr *inner;
	struct udphdr *ul4;
	struct vip_definition vd = {};
	__u32 csum;

	if ((void *)(iph + 1) > data_end || (void *)(ih + 1) > data_end)
		return XDP_DROP;
	if (ih->type == ICMP_ECHO) {
		vd.vip = iph->daddr;
		vd.proto = IPPROTO_ICMP;
		if (!bpf_map_lookup_elem(&vip_map, &vd))
			return XDP_PASS;
		swap_src_dst_mac(data);
		iph->daddr = iph->saddr;
		iph->saddr = vd.vip;
		iph->ttl = 64;
		iph->check = 0;
		iph->check = ip_csum(iph);
		ih->type = ICMP_ECHOREPLY;
		csum = (__u16)~ih->checksum + (__u16)~bpf_htons(ICMP_ECHO << 8) + bpf_htons(ICMP_ECHOREPLY << 8);
		ih->checksum = csum_fold(csum);
		count(CNT_ICMP, pkt->bytes);
		return XDP_TX;
	}
	if (ih->type != ICMP_TOO_BIG_TYPE || ih->code != ICMP_TOO_BIG_CODE)
		return XDP_PASS;
	inner = (void *)(ih + 1);
	ul4 = (void *)(inner + 1);
	if ((void *)(ul4 + 1) > data_end)
		return XDP_DROP;
	if (inner->ihl != 5)
		return XDP_PASS;
	/* the quoted packet went from the VIP to the client: the flow is its reverse */
	pkt->flow.proto = inner->protocol;
	pkt->flow.src = inner->daddr;
	pkt->flow.dst = inner->saddr;
	pkt->flow.port16[0] = ul4->dest;
	pkt->flow.port16[1] = ul4->source;
	pkt->flags |= P_ICMP;
	count(CNT_ICMP, pkt->bytes);
	return -1;
}

static __always_inline int icmp6(struct xdp_md *ctx, struct packet *pkt)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6h = data + sizeof(struct ethhdr);
	struct icmp6hdr *ih = data + pkt->l4off;
	struct ipv6hdr *inner;
	struct udphdr *ul4;
	struct vip_definition vd = {};
	__u32 csum;

	if ((void *)(ip6h + 1) > data_end || (void *)(ih + 1) > data_end)
		return XDP_DROP;
	if (ih->icmp6_type == ICMP6_ECHO_REQ) {
		__builtin_memcpy(vd.vipv6, ip6h->daddr.in6_u.u6_addr32, 16);
		vd.proto = IPPROTO_ICMPV6;
		if (!bpf_map_lookup_elem(&vip_map, &vd))
			return XDP_PASS;
		swap_src_dst_mac(data);
		__builtin_memcpy(ip6h->daddr.in6_u.u6_addr32, ip6h->saddr.in6_u.u6_addr32, 16);
		__builtin_memcpy(ip6h->saddr.in6_u.u6_addr32, vd.vipv6, 16);
		ip6h->hop_limit = 64;
		ih->icmp6_type = ICMP6_ECHO_REP;
		/* the pseudo-header holds the same two addresses: only the type changes the checksum */
		csum = (__u16)~ih->icmp6_cksum + (__u16)~bpf_htons(ICMP6_ECHO_REQ << 8) + bpf_htons(ICMP6_ECHO_REP << 8);
		ih->icmp6_cksum = csum_fold(csum);
		count(CNT_ICMP, pkt->bytes);
		return XDP_TX;
	}
	if (ih->icmp6_type != ICMP6_TOO_BIG)
		return XDP_PASS;
	inner = (void *)(ih + 1);
	ul4 = (void *)(inner + 1);
	if ((void *)(ul4 + 1) > data_end)
		return XDP_DROP;
	pkt->flow.proto = inner->nexthdr;
	__builtin_memcpy(pkt->flow.srcv6, inner->daddr.in6_u.u6_addr32, 16);
	__builtin_memcpy(pkt->flow.dstv6, inner->saddr.in6_u.u6_addr32, 16);
	pkt->flow.port16[0] = ul4->dest;
	pkt->flow.port16[1] = ul4->source;
	pkt->flags |= P_ICMP;
	count(CNT_ICMP, pkt->bytes);
	return -1;
}

/* A QUIC packet names its server in the destination connection id (bytes 1..3 after the length on a long
 * header, right after the first byte on a short one): the real of that server id, or 0. */
static __always_inline __u32 quic_real(struct xdp_md *ctx, struct packet *pkt)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *q = data + pkt->l4off + sizeof(struct udphdr);
	__u32 sid, *real;

	if ((void *)(q + 10) > data_end)
		return 0;
	if (q[0] & 0x80) {
		/* long header: flags, version (4), dcid length, dcid */
		if (q[5] < 8)
			return 0;
		sid = (q[6] & 0x3f) << 16 | q[7] << 8 | q[8];
	} else {
		sid = (q[1] & 0x3f) << 16 | q[2] << 8 | q[3];
	}
	if (!sid || sid >= MAX_QUIC_REALS)
		return 0;
	real = bpf_map_lookup_elem(&server_id_map, &sid);
	if (!real || !*real)
		return 0;
	count(CNT_QUIC, pkt->bytes);
	return *real;
}

/* A TCP segment of an established flow may carry its server id in an option of kind TPR_OPT_KIND (length 6). */
static __always_inline __u32 tcp_option_real(struct xdp_md *ctx, struct packet *pkt)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct tcphdr *th = data + pkt->l4off;
	__u8 *opt;
	__u32 sid = 0, *real;
	__u64 hdr_end, off;

	if ((void *)(th + 1) > data_end)
		return 0;
	hdr_end = pkt->l4off + th->doff * 4;
	off = pkt->l4off + sizeof(*th);
#pragma unroll
	for (int i = 0; i < MAX_TCP_OPTS; i++) {
		if (off >= hdr_end || off > 1500)
			break;
		opt = data + off;
		if ((void *)(opt + 1) > data_end)
			break;
		if (opt[0] == 0)
			break;
		if (opt[0] == 1) {
			off += 1;
			continue;
		}
		if ((void *)(opt + 2) > data_end)
			break;
		if (opt[0] == TPR_OPT_KIND && opt[1] == 6) {
			if ((void *)(opt + 6) > data_end)
				break;
			sid = opt[2] << 24 | opt[3] << 16 | opt[4] << 8 | opt[5];
			break;
		}
		if (opt[1] < 2)
			break;
		off += opt[1];
	}
	if (!sid || sid >= MAX_QUIC_REALS)
		return 0;
	real = bpf_map_lookup_elem(&server_id_map, &sid);
	if (!real || !*real)
		return 0;
	count(CNT_TPR, pkt->bytes);
	return *real;
}

static __always_inline int real_is_down(__u32 vip_num, __u32 real)
{
	void *set = bpf_map_lookup_elem(&down_reals, &vip_num);

	return set && bpf_map_lookup_elem(set, &real);
}

/* The real of a new flow: its slot in the VIP's ring, rehashed once when that real is marked down; 0 for none. */
static __always_inline __u32 ring_real(struct packet *pkt, struct vip_meta *vip, bool is_ipv6)
{
	__u32 key, *slot, real;

	key = vip->vip_num * RING_SIZE + flow_hash(&pkt->flow, is_ipv6, vip->flags, 0) % RING_SIZE;
	slot = bpf_map_lookup_elem(&ch_rings, &key);
	if (!slot)
		return 0;
	real = *slot;
	if (real && real_is_down(vip->vip_num, real)) {
		count(CNT_DOWN_RETRY, pkt->bytes);
		key = vip->vip_num * RING_SIZE + flow_hash(&pkt->flow, is_ipv6, vip->flags, HASH_SEED_RETRY) % RING_SIZE;
		slot = bpf_map_lookup_elem(&ch_rings, &key);
		if (!slot)
			return 0;
		real = *slot;
		if (real && real_is_down(vip->vip_num, real))
			return 0;
	}
	return real;
}

/* Prepend an outer IPv4 header (and a GUE UDP header) for the real; the Ethernet header goes to the gateway. */
static __always_inline int encap4(struct xdp_md *ctx, struct packet *pkt, struct real_definition *real,
				  struct ctl_value *cv, bool inner_ipv6, bool gue)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u8 old_dst[ETH_ALEN];
	struct iphdr *iph;
	struct udphdr *uh;
	int hdr = sizeof(struct iphdr) + (gue ? sizeof(struct udphdr) : 0);
	__be32 daddr = real->dst;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(old_dst, eth->h_dest, ETH_ALEN);
	if (bpf_xdp_adjust_head(ctx, 0 - hdr))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	iph = (void *)(eth + 1);
	uh = (void *)(iph + 1);
	if ((void *)(uh + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(eth->h_dest, cv->gw_mac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, old_dst, ETH_ALEN);
	eth->h_proto = bpf_htons(ETH_P_IP);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = pkt->tos;
	iph->tot_len = bpf_htons(pkt->bytes + hdr);
	iph->id = 0;
	iph->frag_off = 0;
	iph->ttl = 64;
	iph->protocol = gue ? IPPROTO_UDP : (inner_ipv6 ? IPPROTO_IPV6_ : IPPROTO_IPIP_);
	iph->saddr = cv->src4;
	iph->daddr = daddr;
	iph->check = 0;
	iph->check = ip_csum(iph);
	if (gue) {
		/* the source port spreads the flows of a real over its receive queues */
		uh->source = bpf_htons(0x8000 | (flow_hash(&pkt->flow, inner_ipv6, 0, 0) & 0x7fff));
		uh->dest = bpf_htons(GUE_PORT);
		uh->len = bpf_htons(pkt->bytes + sizeof(*uh));
		uh->check = 0;
	}
	return XDP_TX;
}

/* Prepend an outer IPv6 header for the real (IPv4 or IPv6 inside). */
static __always_inline int encap6(struct xdp_md *ctx, struct packet *pkt, struct real_definition *real,
				  struct ctl_value *cv, bool inner_ipv6)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u8 old_dst[ETH_ALEN];
	struct ipv6hdr *ip6h;
	__be32 daddr[4];

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(old_dst, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(daddr, real->dstv6, 16);
	if (bpf_xdp_adjust_head(ctx, 0 - (int)sizeof(struct ipv6hdr)))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	ip6h = (void *)(eth + 1);
	if ((void *)(ip6h + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(eth->h_dest, cv->gw_mac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, old_dst, ETH_ALEN);
	eth->h_proto = bpf_htons(ETH_P_IPV6);
	ip6h->version = 6;
	ip6h->priority = pkt->tos >> 4;
	ip6h->flow_lbl[0] = (pkt->tos & 0xf) << 4;
	ip6h->flow_lbl[1] = 0;
	ip6h->flow_lbl[2] = 0;
	ip6h->payload_len = bpf_htons(pkt->bytes);
	ip6h->nexthdr = inner_ipv6 ? IPPROTO_IPV6_ : IPPROTO_IPIP_;
	ip6h->hop_limit = 64;
	__builtin_memcpy(ip6h->saddr.in6_u.u6_addr32, cv->src6, 16);
	__builtin_memcpy(ip6h->daddr.in6_u.u6_addr32, daddr, 16);
	return XDP_TX;
}

static __always_inline int balance(struct xdp_md *ctx, bool is_ipv6, struct ctl_value *cv)
{
	struct packet pkt = {};
	struct vip_meta *vip;
	struct real_definition *real;
	struct real_pos_lru *hit, fresh = {};
	struct lb_stats *st;
	void *lru;
	__u32 cpu, real_idx = 0, vip_num, vip_flags;
	int action;

	action = parse(ctx, is_ipv6, &pkt);
	if (action == XDP_PASS && pkt.flow.proto == (is_ipv6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP))
		action = is_ipv6 ? icmp6(ctx, &pkt) : icmp4(ctx, &pkt);
	if (action >= 0)
		return action;

	vip = find_vip(&pkt, is_ipv6);
	if (!vip) {
		count(CNT_VIP_MISS, pkt.bytes);
		return XDP_PASS;
	}
	vip_num = vip->vip_num;
	vip_flags = vip->flags;
	if (vip_flags & F_LOCAL)
		return XDP_PASS;
	if (vip_num >= MAX_VIPS)
		return XDP_DROP;
	st = bpf_map_lookup_elem(&stats, &vip_num);
	if (st) {
		st->v1 += 1;
		st->v2 += pkt.bytes;
	}

	if (pkt.flow.proto == IPPROTO_UDP && (vip_flags & F_QUIC_VIP) && !(pkt.flags & P_ICMP))
		real_idx = quic_real(ctx, &pkt);
	else if (pkt.flow.proto == IPPROTO_TCP && !(pkt.flags & (P_SYN | P_ICMP)))
		real_idx = tcp_option_real(ctx, &pkt);

	cpu = bpf_get_smp_processor_id();
	lru = bpf_map_lookup_elem(&lru_mapping, &cpu);
	if (!lru) {
		lru = &fallback_cache;
		count(CNT_FALLBACK_LRU, pkt.bytes);
	}
	if (!real_idx && !(vip_flags & F_LRU_BYPASS) && !(pkt.flags & P_SYN)) {
		hit = bpf_map_lookup_elem(lru, &pkt.flow);
		if (hit) {
			real_idx = hit->pos;
			hit->hits += 1;
		} else if (pkt.flow.proto == IPPROTO_TCP) {
			count(CNT_LRU_MISS, pkt.bytes);
		}
	}
	if (!real_idx) {
		struct vip_meta v = { .flags = vip_flags, .vip_num = vip_num };

		real_idx = ring_real(&pkt, &v, is_ipv6);
		if (!real_idx) {
			count(CNT_CH_DROP, pkt.bytes);
			return XDP_DROP;
		}
		if (!(vip_flags & F_LRU_BYPASS) && !(pkt.flags & (P_RST | P_ICMP))) {
			fresh.pos = real_idx;
			bpf_map_update_elem(lru, &pkt.flow, &fresh, BPF_ANY);
		}
	}
	real = bpf_map_lookup_elem(&reals, &real_idx);
	if (!real)
		return XDP_DROP;
	st = bpf_map_lookup_elem(&reals_stats, &real_idx);
	if (st) {
		st->v1 += 1;
		st->v2 += pkt.bytes;
	}
	if (real->flags & F_REAL_IPV6)
		return encap6(ctx, &pkt, real, cv, is_ipv6);
	return encap4(ctx, &pkt, real, cv, is_ipv6, vip_flags & F_GUE);
}

SEC("xdp")
int xdp_balancer_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ctl_value *cv;
	__u32 zero = 0;
	int r;

	cv = bpf_map_lookup_elem(&ctl_array, &zero);
	if (!cv)
		return XDP_DROP;
	r = decap(ctx, cv);
	if (r < 0)
		return XDP_DROP;
	if (r > 0)
		count(CNT_DECAP, 0);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return balance(ctx, false, cv);
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return balance(ctx, true, cv);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
