// A store into a .rodata constant through its address (the kernel verifier refuses writes into a read-only map).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile __u32 limit = 7;

SEC("xdp")
int rodata_write(struct xdp_md *ctx)
{
	*(volatile __u32 *)&limit = 0;
	return limit ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
