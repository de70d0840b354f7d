// A store into the context (struct xdp_md is read-only to an XDP program).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int ctx_store(struct xdp_md *ctx)
{
	ctx->data = ctx->data + 14;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
