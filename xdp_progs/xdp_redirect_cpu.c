/* xdp_redirect_cpu: spreads flows over host CPUs by a hash of their 5-tuple, as the kernel samples' and xdp-tools'
 * xdp_redirect_cpu (its l4_hash program): cpu = cpus_available[hash % cpus_count], then
 * bpf_redirect_map(&cpu_map, cpu, XDP_PASS), so a CPU without a cpumap entry (qsize 0) leaves the frame to the
 * normal path (PASS). IPv4 and IPv6 (behind up to two VLAN tags) hash addresses, protocol and, for TCP and UDP, the
 * ports; other frames go to cpus_available[0]. rx_cnt counts frames per chosen CPU slot (index into cpus_available).
 * Traffic: mixed frames and several UDP/TCP flows. Maps: cpu_map[0] = cpu_map[1] = {qsize 192}, cpus_available =
 * {0, 1, 3}, cpus_count = 3 (CPU 3 has no entry: its flows PASS).
 * xdp_cpumap_prog (SEC("xdp/cpumap")) is the program a cpumap entry may carry: it runs on the host CPU after the
 * hand-over (hxdp compile and load say so and leave it to the host), dropping IPv4 frames with IP options there.
 */
#include "common.h"

#define MAX_CPUS 4

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, MAX_CPUS);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} cpu_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CPUS);
	__type(key, __u32);
	__type(value, __u32);
} cpus_available SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cpus_count SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CPUS);
	__type(key, __u32);
	__type(value, __u64);
} rx_cnt SEC(".maps");

static __always_inline __u32 mix(__u32 h, __u32 v)
{
	h ^= v;
	h *= 0x01000193;
	return h ^ (h >> 15);
}

static __always_inline __u32 ports_of(void *l4, void *data_end, __u8 proto)
{
	struct udphdr *udp = l4;

	if (proto != IPPROTO_UDP && proto != IPPROTO_TCP)
		return 0;
	if ((void *)(udp + 1) > data_end)
		return 0;
	return ((__u32)udp->source << 16) | udp->dest;
}

static __always_inline __u32 flow_hash(void *data, void *data_end)
{
	__u16 proto;
	__u64 off;
	__u32 h = 0x811c9dc5;

	if (parse_eth(data, data_end, &proto, &off) < 0)
		return 0;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = data + off;

		if ((void *)(iph + 1) > data_end)
			return 0;
		h = mix(h, iph->saddr);
		h = mix(h, iph->daddr);
		h = mix(h, iph->protocol);
		return mix(h, ports_of((void *)iph + iph->ihl * 4, data_end, iph->protocol));
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = data + off;

		if ((void *)(ip6h + 1) > data_end)
			return 0;
#pragma unroll
		for (int i = 0; i < 4; i++) {
			h = mix(h, ip6h->saddr.in6_u.u6_addr32[i]);
			h = mix(h, ip6h->daddr.in6_u.u6_addr32[i]);
		}
		h = mix(h, ip6h->nexthdr);
		return mix(h, ports_of(ip6h + 1, data_end, ip6h->nexthdr));
	}
	return 0;
}

SEC("xdp")
int xdp_redirect_cpu_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u32 key0 = 0, slot = 0, *count, *cpu;
	__u64 *cnt;
	__u32 hash = flow_hash(data, data_end);

	count = bpf_map_lookup_elem(&cpus_count, &key0);
	if (!count || *count == 0)
		return XDP_PASS;
	if (hash)
		slot = hash % *count;
	cpu = bpf_map_lookup_elem(&cpus_available, &slot);
	if (!cpu)
		return XDP_ABORTED;
	cnt = bpf_map_lookup_elem(&rx_cnt, &slot);
	if (cnt)
		*cnt += 1;
	return bpf_redirect_map(&cpu_map, *cpu, XDP_PASS);
}

SEC("xdp/cpumap")
int xdp_cpumap_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	return iph->ihl > 5 ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
