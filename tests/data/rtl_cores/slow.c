// Test program for the reorder stage of several cores: byte 0 of a frame is its loop count (a slow packet holds back
// the frames after it), byte 3 non-zero drops it; the others leave by XDP_TX.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int slow_prog(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 n, acc, i;

	if ((void *)(data + 64) > data_end)
		return XDP_ABORTED;
	n = data[0];
	acc = data[1];
	for (i = 0; i < n && i < 255; i++)
		acc = acc * 3 + i;
	data[2] = acc;
	return data[3] ? XDP_DROP : XDP_TX;
}

char _license[] SEC("license") = "GPL";
