/* xdp2: parses Ethernet (up to two VLAN tags, 802.1Q/802.1ad) and IPv4/IPv6, counts packets per IP protocol
 * (IPv4 protocol / IPv6 next header; 0 for anything else) in the per-CPU array rxcnt, then, as the Linux
 * sample samples/bpf/xdp2_kern.c, swaps the MAC addresses of UDP packets and sends them back (XDP_TX); every
 * other frame is DROPped. Traffic: UDP, TCP, ICMP, IPv6, VLAN, ARP frames. Maps: rxcnt starts empty.
 */
#include "rxcnt.h"

SEC("xdp")
int xdp2_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	if (count_ipproto(data, data_end) != IPPROTO_UDP)
		return XDP_DROP;
	swap_src_dst_mac(data);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
