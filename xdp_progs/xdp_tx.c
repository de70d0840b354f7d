/* xdp_tx: microbenchmark, swaps the Ethernet MAC addresses and sends the frame back (XDP_TX).
 * Traffic: any Ethernet frames of at least 60 bytes (a frame shorter than 14 bytes would be ABORTED). Maps: none.
 */
#include "common.h"

SEC("xdp")
int xdp_tx_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_ABORTED;
	swap_src_dst_mac(eth);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
