#!/usr/bin/env bash
# sim_traffic.sh PCAP [PORT] [loop]: send a trace into the simulated board (full speed; "loop" repeats it until
# `hxdp board stop-replay`). Generates PCAP first when it does not exist (64-byte UDP, 10 flows, 10,000 frames).
set -euo pipefail
PCAP="${1:?usage: sim_traffic.sh PCAP [PORT] [loop]}"
PORT="${2:-0}"
BOARD="${HXDP_BOARD:-sim:/tmp/hxdp-board.sock}"
if [[ ! -f "$PCAP" ]]; then
  hxdp traffic "$PCAP" --flows 10 --count 10000 --size 64
fi
if [[ "${3:-}" == "loop" ]]; then
  python3 -m hxdp.cli board send "$PCAP" --port "$PORT" --loop --board "$BOARD"
else
  python3 -m hxdp.cli board send "$PCAP" --port "$PORT" --wait --board "$BOARD"
fi
