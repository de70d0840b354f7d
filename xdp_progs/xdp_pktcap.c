/* xdp_pktcap: a packet capture in the shape of xdpdump: every frame goes to the host through a perf event array,
 * a small header (ifindex, rx queue, frame length, captured length, sequence number) followed by the first
 * CAPLEN bytes of the frame, appended by the helper itself (the length in the flags' BPF_F_CTXLEN bits), and
 * passes. A per-outcome counter keeps the helper's return codes.
 * Traffic: frames of 60 to 1514 bytes, IPv4, IPv6 and ARP. Maps: none to fill; the perf array is sized per CPU by
 * its loader (max_entries 0), the counters start at zero.
 */
#include "common.h"

#define CAPLEN 256

struct capture_hdr {
	__u32 ifindex;
	__u32 rx_queue;
	__u16 pkt_len;
	__u16 cap_len;
	__u32 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} capture SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} outcome SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sequence SEC(".maps");

SEC("xdp")
int xdp_pktcap(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct capture_hdr hdr;
	__u32 zero = 0, which;
	__u64 len = data_end - data, flags;
	__u32 *seq;
	__u64 *n;
	long ret;

	seq = bpf_map_lookup_elem(&sequence, &zero);
	if (!seq)
		return XDP_ABORTED;
	hdr.ifindex = ctx->ingress_ifindex;
	hdr.rx_queue = ctx->rx_queue_index;
	hdr.pkt_len = len;
	hdr.cap_len = len < CAPLEN ? len : CAPLEN;
	hdr.seq = *seq;
	*seq += 1;
	flags = ((__u64)hdr.cap_len << 32) | BPF_F_CURRENT_CPU;
	ret = bpf_perf_event_output(ctx, &capture, flags, &hdr, sizeof(hdr));
	which = ret != 0;
	n = bpf_map_lookup_elem(&outcome, &which);
	if (n)
		*n += 1;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
