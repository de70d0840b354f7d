// A loop whose exit depends on the packet's bytes only: nothing bounds it (the kernel verifier refuses it).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int unbounded_loop(struct xdp_md *ctx)
{
	volatile __u8 *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 n = 0;

	if ((void *)(data + 1) > end)
		return XDP_PASS;
	while (data[0] != 0x42)
		n = n * 3 + data[0];
	return n & 1 ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
