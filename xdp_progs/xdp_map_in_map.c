/* xdp_map_in_map: maps of maps, in the shape of Katran: an ARRAY_OF_MAPS indexed by the CPU holds each CPU's LRU
 * of connections (its slot 0 set statically, as the NIC has CPU 0 only), and a HASH_OF_MAPS keyed by the virtual IP
 * holds the VIP's backends (an ARRAY per VIP, created and set by the loader). A TCP/UDP packet to a VIP with backends is sent back
 * (XDP_TX) to the backend its connection maps to: the backend a new connection gets is remembered in the CPU's LRU,
 * so later packets of the connection reuse it. Other packets pass. */
#include "common.h"

#define BACKENDS 4

struct flow_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
};

struct vip_key {
	__u32 addr;
	__u16 port;
	__u8 proto;
	__u8 pad;
};

/* the template of the per-CPU connection tables (flow -> backend index) */
struct conn_lru {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct flow_key);
	__type(value, __u32);
	__uint(max_entries, 64);
};

/* the template of a VIP's backends (index -> IPv4 address, network order; 0: none) */
struct vip_backends {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, BACKENDS);
};

struct conn_lru conns_cpu0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, __u32);
	__array(values, struct conn_lru);
} lru_mapping SEC(".maps") = {
	.values = { [0] = &conns_cpu0 },
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 8);
	__type(key, struct vip_key);
	__array(values, struct vip_backends);
} vip_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} mim_stats SEC(".maps");

enum { ST_NO_VIP = 1, ST_NEW_CONN, ST_REUSED };

static __always_inline void count(__u32 what)
{
	__u64 *c = bpf_map_lookup_elem(&mim_stats, &what);

	if (c)
		*c += 1;
}

/* Replace the IPv4 destination, the header checksum updated incrementally (RFC 1624). */
static __always_inline void set_daddr(struct iphdr *iph, __u32 daddr)
{
	__u32 sum = (~iph->check & 0xffff);

	sum += (~iph->daddr & 0xffff) + (~iph->daddr >> 16);
	sum += (daddr & 0xffff) + (daddr >> 16);
	iph->daddr = daddr;
	iph->check = csum_fold(sum);
}

SEC("xdp")
int xdp_map_in_map(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	struct flow_key flow = {};
	struct vip_key vip = {};
	__u32 cpu, idx, *backend, *known;
	void *lru, *backends;

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || iph->ihl != 5)
		return XDP_PASS;
	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP)
		return XDP_PASS;
	/* TCP and UDP both start with the two ports */
	__u16 *ports = (void *)(iph + 1);

	if ((void *)(ports + 2) > data_end)
		return XDP_PASS;
	vip.addr = iph->daddr;
	vip.port = ports[1];
	vip.proto = iph->protocol;
	backends = bpf_map_lookup_elem(&vip_map, &vip);
	if (!backends) {
		count(ST_NO_VIP);
		return XDP_PASS;
	}
	cpu = bpf_get_smp_processor_id();
	lru = bpf_map_lookup_elem(&lru_mapping, &cpu);
	if (!lru) /* a CPU without its LRU: the NIC's one CPU has it (slot 0) */
		return XDP_PASS;
	flow.saddr = iph->saddr;
	flow.daddr = iph->daddr;
	flow.sport = ports[0];
	flow.dport = ports[1];
	flow.proto = iph->protocol;
	known = bpf_map_lookup_elem(lru, &flow);
	if (known) {
		idx = *known;
		count(ST_REUSED);
	} else {
		idx = (bpf_ntohl(iph->saddr) ^ bpf_ntohs(ports[0])) % BACKENDS;
		bpf_map_update_elem(lru, &flow, &idx, BPF_ANY);
		count(ST_NEW_CONN);
	}
	backend = bpf_map_lookup_elem(backends, &idx);
	if (!backend || !*backend)
		return XDP_DROP;
	set_daddr(iph, *backend);
	swap_src_dst_mac(data);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
