/* xdp_rxq_info: per-CPU and per-RX-queue packet counters, action chosen by configuration, as
 * samples/bpf/xdp_rxq_info_kern.c. config[0] = {action, ifindex, options} (all zero until configured: ABORTED).
 * stats_global (per-CPU) counts processed packets and packets whose ingress ifindex differs from config.ifindex
 * ("issue"); rxq_stats (shared array, atomic adds) does the same per rx_queue_index, queues >= MAX_RXQ sharing the
 * last slot. Option bits: 1 = swap MACs (for TX), 2 = read a packet byte (touch data; frames shorter than 14 bytes
 * are then DROPped). The packet then leaves with config.action (DROP or TX).
 * Traffic: any Ethernet frames. Maps: config (the committed configuration: TX with MAC swap, ifindex 1).
 */
#include "common.h"

#define MAX_RXQ 64
#define OPT_SWAP_MAC 1
#define OPT_READ_MEM 2

struct config {
	__u32 action;
	__u32 ifindex;
	__u32 options;
};

struct datarec {
	__u64 processed;
	__u64 issue;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct datarec);
} stats_global SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_RXQ + 1);
	__type(key, __u32);
	__type(value, struct datarec);
} rxq_stats SEC(".maps");

SEC("xdp")
int xdp_rxq_info_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u32 key = 0, qkey = ctx->rx_queue_index;
	struct datarec *rec, *rxq_rec;
	struct config *cfg;

	cfg = bpf_map_lookup_elem(&config, &key);
	if (!cfg)
		return XDP_ABORTED;

	rec = bpf_map_lookup_elem(&stats_global, &key);
	if (!rec)
		return XDP_ABORTED;
	rec->processed++;
	if (ctx->ingress_ifindex != cfg->ifindex)
		rec->issue++;

	if (qkey >= MAX_RXQ)
		qkey = MAX_RXQ;
	rxq_rec = bpf_map_lookup_elem(&rxq_stats, &qkey);
	if (!rxq_rec)
		return XDP_ABORTED;
	__sync_fetch_and_add(&rxq_rec->processed, 1);
	if (ctx->rx_queue_index >= MAX_RXQ)
		__sync_fetch_and_add(&rxq_rec->issue, 1);

	if (cfg->options & (OPT_SWAP_MAC | OPT_READ_MEM)) {
		if (data + sizeof(struct ethhdr) > data_end)
			return XDP_DROP;
		if (cfg->options & OPT_SWAP_MAC)
			swap_src_dst_mac(data);
	}
	return cfg->action;
}

char _license[] SEC("license") = "GPL";
