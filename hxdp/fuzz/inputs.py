"""Random packets and initial map contents for a fuzz program, from the campaign seed and program index."""

from __future__ import annotations

import random
import struct
from typing import Any

from hxdp.fuzz.generator import JMP_PROGS, SIZED_MAX, VAL_SIZE, FuzzProgram


# --- packets and maps ---------------------------------------------------------------------------------------------
def _csum16(b: bytes) -> int:
    b = b + bytes(len(b) % 2)
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def gen_packet(rng: random.Random) -> bytes:
    """Random bytes under plausible Ethernet / IPv4 / UDP or TCP headers, 60..300 bytes."""
    n = rng.randrange(60, 301)
    macs = [bytes.fromhex(h) for h in ("020000000001", "020000000002", "ffffffffffff", "00163e112233")]
    eth = (rng.choice(macs) if rng.random() < 0.7 else rng.randbytes(6)) + \
          (rng.choice(macs) if rng.random() < 0.7 else rng.randbytes(6))
    et = rng.choice((0x0800, 0x0800, 0x0800, 0x0800, 0x86DD, 0x8100, 0x0806, rng.getrandbits(16)))
    hdr = eth + struct.pack("!H", et)
    if et == 0x0800:
        proto = rng.choice((17, 17, 6, 6, 1, rng.getrandbits(8)))
        ihl = 5 if rng.random() < 0.9 else rng.randrange(0, 16)
        addrs = [bytes([10, 0, 0, i]) for i in range(1, 5)] + [bytes([192, 168, 1, 1])]
        src = rng.choice(addrs) if rng.random() < 0.7 else rng.randbytes(4)
        dst = rng.choice(addrs) if rng.random() < 0.7 else rng.randbytes(4)
        ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, rng.getrandbits(8), n - 14, rng.getrandbits(16),
                         rng.choice((0, 0x4000, rng.getrandbits(16))), rng.choice((64, 1, 0, 255)), proto, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", _csum16(ip)) + ip[12:]
        ports = (53, 80, 443, 1234, 8080)
        sp = rng.choice(ports) if rng.random() < 0.7 else rng.getrandbits(16)
        dp = rng.choice(ports) if rng.random() < 0.7 else rng.getrandbits(16)
        if proto == 17:
            l4 = struct.pack("!HHHH", sp, dp, n - 34, rng.getrandbits(16))
        elif proto == 6:
            l4 = struct.pack("!HHIIBBHHH", sp, dp, rng.getrandbits(32), rng.getrandbits(32), 0x50,
                             rng.getrandbits(8), rng.getrandbits(16), rng.getrandbits(16), 0)
        else:
            l4 = b""
        hdr += ip + l4
    elif et == 0x8100:
        hdr += struct.pack("!HH", rng.getrandbits(12), 0x0800)
    hdr = hdr[:n]
    return hdr + rng.randbytes(n - len(hdr))


def gen_packets(seed: int, index: int, count: int) -> list[bytes]:
    rng = random.Random(f"hxdp-fuzz:{seed}:{index}:packets")
    return [gen_packet(rng) for _ in range(count)]


def gen_config(seed: int, index: int, prog: FuzzProgram | None = None) -> dict[str, Any]:
    """Initial maps: some array and per-CPU array entries, a few hash entries, devmap entries 0 and 2 -> lo, CPU 0's
    cpumap entry (the one CPU every kernel has), xskmap entries 0 (queue 0) and 2 (queue 1); `hsz` sized at load
    time and partly filled, `slk` entries (lock word zero), and for a program with a callee (`prog`) the `jmp`
    entries JMP_PROGS naming it."""
    rng = random.Random(f"hxdp-fuzz:{seed}:{index}:maps")

    def val() -> str:
        return rng.randbytes(VAL_SIZE).hex() if rng.random() < 0.7 else bytes(VAL_SIZE).hex()

    cfg: dict[str, list[dict[str, str]]] = {
        "arr": [{"key": struct.pack("<I", i).hex(), "value": val()} for i in range(8) if rng.random() < 0.6],
        "pca": [{"key": struct.pack("<I", i).hex(), "value": val()} for i in range(4) if rng.random() < 0.6],
        "hmap": [{"key": struct.pack("<I", k).hex(), "value": val()}
                 for k in sorted(rng.sample(range(16), rng.randrange(0, 7)))],
        "devs": [{"key": struct.pack("<I", i).hex(), "value": struct.pack("<I", 1).hex()} for i in (0, 2)],
        "cpus": [{"key": struct.pack("<I", 0).hex(), "value": struct.pack("<I", 64).hex()}],
        "xsks": [{"key": struct.pack("<I", i).hex(), "value": struct.pack("<I", q).hex()} for i, q in ((0, 0), (2, 1))],
    }
    size = rng.choice(SIZED_MAX)
    cfg["hsz"] = [{"key": struct.pack("<I", k).hex(), "value": val()}
                  for k in sorted(rng.sample(range(16), rng.randrange(0, size + 1)))]
    cfg["slk"] = [{"key": struct.pack("<I", i).hex(), "value": bytes(4).hex() + rng.randbytes(20).hex()}
                  for i in range(4) if rng.random() < 0.6]
    out: dict[str, Any] = {"maps": cfg, "max_entries": {"hsz": size}}
    if prog is not None and prog.callee is not None:
        cfg["jmp"] = [{"key": struct.pack("<I", i).hex(), "prog": prog.callee.name} for i in JMP_PROGS]
    return out

