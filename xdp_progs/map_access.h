/* map_access_kN microbenchmark body: KEY_SIZE bytes of the IPv4 header starting at the source address (src, dst,
 * ports, UDP length and checksum for 16) are the key of the hash map table (value: u64 hit counter). A hit counts
 * and DROPs the packet, a miss PASSes it; non-IPv4 frames PASS. Traffic: IPv4/UDP frames, some of whose keys are
 * in maps/map_access_kN.json.
 */
#include "common.h"

struct key_t {
	__u8 b[KEY_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct key_t);
	__type(value, __u64);
} table SEC(".maps");

SEC("xdp")
int map_access_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	struct key_t key;
	__u64 *value;

	if ((void *)(iph + 1) + 8 > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	__builtin_memcpy(&key, &iph->saddr, KEY_SIZE);
	value = bpf_map_lookup_elem(&table, &key);
	if (!value)
		return XDP_PASS;
	*value += 1;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
