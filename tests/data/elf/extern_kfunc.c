/* Calls a kfunc that reads host kernel state (conntrack lookup): the loader must refuse it and say why. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct nf_conn;
struct bpf_ct_opts;
extern struct nf_conn *bpf_xdp_ct_lookup(struct xdp_md *ctx, struct bpf_sock_tuple *tuple, __u32 tuple_size,
					  struct bpf_ct_opts *opts, __u32 opts_size) __ksym;

SEC("xdp")
int uses_kfunc(struct xdp_md *ctx)
{
	struct bpf_sock_tuple tuple = {};

	return bpf_xdp_ct_lookup(ctx, &tuple, sizeof(tuple.ipv4), 0, 0) ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
