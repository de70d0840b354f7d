// Board test program: the action comes from a global variable (map memory, no helper), per-action counters
// with atomics on global data; TX swaps the MAC addresses.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

volatile __u32 mode = XDP_PASS; /* .data: the action for IPv4 frames */
__u64 counts[4];                /* .bss: packets per action */

SEC("xdp")
int gmode(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 action = XDP_PASS;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		action = mode & 3;
	__sync_fetch_and_add(&counts[action], 1);
	if (action == XDP_TX) {
		unsigned char tmp[ETH_ALEN];

		__builtin_memcpy(tmp, eth->h_dest, ETH_ALEN);
		__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
		__builtin_memcpy(eth->h_source, tmp, ETH_ALEN);
	}
	return action;
}

char _license[] SEC("license") = "GPL";
