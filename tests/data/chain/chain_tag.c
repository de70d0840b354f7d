/* chain_tag: the first program of a dispatcher chain: tags IPv4 frames with their protocol in the XDP metadata
 * (bpf_xdp_adjust_meta, one u32) and passes them on; drops frames that are not IPv4 (the chain may still run the
 * next program after a drop: --chain-actions pass,drop). Counts tagged frames per protocol in `tagged`. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} tagged SEC(".maps");

SEC("xdp")
int chain_tag(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	__u32 proto, *meta;
	__u64 *n;

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_DROP;
	proto = iph->protocol;
	n = bpf_map_lookup_elem(&tagged, &proto);
	if (n)
		*n += 1;
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(__u32)))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	meta = (void *)(long)ctx->data_meta;
	if ((void *)(meta + 1) > data)
		return XDP_ABORTED;
	*meta = proto;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
