/* xdp1: parses Ethernet (up to two VLAN tags, 802.1Q/802.1ad) and IPv4/IPv6, counts packets per IP protocol
 * (IPv4 protocol / IPv6 next header; 0 for anything else) in the per-CPU array rxcnt, and drops every packet.
 * As the Linux sample samples/bpf/xdp1_kern.c. Traffic: any Ethernet frames (UDP, TCP, ICMP, IPv6, VLAN, ARP);
 * every frame is DROPped. Maps: rxcnt starts empty (all zero).
 */
#include "rxcnt.h"

SEC("xdp")
int xdp1_prog(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	count_ipproto(data, data_end);
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
