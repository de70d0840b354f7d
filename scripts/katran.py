#!/usr/bin/env python3
"""Build upstream Katran's balancer from a checkout the user gives, and write a map configuration for a VIP.

    python3 scripts/katran.py build KATRAN_SRC -o out/katran          # out/katran/balancer.bpf.o
    python3 scripts/katran.py config --vip 10.100.0.1:80:tcp --real 172.16.0.1 --real 172.16.0.2 \
        --gw-mac 02:00:00:00:03:01 -o out/katran/config.json         # vip_map, reals, ch_rings, ctl_array, sizes

Nothing is fetched: KATRAN_SRC is a clone of github.com/facebookincubator/katran. The object is built as katran's
own katran/lib/Makefile-bpf builds it (clang -O2 -emit-llvm | llc -march=bpf, its defines), so the program is the
one katran loads. The configuration holds what katran's control plane (KatranLb) writes for a VIP: its vip_map
entry, the reals (ids from 1), the VIP's consistent-hash ring of RING_SIZE slots (Maglev) and the gateway MAC in
ctl_array; and it sizes the per-CPU connection tables as KatranLb does (LruSize / forwarding cores, one LRU per
core in lru_mapping).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hxdp.traffic import maglev  # noqa: E402

BALANCER = Path("katran/lib/bpf/balancer.bpf.c")
RING_SIZE = 65537  # katran/lib/bpf/balancer_consts.h
DEFAULT_LRU_SIZE = 8_000_000  # katran/lib/KatranLbStructs.h kDefaultLruSize
F_IPV6 = 1  # real_definition.flags
PROTOS = {"tcp": 6, "udp": 17}
# katran/lib/Makefile-bpf
CFLAGS = ["-DDEBUG", "-D__KERNEL__", "-Wno-unused-value", "-Wno-pointer-sign", "-Wno-compare-distinct-pointer-types",
          "-O2", "-emit-llvm", "-c", "-g"]


def fail(msg: str) -> None:
    print(f"katran: {msg}", file=sys.stderr)
    sys.exit(1)


def build(src: Path, out: Path, defines: list[str]) -> Path:
    """Compile KATRAN_SRC's balancer into out/balancer.bpf.o, as katran's Makefile-bpf does."""
    if not (src / BALANCER).is_file():
        fail(f"{src}: no {BALANCER} (give a clone of github.com/facebookincubator/katran)")
    for tool in ("clang", "llc"):
        if not shutil.which(tool):
            fail(f"{tool} is not installed (scripts/setup.sh installs it)")
    out.mkdir(parents=True, exist_ok=True)
    obj = out / "balancer.bpf.o"
    incs = [f"-I{src}", f"-I{src / 'katran/lib/linux_includes'}", f"-I{src / 'katran/lib'}"]
    clang = subprocess.run(["clang", *incs, *CFLAGS, *(f"-D{d}" for d in defines), str(src / BALANCER), "-o", "-"],
                           capture_output=True)
    if clang.returncode:
        fail(f"clang failed on {src / BALANCER}: {clang.stderr.decode(errors='replace').strip()[-500:]}")
    tmp = obj.with_suffix(".o.tmp")
    llc = subprocess.run(["llc", "-march=bpf", "-filetype=obj", "-o", str(tmp)], input=clang.stdout,
                         capture_output=True)
    if llc.returncode:
        tmp.unlink(missing_ok=True)
        fail(f"llc failed: {llc.stderr.decode(errors='replace').strip()[-500:]}")
    tmp.replace(obj)
    return obj


def addr16(a: str) -> bytes:
    ip = ipaddress.ip_address(a)
    return ip.packed if ip.version == 6 else ip.packed + bytes(12)


def parse_vip(text: str) -> tuple[str, int, int]:
    try:
        addr, port, proto = text.rsplit(":", 2)
        ipaddress.ip_address(addr.strip("[]"))
        return addr.strip("[]"), int(port), PROTOS[proto.lower()]
    except (ValueError, KeyError):
        fail(f"--vip {text}: expected ADDRESS:PORT:tcp|udp (IPv6 as [ADDRESS]:PORT:PROTO)")
        raise


def entry(key: bytes, value: bytes) -> dict[str, str]:
    return {"key": key.hex(), "value": value.hex()}


def config(vips: list[str], reals: list[str], gw_mac: str, ring_size: int, lru_size: int, cores: int) -> dict:
    """The map configuration KatranLb would write for these VIPs, all served by the same reals."""
    if not reals:
        fail("at least one --real is needed")
    real_ids = list(range(1, len(reals) + 1))  # real ids start at 1: 0 in a ring slot means "no real"
    ring = maglev.table(real_ids, ring_size)
    cfg: dict[str, list[dict[str, str]]] = {"vip_map": [], "reals": [], "ch_rings": [], "ctl_array": []}
    for num, text in enumerate(vips):
        addr, port, proto = parse_vip(text)
        key = addr16(addr) + struct.pack("!H", port) + bytes([proto, 0])
        cfg["vip_map"].append(entry(key, struct.pack("<II", 0, num)))
        cfg["ch_rings"] += [entry(struct.pack("<I", num * ring_size + s), struct.pack("<I", r))
                            for s, r in enumerate(ring)]
    for rid, a in zip(real_ids, reals, strict=True):
        flags = F_IPV6 if ipaddress.ip_address(a).version == 6 else 0
        cfg["reals"].append(entry(struct.pack("<I", rid), addr16(a) + bytes([flags]) + bytes(3)))
    mac = bytes.fromhex(gw_mac.replace(":", ""))
    if len(mac) != 6:
        fail(f"--gw-mac {gw_mac}: not a MAC address")
    cfg["ctl_array"].append(entry(struct.pack("<I", 0), mac + bytes(2)))
    # KatranLb::attachLrus: lru_mapping[core] = a fresh LRU_HASH of LruSize / cores entries for every forwarding core
    lrus = {struct.pack("<I", core).hex(): f"katran_lru{core}" for core in range(cores)}
    return {"maps": cfg, "inner_maps": {"lru_mapping": lrus},
            "max_entries": {name: lru_size // cores for name in lrus.values()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build balancer.bpf.o from a katran checkout")
    b.add_argument("src", type=Path, help="a clone of github.com/facebookincubator/katran")
    b.add_argument("-o", "--out", type=Path, default=Path("out/katran"))
    b.add_argument("-D", dest="defines", action="append", default=[], help="an extra define (as katran's -d)")
    c = sub.add_parser("config", help="write the map configuration of VIPs and their reals")
    c.add_argument("--vip", action="append", required=True, help="ADDRESS:PORT:tcp|udp (repeatable)")
    c.add_argument("--real", action="append", required=True, help="a real's address, IPv4 or IPv6 (repeatable)")
    c.add_argument("--gw-mac", default="02:00:00:00:03:01", help="the default gateway's MAC (ctl_array[0])")
    c.add_argument("--ring-size", type=int, default=RING_SIZE)
    c.add_argument("--lru-size", type=int, default=DEFAULT_LRU_SIZE, help="KatranLb's LruSize (all cores)")
    c.add_argument("--cores", type=int, default=1, help="forwarding cores (one LRU each)")
    c.add_argument("-o", "--out", type=Path, required=True)
    args = ap.parse_args()
    if args.cmd == "build":
        print(build(args.src, args.out, args.defines))
        return 0
    doc = config(args.vip, args.real, args.gw_mac, args.ring_size, args.lru_size, args.cores)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
