/* xdp_sized_counter: counts IPv4 packets and bytes per source address in a hash map its loader sizes (max_entries
 * is left 0 in the object, as the XDP tools leave it to bpf_map__set_max_entries), counting the packets of sources
 * that no longer fit in an array, and passes every frame. The object also holds a CPU map for a steering program
 * it does not carry, and a map that only user space reads: the NIC never places either.
 * Traffic: UDP/TCP from more sources than the map holds, repeated sources, IPv6 and ARP. Maps: src_stats sized to
 * 16 entries at load ("max_entries" in maps/xdp_sized_counter.json), empty; overflow starts at zero.
 */
#include "common.h"

struct src_counters {
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct src_counters);
} src_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} overflow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} steer_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} user_settings SEC(".maps");

SEC("xdp")
int xdp_sized_counter(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	struct src_counters *c, fresh;
	__u32 zero = 0;
	__u64 *full;
	__u32 src;

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	src = iph->saddr;
	c = bpf_map_lookup_elem(&src_stats, &src);
	if (c) {
		c->packets += 1;
		c->bytes += data_end - data;
		return XDP_PASS;
	}
	fresh.packets = 1;
	fresh.bytes = data_end - data;
	if (bpf_map_update_elem(&src_stats, &src, &fresh, BPF_NOEXIST) == 0)
		return XDP_PASS;
	full = bpf_map_lookup_elem(&overflow, &zero);
	if (full)
		*full += 1;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
