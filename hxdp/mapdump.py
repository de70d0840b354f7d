"""Map contents as the host reads them: entries by key, and an array map as one blob compared whole."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

# A map's contents: key -> value. Every dump is a Mapping; an array of a million slots (a load balancer's ring) is an
# ArrayDump, so that comparing two dumps after every packet costs one bytes comparison, not a million lookups.
Entries = Mapping[bytes, bytes]
MapDump = dict[str, Entries]


class ArrayDump(Mapping[bytes, bytes]):
    """The values of an array map, slot i at bytes [i * value_size, (i + 1) * value_size) of one blob, with the
    array's 4-byte little-endian indexes as keys (as the kernel's array maps have them)."""

    __slots__ = ("blob", "value_size")

    def __init__(self, blob: bytes, value_size: int) -> None:
        if value_size <= 0 or len(blob) % value_size:
            raise ValueError(f"an array dump of {len(blob)} bytes does not hold {value_size}-byte values")
        self.blob = blob
        self.value_size = value_size

    def __len__(self) -> int:
        return len(self.blob) // self.value_size

    def __getitem__(self, key: bytes) -> bytes:
        if len(key) != 4:
            raise KeyError(key)
        i = int.from_bytes(key, "little")
        if i >= len(self):
            raise KeyError(key)
        return self.blob[i * self.value_size : (i + 1) * self.value_size]

    def __iter__(self) -> Iterator[bytes]:
        return (i.to_bytes(4, "little") for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ArrayDump):
            return self.value_size == other.value_size and self.blob == other.blob
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable-like value semantics, as a dict's

    def differing(self, other: Entries) -> Iterator[bytes]:
        """The keys whose values differ from `other`'s (or that one side lacks), in index order, found a chunk at
        a time so that two blobs that mostly agree cost a few comparisons."""
        if not isinstance(other, ArrayDump) or other.value_size != self.value_size:
            for k in sorted(set(self) | set(other)):
                if self.get(k) != other.get(k):
                    yield k
            return
        vs, chunk = self.value_size, 4096
        a, b = self.blob, other.blob
        for start in range(0, max(len(a), len(b)), chunk * vs):
            end = start + chunk * vs
            if a[start:end] == b[start:end]:
                continue
            for off in range(start, min(end, max(len(a), len(b))), vs):
                if a[off : off + vs] != b[off : off + vs]:
                    yield (off // vs).to_bytes(4, "little")


def differing_keys(expected: Entries, got: Entries) -> Iterator[bytes]:
    """The keys of two dumps of one map whose values differ, or that only one side holds."""
    if isinstance(expected, ArrayDump):
        yield from expected.differing(got)
        return
    if isinstance(got, ArrayDump):
        yield from got.differing(expected)
        return
    for k in sorted(set(expected) | set(got)):
        if expected.get(k) != got.get(k):
            yield k


@dataclass(frozen=True)
class SkipBytes:
    """Value bytes of a map that a comparison leaves out: [offset, offset + size) of the value at `key` (every key
    when None). For a value that holds host-dependent data: bpf_ktime_get_ns reads the NIC's clock, not the
    host's, so a program that stores the time (Katran's new-connection rate quantum) cannot match it byte for
    byte; everything else of the map still is compared."""

    map: str
    offset: int
    size: int
    key: bytes | None = None

    SHAPE = "MAP:OFFSET:SIZE[:KEYHEX]"

    @classmethod
    def parse(cls, text: str) -> SkipBytes:
        m = re.fullmatch(r"([A-Za-z_.][\w.]*):(\d+):(\d+)(?::([0-9a-fA-F]+))?", text)  # .rodata and the like
        if m is None or int(m[3]) == 0 or (m[4] is not None and len(m[4]) % 2):
            raise ValueError(f"{text!r}: expected {cls.SHAPE} (value bytes OFFSET..OFFSET+SIZE of map MAP, at the "
                             "key given in hex or at every key)")
        return cls(m[1], int(m[2]), int(m[3]), bytes.fromhex(m[4]) if m[4] else None)

    def mask(self, value: bytes) -> bytes:
        end = min(len(value), self.offset + self.size)
        if self.offset >= end:
            return value
        return value[: self.offset] + bytes(end - self.offset) + value[end:]


def masked(dump: MapDump, skips: list[SkipBytes]) -> MapDump:
    """The dump with the skipped value bytes zeroed (a copy of the maps they touch)."""
    out = dict(dump)
    for skip in skips:
        entries = out.get(skip.map)
        if entries is None:
            continue
        if isinstance(entries, ArrayDump):
            blob = bytearray(entries.blob)
            vs = entries.value_size
            if skip.key is not None:
                index = int.from_bytes(skip.key, "little")
                slots = [index] if len(skip.key) == 4 and index < len(entries) else []
            else:
                slots = range(len(entries))
            for i in slots:
                blob[i * vs : (i + 1) * vs] = skip.mask(bytes(blob[i * vs : (i + 1) * vs]))
            out[skip.map] = ArrayDump(bytes(blob), vs)
        else:
            out[skip.map] = {k: (skip.mask(v) if skip.key is None or k == skip.key else v) for k, v in entries.items()}
    return out
