/* simple_firewall: the hXDP paper's running example, a stateful firewall for bi-directional TCP/UDP flows.
 * The Ethernet, IPv4 and L4 headers are parsed into a 5-tuple key ordered symmetrically (the lower address and
 * its port first), so both directions of a flow map to the same entry of the hash map flows. A packet from the
 * internal side creates (or refreshes) its flow and is redirected to the external port; a packet from the
 * external side is redirected to the internal port when its flow exists and DROPped otherwise. Non-IPv4, IP
 * options, fragments and non-TCP/UDP packets are DROPped. The side is decided by the source address
 * (fw_config: internal network and mask) instead of the ingress port of the paper, so that one trace run on one
 * port exercises both sides; ports are devmap keys of tx_port (fw_config.internal_port / external_port).
 * Traffic: external packets of unknown flows, internal packets opening TCP and UDP flows, their external
 * replies, ICMP, ARP. Maps: fw_config (10.0.0.0/8 internal, ports 0 and 1), tx_port (both ifindex 1, lo).
 */
#include "common.h"

struct fw_config {
	__be32 internal_net;
	__be32 internal_mask;
	__u32 internal_port;
	__u32 external_port;
};

struct flow_key {
	__be32 ip1;
	__be32 ip2;
	__be16 port1;
	__be16 port2;
	__u8 proto;
	__u8 pad[3];
};

struct flow_leaf {
	__u32 in_port;
	__u32 out_port;
	__u64 packets;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fw_config);
} fw_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct flow_key);
	__type(value, struct flow_leaf);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

SEC("xdp")
int simple_firewall_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	struct udphdr *l4 = (void *)(iph + 1); /* TCP and UDP share the port fields */
	struct flow_key key = {};
	struct flow_leaf new_flow = {};
	struct flow_leaf *leaf;
	struct fw_config *cfg;
	__u32 zero = 0;

	if ((void *)(l4 + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_DROP;
	if (iph->ihl != 5 || (iph->frag_off & bpf_htons(0x3fff)))
		return XDP_DROP;
	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP)
		return XDP_DROP;
	cfg = bpf_map_lookup_elem(&fw_config, &zero);
	if (!cfg)
		return XDP_DROP;

	key.proto = iph->protocol;
	if (iph->saddr < iph->daddr || (iph->saddr == iph->daddr && l4->source <= l4->dest)) {
		key.ip1 = iph->saddr;
		key.ip2 = iph->daddr;
		key.port1 = l4->source;
		key.port2 = l4->dest;
	} else {
		key.ip1 = iph->daddr;
		key.ip2 = iph->saddr;
		key.port1 = l4->dest;
		key.port2 = l4->source;
	}

	if ((iph->saddr & cfg->internal_mask) == cfg->internal_net) {
		leaf = bpf_map_lookup_elem(&flows, &key);
		if (leaf) {
			leaf->packets++;
		} else {
			new_flow.in_port = cfg->internal_port;
			new_flow.out_port = cfg->external_port;
			new_flow.packets = 1;
			bpf_map_update_elem(&flows, &key, &new_flow, BPF_ANY);
		}
		return bpf_redirect_map(&tx_port, cfg->external_port, XDP_DROP);
	}
	leaf = bpf_map_lookup_elem(&flows, &key);
	if (!leaf)
		return XDP_DROP;
	leaf->packets++;
	return bpf_redirect_map(&tx_port, leaf->in_port, XDP_DROP);
}

char _license[] SEC("license") = "GPL";
