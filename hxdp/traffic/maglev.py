"""Maglev consistent-hash ring population (Eisenbud et al., NSDI'16) for load balancers' ring maps."""

from __future__ import annotations

import zlib


def table(backends: list[int], size: int) -> list[int]:
    """A ring of `size` slots (size prime) naming `backends`: each backend's preference list is a permutation of the
    slots given by an offset and a skip from two hashes of its id; backends take turns claiming their next free
    slot, so each gets size/len(backends) slots, give or take one, and a change of backends moves few slots."""
    if not backends:
        raise ValueError("a Maglev ring needs at least one backend")
    perms = []
    for b in backends:
        offset = zlib.crc32(b"offset%d" % b) % size
        skip = zlib.crc32(b"skip%d" % b) % (size - 1) + 1
        perms.append((offset, skip))
    ring = [-1] * size
    nxt = [0] * len(backends)
    filled = 0
    while filled < size:
        for i, b in enumerate(backends):
            offset, skip = perms[i]
            slot = (offset + nxt[i] * skip) % size
            while ring[slot] >= 0:
                nxt[i] += 1
                slot = (offset + nxt[i] * skip) % size
            ring[slot] = b
            nxt[i] += 1
            filled += 1
            if filled == size:
                break
    return ring
