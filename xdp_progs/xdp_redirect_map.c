/* xdp_redirect_map: swaps the MAC addresses and redirects every frame through entry 0 of the devmap tx_port
 * (bpf_redirect_map), counting packets in the per-CPU array rxcnt, as samples/bpf/xdp_redirect_map_kern.c.
 * Without a devmap entry the packet is DROPped (the helper's fallback action). Traffic: any Ethernet frames.
 * Maps: tx_port[0] = egress ifindex (1, lo, in the kernel configuration: the entry must name an existing device).
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rxcnt SEC(".maps");

SEC("xdp")
int xdp_redirect_map_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u32 key = 0;
	__u64 *value;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	value = bpf_map_lookup_elem(&rxcnt, &key);
	if (value)
		*value += 1;
	swap_src_dst_mac(data);
	return bpf_redirect_map(&tx_port, 0, XDP_DROP);
}

char _license[] SEC("license") = "GPL";
