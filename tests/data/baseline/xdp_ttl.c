// Baseline program: a router's rewrite. IPv4 with a TTL above 1: decrement it and send the frame back (XDP_TX);
// anything else: XDP_PASS. Run again on its own output, a frame ends up on the PASS path.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

SEC("xdp")
int xdp_ttl(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ttl <= 1)
		return XDP_PASS;
	ip->ttl--;
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
