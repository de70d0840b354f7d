/* References an extern variable (kconfig): the loader must refuse it with a one-line error. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern int LINUX_KERNEL_VERSION __kconfig;

SEC("xdp")
int uses_extern(struct xdp_md *ctx)
{
	return LINUX_KERNEL_VERSION > 5 ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
