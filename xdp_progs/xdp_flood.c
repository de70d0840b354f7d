/* xdp_flood: floods and mirrors frames to every port, as the kernel selftests' xdp_redirect_multi programs:
 * frames to a broadcast or multicast MAC (ARP requests, IPv6 neighbour discovery) go to every port of flood_ports
 * but the one they came in on (bpf_redirect_map with BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS, a devmap); IPv4
 * frames are mirrored to every port of mirror_ports, the ingress port included (BPF_F_BROADCAST alone, a
 * devmap_hash); IPv6 unicast frames go out the port of flood_ports[1] (a plain redirect_map, PASS without one);
 * everything else PASSes. flood_cnt counts the three cases. Traffic: mixed frames plus broadcast and multicast ones.
 * Maps: flood_ports = {0: 1, 1: 1}, mirror_ports = {7: 1} (the kernel comparison needs existing ifindexes: lo).
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u32);
} flood_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u32);
} mirror_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} flood_cnt SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *cnt = bpf_map_lookup_elem(&flood_cnt, &what);

	if (cnt)
		*cnt += 1;
}

SEC("xdp")
int xdp_flood_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_dest[0] & 1) {
		count(0);
		return bpf_redirect_map(&flood_ports, 0, BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		count(1);
		return bpf_redirect_map(&mirror_ports, 0, BPF_F_BROADCAST);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		count(2);
		return bpf_redirect_map(&flood_ports, 1, XDP_PASS);
	}
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
