/* xdp_sock_steer: hands UDP frames to the AF_XDP socket bound to their rx queue, as xdp-tutorial's af_xdp kernel
 * program: if xsks_map has a socket for ctx->rx_queue_index (bpf_map_lookup_elem), bpf_redirect_map(&xsks_map,
 * rx_queue_index, XDP_PASS); every other frame, and every frame of a queue without a socket, PASSes. UDP frames to
 * port 9 (discard) are DROPped before the lookup. xsk_cnt counts frames handed to a socket, per queue.
 * Traffic: mixed frames and UDP flows. Maps: xsks_map[0] = queue 0 (the host tools bind a socket to queue 0).
 */
#include "common.h"

#define MAX_QUEUES 4

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u64);
} xsk_cnt SEC(".maps");

static __always_inline int udp_dport(void *data, void *data_end)
{
	__u16 proto;
	__u64 off;
	__u8 l4proto;
	void *l4;

	if (parse_eth(data, data_end, &proto, &off) < 0)
		return -1;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = data + off;

		if ((void *)(iph + 1) > data_end)
			return -1;
		l4proto = iph->protocol;
		l4 = (void *)iph + iph->ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = data + off;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		l4proto = ip6h->nexthdr;
		l4 = ip6h + 1;
	} else {
		return -1;
	}
	if (l4proto != IPPROTO_UDP)
		return -1;
	if (l4 + sizeof(struct udphdr) > data_end)
		return -1;
	return bpf_ntohs(((struct udphdr *)l4)->dest);
}

SEC("xdp")
int xdp_sock_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u32 index = ctx->rx_queue_index;
	int dport = udp_dport(data, data_end);
	__u64 *cnt;

	if (dport < 0)
		return XDP_PASS;
	if (dport == 9)
		return XDP_DROP;
	if (!bpf_map_lookup_elem(&xsks_map, &index))
		return XDP_PASS;
	cnt = bpf_map_lookup_elem(&xsk_cnt, &index);
	if (cnt)
		*cnt += 1;
	return bpf_redirect_map(&xsks_map, index, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
