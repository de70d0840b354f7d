"""Read and write classic pcap files (micro- and nanosecond, either byte order); truncated files are rejected."""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hxdp.atomic_write import write_atomic
from hxdp.errors import PcapError

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D
PCAPNG_MAGIC = 0x0A0D0D0A
LINKTYPE_ETHERNET = 1
SNAPLEN = 65535
MAX_RECORD = 262144  # largest record accepted (libpcap's MAXIMUM_SNAPLEN)
GLOBAL_HEADER = 24
RECORD_HEADER = 16


@dataclass
class PcapRecord:
    """One captured packet: timestamp in nanoseconds, the captured bytes and the original length on the wire."""

    ts_ns: int
    data: bytes
    orig_len: int


@dataclass
class PcapFile:
    """A whole pcap file."""

    linktype: int
    nanosecond: bool
    snaplen: int
    records: list[PcapRecord]


def parse_pcap(blob: bytes, name: str = "<pcap>") -> PcapFile:
    """Parse a pcap image; any truncation or malformed header raises PcapError naming the packet and offset."""
    if len(blob) < 4:
        raise PcapError(f"{name}: truncated pcap: {len(blob)} bytes, the global header needs {GLOBAL_HEADER}")
    magic_le = struct.unpack_from("<I", blob, 0)[0]
    if magic_le == PCAPNG_MAGIC:
        raise PcapError(f"{name}: pcapng is not supported, convert it with `editcap -F pcap`")
    for endian in ("<", ">"):
        magic = struct.unpack_from(endian + "I", blob, 0)[0]
        if magic in (MAGIC_US, MAGIC_NS):
            break
    else:
        raise PcapError(f"{name}: not a pcap file (magic 0x{magic_le:08x})")
    if len(blob) < GLOBAL_HEADER:
        raise PcapError(f"{name}: truncated pcap: {len(blob)} bytes, the global header needs {GLOBAL_HEADER}")
    _m, _vmaj, _vmin, _zone, _sigfigs, snaplen, linktype = struct.unpack_from(endian + "IHHiIII", blob, 0)
    nano = magic == MAGIC_NS
    records: list[PcapRecord] = []
    pos = GLOBAL_HEADER
    while pos < len(blob):
        index = len(records)
        if pos + RECORD_HEADER > len(blob):
            raise PcapError(f"{name}: truncated pcap: packet {index} at offset {pos}: record header needs "
                            f"{RECORD_HEADER} bytes, {len(blob) - pos} left")
        sec, frac, incl, orig = struct.unpack_from(endian + "IIII", blob, pos)
        if incl > MAX_RECORD:
            raise PcapError(f"{name}: packet {index} at offset {pos}: captured length {incl} is not plausible")
        start = pos + RECORD_HEADER
        if start + incl > len(blob):
            raise PcapError(f"{name}: truncated pcap: packet {index} at offset {pos}: needs {incl} bytes, "
                            f"{len(blob) - start} left")
        ts = sec * 1_000_000_000 + (frac if nano else frac * 1000)
        records.append(PcapRecord(ts, blob[start : start + incl], max(orig, incl)))
        pos = start + incl
    return PcapFile(linktype, nano, snaplen, records)


def read_pcap_file(path: str | os.PathLike[str]) -> PcapFile:
    try:
        with open(path, "rb") as fh:
            blob = fh.read()
    except OSError as exc:
        raise PcapError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_pcap(blob, str(path))


def read_pcap(path: str | os.PathLike[str]) -> list[bytes]:
    """The frames of an Ethernet pcap, in order."""
    pf = read_pcap_file(path)
    if pf.linktype != LINKTYPE_ETHERNET:
        raise PcapError(f"{path}: link type {pf.linktype} is not Ethernet (1)")
    return [r.data for r in pf.records]


def check_frame_sizes(frames: Sequence[bytes], source: str | os.PathLike[str]) -> None:
    """Refuse a frame above the packet buffer's PKT_MAX_LEN before an engine runs (the board's MAC drops it and
    counts it; every engine drops it alike, but a command given one is told rather than silently dropping it)."""
    from hxdp import params

    for i, f in enumerate(frames):
        if len(f) > params.PKT_MAX_LEN:
            raise PcapError(f"{source}: packet {i}: {len(f)} bytes, above the {params.PKT_MAX_LEN} bytes a frame may "
                            "have on the board (its MAC drops it, as every engine does)")


def pcap_bytes(packets: Sequence[bytes], timestamps: Sequence[float] | None = None, nanosecond: bool = False,
               linktype: int = LINKTYPE_ETHERNET) -> bytes:
    """A little-endian pcap image of the packets; timestamps in seconds (default: 0, 1 us, 2 us, ...)."""
    if timestamps is not None and len(timestamps) != len(packets):
        raise PcapError(f"{len(timestamps)} timestamps for {len(packets)} packets")
    magic = MAGIC_NS if nanosecond else MAGIC_US
    parts = [struct.pack("<IHHiIII", magic, 2, 4, 0, 0, SNAPLEN, linktype)]
    scale = 1_000_000_000 if nanosecond else 1_000_000
    for i, pkt in enumerate(packets):
        if len(pkt) > SNAPLEN:
            raise PcapError(f"packet {i} is {len(pkt)} bytes, longer than the snap length {SNAPLEN}")
        t = timestamps[i] if timestamps is not None else i * 1e-6
        if not (isinstance(t, (int, float)) and math.isfinite(t) and 0 <= t < 2**32):
            raise PcapError(f"packet {i}: timestamp {t!r} s is outside the pcap range 0 .. {2**32 - 1} s")
        ticks = round(t * scale)
        parts.append(struct.pack("<IIII", ticks // scale, ticks % scale, len(pkt), len(pkt)))
        parts.append(bytes(pkt))
    return b"".join(parts)


def write_pcap(path: str | os.PathLike[str], packets: Iterable[bytes], timestamps: Sequence[float] | None = None,
               nanosecond: bool = False) -> None:
    """Write an Ethernet pcap atomically (a failure never leaves a partial file)."""
    write_atomic(path, pcap_bytes(list(packets), timestamps, nanosecond))
