/* behind_maps: the NIC's program with a cpumap program and a devmap egress program beside it, as the kernel
 * samples' xdp_redirect_cpu and xdp_redirect_map objects hold them. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int nic_prog(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp/cpumap")
int on_cpu(struct xdp_md *ctx)
{
	return XDP_DROP;
}

SEC("xdp/devmap")
int on_egress(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
