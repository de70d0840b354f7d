"""Map contents as the host reads them: entries by key, and an array map as one blob compared whole."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

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
