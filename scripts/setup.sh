#!/usr/bin/env bash
# Install everything the toolchain needs on Debian 12, idempotently (fast when already installed).
set -euo pipefail
# libc6-dev-i386: glibc headers reached from linux/if.h under -target bpf (no __x86_64__) want gnu/stubs-32.h
APT_PKGS="clang llvm verilator libbpf-dev bpftool linux-libc-dev libc6-dev-i386 iproute2 yosys make g++ python3-pip"
missing=""
for p in $APT_PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing apt packages:$missing"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
PY=${PYTHON:-python3}
# (checked from / : in the checkout, `import hxdp` would find ./hxdp whether the package is installed or not)
if ! (cd / && $PY -c "import hxdp, elftools, networkx, scapy, pyroute2, pytest, hypothesis, ruff, fusesoc, yaml, wheel, cocotb, cocotbext.axi") 2>/dev/null \
   || [ "$(cd / && $PY -c 'import hxdp,os;print(os.path.realpath(os.path.dirname(hxdp.__file__)))' 2>/dev/null)" \
        != "$(realpath hxdp)" ]; then
  echo "setup: installing the hxdp Python package and its dependencies"
  $PY -m pip install -q --disable-pip-version-check -e ".[test]" 2>/dev/null \
    || $PY -m pip install -q --disable-pip-version-check --break-system-packages -e ".[test]"
fi
