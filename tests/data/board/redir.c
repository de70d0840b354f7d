// Board test program: redirect every frame to the other port (ifindex 1 <-> 2).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int redir(struct xdp_md *ctx)
{
	return bpf_redirect(ctx->ingress_ifindex == 1 ? 2 : 1, 0);
}

char _license[] SEC("license") = "GPL";
