/* xdp_fib_probe: every field bpf_fib_lookup reads and writes, for the FIB tests. Each IPv4/IPv6 frame is looked up
 * with the flags of cfg[0] (and, when cfg[0].ifindex is not 0, that ifindex instead of the ingress: the egress
 * device of a BPF_FIB_LOOKUP_OUTPUT lookup); the return code and the whole struct bpf_fib_lookup after the call go
 * to out[0], so a comparison of the maps compares every output field (ifindex, rt_metric, the gateway written into
 * ipv4_dst/ipv6_dst, smac, dmac, mtu_result, the VLAN fields). The frame PASSes unchanged.
 */
#include "fib.h"

struct probe_cfg {
	__u32 flags;
	__u32 ifindex;
	__u32 plen;  /* 0: sizeof(struct bpf_fib_lookup), else 63 (too short: -EINVAL) */
	__u32 pad;
};

struct probe_out {
	__s64 rc;
	struct bpf_fib_lookup params;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_cfg);
} cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_out);
} out SEC(".maps");

SEC("xdp")
int xdp_fib_probe_prog(struct xdp_md *ctx)
{
	struct bpf_fib_lookup p;
	struct probe_cfg *c;
	struct probe_out *o;
	__u32 key = 0;
	int ok;

	__builtin_memset(&p, 0, sizeof(p));
	ok = fib_params_of(ctx, &p);
	if (ok <= 0)
		return XDP_PASS;
	c = bpf_map_lookup_elem(&cfg, &key);
	o = bpf_map_lookup_elem(&out, &key);
	if (!c || !o)
		return XDP_ABORTED;
	if (c->ifindex)
		p.ifindex = c->ifindex;
	if (c->plen)
		o->rc = bpf_fib_lookup(ctx, &p, sizeof(p) - 1, c->flags);
	else
		o->rc = bpf_fib_lookup(ctx, &p, sizeof(p), c->flags);
	__builtin_memcpy(&o->params, &p, sizeof(p));
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
