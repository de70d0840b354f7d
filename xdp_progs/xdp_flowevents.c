/* xdp_flowevents: flow events to the host through a BPF ring buffer, in the shape of flow monitors: the first
 * packet of a TCP or UDP flow reserves a record, fills it and submits it when the flow table took the flow (and
 * discards it when the table is full); a TCP FIN or RST ends its flow with a copied record (bpf_ringbuf_output)
 * carrying the flow's counters. Every frame passes.
 * Traffic: UDP and TCP flows over IPv4, repeated packets, more flows than the table holds, FIN and RST, ARP.
 * Maps: none to fill (flows holds 8 flows; the ring is one page).
 */
#include "common.h"

struct flow_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
};

struct flow_stats {
	__u64 packets;
	__u64 bytes;
};

struct flow_event {
	struct flow_key key;
	__u16 pkt_len;
	__u8 kind; /* 1 new flow, 2 flow end */
	__u8 tcp_flags;
	__u32 pad;
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, struct flow_key);
	__type(value, struct flow_stats);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} flow_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps"); /* 0 new flows, 1 discarded, 2 ended, 3 ring full */

static __always_inline void count(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&counters, &which);

	if (n)
		*n += 1;
}

SEC("xdp")
int xdp_flowevents(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	struct flow_key key = {};
	struct flow_stats *st, fresh;
	struct flow_event *ev, end = {};
	__u64 len = data_end - data;
	__u8 tcp_flags = 0;
	__u16 *ports;

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || iph->ihl != 5)
		return XDP_PASS;
	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP)
		return XDP_PASS;
	ports = (void *)(iph + 1);
	if ((void *)(ports + 2) > data_end)
		return XDP_PASS;
	if (iph->protocol == IPPROTO_TCP) {
		struct tcphdr *th = (void *)(iph + 1);

		if ((void *)(th + 1) > data_end)
			return XDP_PASS;
		tcp_flags = ((__u8 *)th)[13];
	}
	key.saddr = iph->saddr;
	key.daddr = iph->daddr;
	key.sport = ports[0];
	key.dport = ports[1];
	key.proto = iph->protocol;

	st = bpf_map_lookup_elem(&flows, &key);
	if (st) {
		st->packets += 1;
		st->bytes += len;
		if (!(tcp_flags & 0x05)) /* neither FIN nor RST */
			return XDP_PASS;
		end.key = key;
		end.pkt_len = len;
		end.kind = 2;
		end.tcp_flags = tcp_flags;
		end.packets = st->packets;
		end.bytes = st->bytes;
		bpf_map_delete_elem(&flows, &key);
		if (bpf_ringbuf_output(&flow_ring, &end, sizeof(end), 0) == 0)
			count(2);
		else
			count(3);
		return XDP_PASS;
	}
	ev = bpf_ringbuf_reserve(&flow_ring, sizeof(*ev), 0);
	if (!ev) {
		count(3);
		return XDP_PASS;
	}
	ev->key = key;
	ev->pkt_len = len;
	ev->kind = 1;
	ev->tcp_flags = tcp_flags;
	ev->pad = 0;
	ev->packets = 1;
	ev->bytes = len;
	fresh.packets = 1;
	fresh.bytes = len;
	if (bpf_map_update_elem(&flows, &key, &fresh, BPF_NOEXIST) != 0) {
		bpf_ringbuf_discard(ev, 0);
		count(1);
		return XDP_PASS;
	}
	bpf_ringbuf_submit(ev, 0);
	count(0);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
