// Board test program: per-source-address action from a hash map, per-action packet counters with atomics.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);   /* IPv4 source address, network order */
	__type(value, __u32); /* XDP action for packets from it */
	__uint(max_entries, 64);
} acl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 5);
} stats SEC(".maps");

SEC("xdp")
int acl_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	__u32 action = XDP_PASS;
	__u32 *act;
	__u64 *cnt;

	if ((void *)(ip + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	act = bpf_map_lookup_elem(&acl, &ip->saddr);
	if (act && *act <= XDP_TX)
		action = *act;
	cnt = bpf_map_lookup_elem(&stats, &action);
	if (cnt)
		__sync_fetch_and_add(cnt, 1);
	if (action == XDP_TX) {
		unsigned char tmp[ETH_ALEN];

		__builtin_memcpy(tmp, eth->h_dest, ETH_ALEN);
		__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
		__builtin_memcpy(eth->h_source, tmp, ETH_ALEN);
	}
	return action;
}

char _license[] SEC("license") = "GPL";
