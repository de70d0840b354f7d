// Loops the kernel verifier accepts: the loop check must let them through (a counter against a constant, against
// a packet byte, a pointer walking to data_end, a two-pass flag).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bounded_loops(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data;
	__u8 *end = (void *)(long)ctx->data_end;
	__u32 sum = 0, n;

	if (data + 64 > end)
		return XDP_PASS;
	#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < 16; i++)
		sum += data[i];
	n = data[3];
	#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < n; i++)
		sum ^= i * 7;
	#pragma clang loop unroll(disable)
	for (__u8 *p = data; p + 4 <= end && p < data + 256; p += 4)
		sum += *(__u32 *)p;
	return sum & 1 ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
