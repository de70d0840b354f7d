#!/usr/bin/env bash
# pktgen.sh IFACE [COUNT] [SIZE] [FLOWS] [DST_MAC]: Linux kernel pktgen sending UDP from FLOWS source addresses
# (10.0.0.1 upwards) out of IFACE, the generator side of the cable to the NetFPGA. COUNT 0 = until ^C.
# Needs root and the pktgen module; says so and exits 2 where the kernel has none.
set -euo pipefail
IFACE="${1:?usage: pktgen.sh IFACE [COUNT] [SIZE] [FLOWS] [DST_MAC]}"
COUNT="${2:-10000000}"
SIZE="${3:-64}"
FLOWS="${4:-10}"
DST_MAC="${5:-02:00:00:00:00:02}"

if [[ ! -d /proc/net/pktgen ]] && ! modprobe pktgen 2>/dev/null; then
  echo "pktgen.sh: this kernel has no pktgen module (modprobe pktgen failed); use MoonGen (moongen_udp.lua)" >&2
  echo "  or, on the simulated board: hxdp board send TRACE.pcap --loop" >&2
  exit 2
fi
pg() { echo "$2" > "/proc/net/pktgen/$1"; }
THREAD=kpktgend_0
pg "$THREAD" "rem_device_all"
pg "$THREAD" "add_device $IFACE"
pg "$IFACE" "count $COUNT"
pg "$IFACE" "pkt_size $((SIZE - 4))"   # pktgen's size includes the 4-byte FCS
pg "$IFACE" "delay 0"
pg "$IFACE" "dst_mac $DST_MAC"
pg "$IFACE" "src_min 10.0.0.1"
pg "$IFACE" "src_max 10.0.0.$FLOWS"
pg "$IFACE" "dst 10.1.0.1"
pg "$IFACE" "udp_src_min 1234"
pg "$IFACE" "udp_src_max 1234"
pg "$IFACE" "udp_dst_min 5678"
pg "$IFACE" "udp_dst_max 5678"
pg "$IFACE" "flag IPSRC_RND"
echo "pktgen: $COUNT frames of $SIZE bytes from $FLOWS flows out of $IFACE"
echo start > /proc/net/pktgen/pgctrl
cat "/proc/net/pktgen/$IFACE" | grep -E "^(Result|  pkts-sofar)" || true
