#!/usr/bin/env bash
# program_fpga.sh [BITFILE] [IFACE]: load a bitstream into the NetFPGA-SUME in NetFPGA's order: unload the SUME
# driver, program over JTAG, remove the board's PCI device, rescan the bus, reload the driver; then say which
# bitstream answers on IFACE (default nf0). Needs root and Vivado (or Vivado Lab) on PATH; without Vivado, says so
# and exits 2 (the simulated board needs none of this: `hxdp board serve`).
#   SUME_DRIVER   the driver module (default sume_riffa); SUME_DRIVER_KO a .ko to insmod instead of modprobe
#   SUME_PCI_ID   vendor:device of the board (default 10ee:7028, the reference NIC's)
#   DRY_RUN=1     print the steps instead of running them (tests and a first look)
set -euo pipefail

BIT="${1:-${HXDP_BITFILE:-hxdp.bit}}"
IFACE="${2:-nf0}"
DRIVER="${SUME_DRIVER:-sume_riffa}"
PCI_ID="${SUME_PCI_ID:-10ee:7028}"
SYS="${SYSFS_ROOT:-/sys}"  # tests point this at a fake tree

run() {  # a step, or its text with DRY_RUN=1
  if [[ "${DRY_RUN:-0}" == 1 ]]; then echo "+ $*"; else "$@"; fi
}
write() {  # echo VALUE > FILE, as a step
  if [[ "${DRY_RUN:-0}" == 1 ]]; then echo "+ echo $1 > $2"; else echo "$1" > "$2"; fi
}

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
if [[ $EUID -ne 0 && "${DRY_RUN:-0}" != 1 ]]; then
  echo "program_fpga.sh: must run as root (driver, PCI remove and rescan)" >&2
  exit 2
fi

# the board's PCI addresses (before programming: the endpoint goes away while the FPGA is reconfigured)
devices=()
for d in "$SYS"/bus/pci/devices/*; do
  [[ -f "$d/vendor" && -f "$d/device" ]] || continue
  id="$(sed 's/^0x//' "$d/vendor"):$(sed 's/^0x//' "$d/device")"
  [[ "$id" == "$PCI_ID" ]] && devices+=("$(basename "$d")")
done

# 1. unload the driver: programming under a loaded driver leaves it talking to a vanished endpoint
if grep -q "^$DRIVER " /proc/modules 2>/dev/null || [[ "${DRY_RUN:-0}" == 1 ]]; then
  run rmmod "$DRIVER"
fi

# 2. program over JTAG
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
run "$VIVADO" -mode batch -nojournal -nolog -source "$TCL"

# 3. remove the stale PCI device, 4. rescan: the new bitstream's endpoint enumerates afresh
if [[ ${#devices[@]} -eq 0 ]]; then
  echo "program_fpga.sh: no PCI device $PCI_ID was present before programming (set SUME_PCI_ID?)" >&2
fi
for dev in "${devices[@]}"; do
  write 1 "$SYS/bus/pci/devices/$dev/remove"
done
run sleep 1
write 1 "$SYS/bus/pci/rescan"

# 5. reload the driver
if [[ -n "${SUME_DRIVER_KO:-}" ]]; then
  run insmod "$SUME_DRIVER_KO"
else
  run modprobe "$DRIVER"
fi
run ip link set "$IFACE" up

# which bitstream answers: ours reads "hXDP" (0x68584450) at the ID register, the original 0x01234567
run "$(dirname "$0")/rwaxi" -i "$IFACE" -a 0x8003000c
