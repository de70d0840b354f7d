/* Global data: .data, .rodata, .bss, a static variable (section-relative relocation) and string constants. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

int packets = 100;
__u64 bytes_seen;
const volatile __u32 drop_port = 53;
static __u32 pad_a = 1, pad_b = 2, hidden = 0x1234;
const char greeting[] = "hxdp says hi";

SEC("xdp")
int globals(struct xdp_md *ctx)
{
	__u32 len = ctx->data_end - ctx->data;
	packets += 1;
	bytes_seen += len;
	hidden ^= len + pad_a + pad_b;
	if (len == drop_port)
		return XDP_DROP;
	if (len == 1)
		bpf_printk("len %u", len);
	return greeting[len & 7] == 'x' ? XDP_TX : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
