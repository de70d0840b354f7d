/* String literals: clang puts them in the mergeable section .rodata.str1.1 (its own global data map). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int strings(struct xdp_md *ctx)
{
	const char *s = ctx->rx_queue_index ? "queue one" : "queue zero";
	char buf[8];

	__builtin_memcpy(buf, "abcdefg", 8);
	bpf_trace_printk(s, 10);
	return buf[ctx->rx_queue_index & 7] == 'c' ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
