/* xdp_flow_meter: meters UDP flows by destination port with a byte budget, the counters of a flow updated under the
 * bpf_spin_lock in its map value (as programs keep multi-field state consistent between CPUs): a frame that would
 * take a flow past its budget is dropped and counted. The first frame of a flow creates its entry.
 * Traffic: UDP to four ports, sizes growing until two flows exceed the budget; TCP and IPv6 pass. Maps: meters starts
 * empty.
 */
#include "common.h"

#define BUDGET_BYTES 2000

struct meter {
	struct bpf_spin_lock lock;
	__u32 packets;
	__u64 bytes;
	__u64 dropped;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u16);
	__type(value, struct meter);
} meters SEC(".maps");

SEC("xdp")
int xdp_flow_meter(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	struct udphdr *udp = (void *)(iph + 1);
	__u64 len = data_end - data;
	struct meter *m, fresh = {};
	int action = XDP_PASS;
	__u16 port;

	if ((void *)(udp + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || iph->ihl != 5 ||
	    iph->protocol != IPPROTO_UDP)
		return XDP_PASS;
	port = bpf_ntohs(udp->dest);
	m = bpf_map_lookup_elem(&meters, &port);
	if (!m) {
		bpf_map_update_elem(&meters, &port, &fresh, BPF_NOEXIST);
		m = bpf_map_lookup_elem(&meters, &port);
		if (!m)
			return XDP_ABORTED;
	}
	bpf_spin_lock(&m->lock);
	if (m->bytes + len > BUDGET_BYTES) {
		m->dropped += 1;
		action = XDP_DROP;
	} else {
		m->packets += 1;
		m->bytes += len;
	}
	bpf_spin_unlock(&m->lock);
	return action;
}

char _license[] SEC("license") = "GPL";
