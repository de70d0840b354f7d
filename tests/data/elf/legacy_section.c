/* A program in a legacy section name (no xdp* section in the object). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("prog")
int legacy_name(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	if (data + 14 > data_end)
		return XDP_ABORTED;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
