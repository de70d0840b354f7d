/* csum_diff_xN microbenchmark body: NCALLS chained bpf_csum_diff calls over the 20-byte IPv4 header (each call's
 * result is the next call's seed); the final sum is stored in result[0] and added to result[1] (u64), and the
 * packet is DROPped. Non-IPv4 frames PASS. Traffic: IPv4 frames (UDP/TCP/ICMP) and a few non-IPv4 ones.
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} result SEC(".maps");

SEC("xdp")
int csum_diff_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	__s64 csum = 0;
	__u32 key = 0;
	__u64 *value;

	if ((void *)(iph + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
#pragma unroll
	for (int i = 0; i < NCALLS; i++)
		csum = bpf_csum_diff(0, 0, (__be32 *)iph, sizeof(*iph), (__u32)csum);
	value = bpf_map_lookup_elem(&result, &key);
	if (value)
		*value = (__u64)csum;
	key = 1;
	value = bpf_map_lookup_elem(&result, &key);
	if (value)
		*value += (__u64)csum;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
