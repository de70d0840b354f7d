/* xdp_fwd: an IPv4 and IPv6 forwarder on the kernel's FIB, the shape of samples/bpf/xdp_fwd_kern.c and of
 * xdp-tools' xdp-forward. Every IPv4/IPv6 frame with a TTL (hop limit) above 1 is looked up with bpf_fib_lookup
 * (xdp_fwd_prog: the full lookup, xdp_fwd_direct_prog: BPF_FIB_LOOKUP_DIRECT, the main table only); on success
 * its TTL is decremented (IPv4 with an incremental checksum update), its MACs become the lookup's smac/dmac and it
 * is redirected to the egress ifindex; blackhole, unreachable and prohibit routes DROP; every other result
 * (no route, forwarding disabled, no neighbour, fragmentation needed) PASSes to the stack. The array fib_rc counts
 * the lookup's return codes (entry 15: a negative errno).
 * Runs against a FIB: `hxdp fib sync --netns NS -o fib.json`, then `hxdp diff ... --fib fib.json --ingress DEV`.
 */
#include "fib.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} fib_rc SEC(".maps");

static __always_inline int xdp_fwd_flags(struct xdp_md *ctx, __u32 flags)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct bpf_fib_lookup fib_params;
	struct ethhdr *eth = data;
	__u64 *count;
	__u32 key;
	long rc;
	int ok;

	__builtin_memset(&fib_params, 0, sizeof(fib_params));
	ok = fib_params_of(ctx, &fib_params);
	if (ok < 0)
		return XDP_DROP;
	if (ok == 0)
		return XDP_PASS;
	rc = bpf_fib_lookup(ctx, &fib_params, sizeof(fib_params), flags);
	key = rc < 0 ? 15 : (__u32)rc & 15;
	count = bpf_map_lookup_elem(&fib_rc, &key);
	if (count)
		*count += 1;
	if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
		if ((void *)(eth + 1) > data_end)
			return XDP_DROP;
		if (eth->h_proto == bpf_htons(ETH_P_IP)) {
			struct iphdr *iph = (void *)(eth + 1);

			if ((void *)(iph + 1) > data_end)
				return XDP_DROP;
			fib_decrease_ttl(iph);
		} else {
			struct ipv6hdr *ip6h = (void *)(eth + 1);

			if ((void *)(ip6h + 1) > data_end)
				return XDP_DROP;
			ip6h->hop_limit--;
		}
		__builtin_memcpy(eth->h_dest, fib_params.dmac, ETH_ALEN);
		__builtin_memcpy(eth->h_source, fib_params.smac, ETH_ALEN);
		return bpf_redirect(fib_params.ifindex, 0);
	}
	if (rc == BPF_FIB_LKUP_RET_BLACKHOLE || rc == BPF_FIB_LKUP_RET_UNREACHABLE || rc == BPF_FIB_LKUP_RET_PROHIBIT)
		return XDP_DROP;
	return XDP_PASS;
}

SEC("xdp")
int xdp_fwd_prog(struct xdp_md *ctx)
{
	return xdp_fwd_flags(ctx, 0);
}

SEC("xdp")
int xdp_fwd_direct_prog(struct xdp_md *ctx)
{
	return xdp_fwd_flags(ctx, BPF_FIB_LOOKUP_DIRECT);
}

char _license[] SEC("license") = "GPL";
