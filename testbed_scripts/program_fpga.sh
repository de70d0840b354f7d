#!/usr/bin/env bash
# program_fpga.sh [BITFILE] [IFACE]: load the hXDP bitstream into the NetFPGA-SUME over JTAG, then rescan PCIe and
# reload the SUME driver so that IFACE (default nf0) and its register ioctls come back. Needs Vivado (or Vivado Lab)
# on PATH; without it, says so and exits 2 (use the simulated board instead: `hxdp board serve`).
set -euo pipefail

BIT="${1:-${HXDP_BITFILE:-hxdp.bit}}"
IFACE="${2:-nf0}"
DRIVER="${SUME_DRIVER:-sume_riffa}"

if [[ ! -f "$BIT" ]]; then
  echo "program_fpga.sh: bitstream $BIT not found (argument 1 or \$HXDP_BITFILE)" >&2
  exit 2
fi
VIVADO="$(command -v vivado || command -v vivado_lab || true)"
if [[ -z "$VIVADO" ]]; then
  echo "program_fpga.sh: Vivado is not installed here (no vivado or vivado_lab on PATH); cannot program $BIT." >&2
  echo "  On a testbed host: source /opt/Xilinx/Vivado/<version>/settings64.sh and run again." >&2
  echo "  Without a board: hxdp board serve --socket /tmp/hxdp-board.sock (see testbed_scripts/README.md)." >&2
  exit 2
fi

TCL="$(mktemp --suffix=.tcl)"
trap 'rm -f "$TCL"' EXIT
cat > "$TCL" <<TCL
open_hw
connect_hw_server
open_hw_target
set dev [lindex [get_hw_devices xc7vx690t*] 0]
current_hw_device \$dev
set_property PROGRAM.FILE {$BIT} \$dev
program_hw_devices \$dev
close_hw
TCL
echo "programming $BIT with $VIVADO"
"$VIVADO" -mode batch -nojournal -nolog -source "$TCL"

# The PCIe endpoint re-enumerates after programming: rescan and reload the driver.
if [[ $EUID -eq 0 ]]; then
  if lsmod | grep -q "^$DRIVER"; then rmmod "$DRIVER" || true; fi
  echo 1 > /sys/bus/pci/rescan
  modprobe "$DRIVER" 2>/dev/null || echo "program_fpga.sh: load the SUME driver ($DRIVER) by hand" >&2
  ip link set "$IFACE" up 2>/dev/null || true
else
  echo "program_fpga.sh: not root: rescan PCIe (echo 1 > /sys/bus/pci/rescan) and reload $DRIVER yourself" >&2
fi
# The hXDP bitstream answers its ID register; the original one answers 0 or an error there.
"$(dirname "$0")/rwaxi" -i "$IFACE" -a 0x8003000c || true
