"""Hardware map memory with kernel map semantics: MapState over the placement of hxdp.models.maplayout.

The byte-level format of every map type is documented in docs/maps.md (layout version LAYOUT_VERSION); the
host, the models and the RTL all compute placements from that text. The layout (MapLayout, MapRegion) and the
configuration files (check_map_config, load_map_config) have modules of their own; their names stay importable
from here, where most callers look for them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hxdp import params
from hxdp.frontend.program import MapDef, Program
from hxdp.mapdump import ArrayDump
from hxdp.models.mapconfig import CONFIG_SHAPE, check_map_config, load_map_config
from hxdp.models.maplayout import (
    ARRAY_KINDS,
    EVENT_KINDS,
    HASH_KINDS,
    HEADER_BYTES,
    LAYOUT_VERSION,
    OUTER_KINDS,
    REGION_ALIGN,
    SLOT_HEADER,
    SPARSE_KINDS,
    MapError,
    MapLayout,
    MapRegion,
    next_pow2,
    round8,
)
from hxdp.models.memory import SparseMemory

__all__ = ["ARRAY_KINDS", "BPF_ANY", "BPF_EXIST", "BPF_NOEXIST", "CONFIG_SHAPE", "DELETED", "E2BIG", "EEXIST",
           "EINVAL", "EMPTY", "ENOENT", "ENOSPC", "EVENT_KINDS", "HASH_KINDS", "HASH_MULT", "HEADER_BYTES",
           "LAYOUT_VERSION", "OUTER_KINDS", "REGION_ALIGN", "SLOT_HEADER", "USED", "MapError", "MapLayout",
           "MapRegion", "MapState", "check_map_config", "errno_text", "key_hash", "load_map_config", "next_pow2",
           "rotl32", "round8", "windows"]


DEVMAP_PROG_REFUSAL = ("not supported yet: devmap entries with a program (bpf_prog, an egress program), because "
                       "the NIC runs the one program of its instruction memory and has no second program for the "
                       "frames leaving through the entry")

# slot states
EMPTY, USED, DELETED = 0, 1, 2

# update flags and kernel return codes
BPF_ANY, BPF_NOEXIST, BPF_EXIST = 0, 1, 2
ENOENT, E2BIG, EEXIST, EINVAL, ENOSPC, EOVERFLOW = 2, 7, 17, 22, 28, 75


HASH_MULT = 0x9E3779B1



def windows(n: int) -> int:
    """Map-window writes covering n bytes from an 8-byte aligned offset (the helper unit writes one a cycle)."""
    return -(-n // params.MAP_WINDOW_BYTES)



def rotl32(x: int, n: int) -> int:
    n &= 31
    return ((x << n) | (x >> (32 - n))) & 0xFFFFFFFF if n else x


def key_hash(key: bytes) -> int:
    """The hardware hash of a key (docs/maps.md): fold little-endian u32 words with rotations, then mix.

    x = len(key); for word i (zero-padded): x ^= rotl32(w_i, 7 i mod 32); h = (x * 0x9E3779B1) mod 2^32;
    h ^= h >> 16. Every word is combined in parallel, so a 1..16-byte key hashes in one cycle.
    """
    x = len(key)
    padded = key + bytes(-len(key) % 4)
    for i in range(0, len(padded), 4):
        w = int.from_bytes(padded[i : i + 4], "little")
        x ^= rotl32(w, (7 * (i // 4)) % 32)
    h = (x * HASH_MULT) & 0xFFFFFFFF
    return h ^ (h >> 16)



def errno_text(err: int) -> str:
    """`E2BIG` style name of a (positive or negative) errno."""
    import errno as errno_mod

    return errno_mod.errorcode.get(abs(err), f"errno {abs(err)}")


def _why_rejected(r: MapRegion, key: bytes, err: int) -> str:
    if r.kind in ARRAY_KINDS and abs(err) == E2BIG:
        return f": index {int.from_bytes(key, 'little')} is beyond max_entries {r.max_entries}"
    if abs(err) in (E2BIG, ENOSPC):
        return f": the map is full ({r.max_entries} entries)"
    if r.kind == "lpm_trie" and abs(err) == EINVAL:
        return f": prefix length {int.from_bytes(key[:4], 'little')} exceeds {8 * (r.key_size - 4)} bits"
    return ""




class MapState:
    """The contents of map memory with the kernel's semantics per map type (one hardware CPU).

    Every operation sets `last_probes`, the slots the hardware FSM visits, and `last_writes`, the map-window writes
    (MAP_WINDOW_BYTES each, one a cycle) it makes: the latency (see helpers.py).
    """

    def __init__(self, layout: MapLayout) -> None:
        self.layout = layout
        self.mem = bytearray(layout.mem_bytes)
        # the off-chip tiers the layout uses (docs/maps.md "Memory tiers"), sparse: zeros until written
        self.tiers = {t: SparseMemory(params.TIER_BYTES[t]) for t in params.TIERS[1:]
                      if any(r.tier == t for r in layout.regions)}
        self.last_probes = 0
        self.last_writes = 0
        for r in layout.regions:
            mem = self.region_mem(r)
            if r.initial:
                init = bytes.fromhex(r.initial)
                mem[r.offset : r.offset + len(init)] = init
            for index, name in r.prog_entries.items():  # a PROG_ARRAY of the loader's own (hxdp.frontend.chain)
                off = r.slot_addr(int(index))
                mem[off : off + 4] = layout.prog_value(name)
        for r in layout.regions:  # the inner maps the loader sets in the slots of a map of maps
            for key, name in r.inner_entries.items():
                err = self.update(r.id, bytes.fromhex(key), layout.by_name[name].id.to_bytes(4, "little"))
                if err:
                    raise MapError(f"map {r.name}: inner map {name} at key {key}: {errno_text(err)}"
                                   f"{_why_rejected(r, bytes.fromhex(key), err)}")

    def off_chip_refusal(self, where: str) -> str | None:
        """Why `where` cannot run this layout (MapLayout.off_chip_refusal), or None."""
        return self.layout.off_chip_refusal(where)

    @classmethod
    def from_maps(cls, maps: list[MapDef]) -> MapState:
        return cls(MapLayout.from_maps(maps))

    @classmethod
    def for_program(cls, program: Program, fib: bool = False) -> MapState:
        """Map state of a loaded program (MapLayout.for_program; `fib`: the FIB region is placed)."""
        return cls(MapLayout.for_program(program, fib=fib))

    # --- small accessors ---------------------------------------------------------------------------------------
    def region_mem(self, r: MapRegion) -> bytearray | SparseMemory:
        """The memory holding region `r` (its offsets index it): the on-chip map memory or an off-chip tier's."""
        return self.mem if r.tier == "bram" else self.tiers[r.tier]

    def _u32(self, r: MapRegion, off: int) -> int:
        return int.from_bytes(self.region_mem(r)[off : off + 4], "little")

    def _set_u32(self, r: MapRegion, off: int, v: int) -> None:
        self.region_mem(r)[off : off + 4] = (v & 0xFFFFFFFF).to_bytes(4, "little")

    def _check_key(self, r: MapRegion, key: bytes) -> bytes:
        if r.kind in EVENT_KINDS:
            raise MapError(f"map {r.name}: a {r.kind} has no entries (its records go to the host as events)")
        if len(key) != r.key_size:
            raise MapError(f"map {r.name}: key of {len(key)} bytes, the map's key size is {r.key_size}")
        return bytes(key)

    def count(self, map_id: int) -> int:
        r = self.layout.region(map_id)
        if r.kind in EVENT_KINDS:
            return 0
        if r.kind in ARRAY_KINDS:
            return r.max_entries
        return self._u32(r, r.offset)

    # --- hash tables ---------------------------------------------------------------------------------------------
    def _hash_find(self, r: MapRegion, key: bytes) -> tuple[int | None, int | None]:
        """(slot holding key or None, first free slot for an insert or None); sets last_probes."""
        mem = self.region_mem(r)
        mask = r.slots - 1
        start = key_hash(key) & mask
        free = None
        probes = 0
        for n in range(r.slots):
            i = (start + n) & mask
            base = r.slot_addr(i)
            state = mem[base]
            probes += 1
            if state == EMPTY:
                self.last_probes = probes
                return None, (free if free is not None else i)
            if state == DELETED:
                if free is None:
                    free = i
            elif state == USED and mem[base + r.key_offset : base + r.key_offset + r.key_size] == key:
                self.last_probes = probes
                return i, free
        self.last_probes = probes
        return None, free

    def _lru_touch(self, r: MapRegion, slot: int) -> None:
        clock = (self._u32(r, r.offset + 4) + 1) & 0xFFFFFFFF
        self._set_u32(r, r.offset + 4, clock)
        self._set_u32(r, r.slot_addr(slot) + 4, clock)

    def _lru_victim(self, r: MapRegion) -> int:
        best, best_stamp = -1, None
        for i in range(r.slots):
            base = r.slot_addr(i)
            if self.region_mem(r)[base] == USED:
                stamp = self._u32(r, base + 4)
                if best_stamp is None or stamp < best_stamp:
                    best, best_stamp = i, stamp
        self.last_probes += r.slots
        return best

    def _hash_remove(self, r: MapRegion, slot: int) -> None:
        base = r.slot_addr(slot)
        self.region_mem(r)[base : base + r.slot_size] = bytes(r.slot_size)
        self.region_mem(r)[base] = DELETED
        self._set_u32(r, r.offset, self._u32(r, r.offset) - 1)

    # --- LPM trie ------------------------------------------------------------------------------------------------
    def _lpm_high(self, r: MapRegion) -> int:
        """The high-water mark of the header, bounded by the slots (a corrupted header walks no further, as the
        hardware's map FSM)."""
        return min(self._u32(r, r.offset + 8), r.slots)

    def _lpm_entries(self, r: MapRegion) -> list[tuple[int, int, bytes]]:
        """(slot, prefixlen, data) of every valid slot below the high-water mark (a mark above the slots, which
        only a corrupted header holds, counts as every slot: the region ends there)."""
        out = []
        dsz = r.key_size - 4
        for i in range(self._lpm_high(r)):
            base = r.slot_addr(i)
            if self.region_mem(r)[base] == USED:
                out.append((i, self._u32(r, base + 4), bytes(self.region_mem(r)[base + 8 : base + 8 + dsz])))
        return out

    @staticmethod
    def _prefix_match(a: bytes, b: bytes, bits: int) -> bool:
        # (a corrupted prefix length longer than the data compares all of it, as the map FSM does)
        full, rest = divmod(min(bits, 8 * len(a)), 8)
        if a[:full] != b[:full]:
            return False
        if rest:
            m = (0xFF << (8 - rest)) & 0xFF
            return (a[full] & m) == (b[full] & m)
        return True

    def _lpm_exact(self, r: MapRegion, prefixlen: int, data: bytes) -> int | None:
        for i, plen, d in self._lpm_entries(r):
            if plen == prefixlen and self._prefix_match(d, data, plen):
                return i
        return None

    def _lpm_set_high(self, r: MapRegion, high: int) -> None:
        """After a delete: 1 + the last used slot below the old mark (what the hardware's scan finds)."""
        new = 0
        for i in range(high):
            if self.region_mem(r)[r.slot_addr(i)] == USED:
                new = i + 1
        self._set_u32(r, r.offset + 8, new)

    # --- the operations --------------------------------------------------------------------------------------------
    def present(self, r: MapRegion, off: int) -> bool:
        """Whether the array slot at `off` holds an entry: always for plain arrays; a devmap entry has an ifindex, a
        cpumap entry a qsize, an xskmap entry the bound word (the slot's second u32) set (docs/maps.md)."""
        if r.kind == "xskmap":
            return any(self.region_mem(r)[off + 4 : off + 8])
        return r.kind not in SPARSE_KINDS or any(self.region_mem(r)[off : off + 4])

    def _xsk_update(self, r: MapRegion, idx: int, value: bytes, flags: int) -> int:
        """An xskmap entry from the host: the queue id its AF_XDP socket is bound to, and the socket's receive ring
        size as the slot's second word (nonzero: bound); the kernel's xsk_map_update_elem flag checks."""
        off = r.slot_addr(idx)
        if self.present(r, off) and flags == BPF_NOEXIST:
            return -EEXIST
        if not self.present(r, off) and flags == BPF_EXIST:
            return -ENOENT
        self.region_mem(r)[off : off + 8] = value + params.XSK_RING_FRAMES.to_bytes(4, "little")
        self.last_writes = 1
        return 0

    def _inner_ok(self, r: MapRegion, value: bytes) -> bool:
        """A map of maps' value: the id of an inner map that fits its template (MapLayout.fits_inner)."""
        return self.layout.fits_inner(r, int.from_bytes(value[:4], "little"))

    def inner_handle(self, map_id: int, key: bytes) -> int:
        """A program's lookup in a map of maps: the handle of the inner map at key (MAP_HANDLE_BASE + its id), 0
        when the slot is empty; sets last_probes like lookup_offset."""
        off = self.lookup_offset(map_id, key, from_program=True)
        return 0 if off is None else params.MAP_HANDLE_BASE + self._u32(self.layout.region(map_id), off)

    def lookup_offset(self, map_id: int, key: bytes, from_program: bool = True) -> int | None:
        """Byte offset (in map memory) of the value for key, or None. Program lookups refresh LRU stamps."""
        r = self.layout.region(map_id)
        key = self._check_key(r, key)
        self.last_probes = 1
        self.last_writes = 0
        if r.kind in ARRAY_KINDS:
            idx = int.from_bytes(key, "little")
            if idx >= r.max_entries:
                return None
            off = r.slot_addr(idx)
            if not self.present(r, off):
                return None  # an empty devmap, cpumap or xskmap entry
            return off
        if r.kind in HASH_KINDS:
            slot, _ = self._hash_find(r, key)
            if slot is None:
                return None
            if r.kind == "lru_hash" and from_program:
                self._lru_touch(r, slot)
                self.last_writes = 2  # the slot's stamp, the region's clock
            return r.slot_addr(slot) + r.value_offset
        # lpm_trie: longest prefix among entries with prefixlen <= the key's prefixlen
        want = min(int.from_bytes(key[:4], "little"), 8 * (r.key_size - 4))
        data = key[4:]
        best, best_len = None, -1
        entries = self._lpm_entries(r)
        self.last_probes = max(1, self._lpm_high(r))
        for i, plen, d in entries:
            if best_len < plen <= want and self._prefix_match(d, data, plen):
                best, best_len = i, plen
        return None if best is None else r.slot_addr(best) + r.value_offset

    def lookup(self, map_id: int, key: bytes, from_program: bool = False) -> bytes | None:
        """The value bytes for key (host view: no LRU refresh), or None."""
        off = self.lookup_offset(map_id, key, from_program)
        if off is None:
            return None
        r = self.layout.region(map_id)
        return bytes(self.region_mem(r)[off : off + r.value_size])

    def update(self, map_id: int, key: bytes, value: bytes, flags: int = BPF_ANY) -> int:
        """bpf_map_update_elem: 0 or the kernel's negative errno."""
        r = self.layout.region(map_id)
        key = self._check_key(r, key)
        if len(value) != r.value_size:
            raise MapError(f"map {r.name}: value of {len(value)} bytes, the map's value size is {r.value_size}")
        self.last_probes = 1
        self.last_writes = 0
        if flags not in (BPF_ANY, BPF_NOEXIST, BPF_EXIST):
            return -EINVAL
        if r.kind in ARRAY_KINDS:
            idx = int.from_bytes(key, "little")
            if idx >= r.max_entries:
                return -E2BIG
            if r.kind == "xskmap":
                return self._xsk_update(r, idx, value, flags)
            if r.kind == "array_of_maps" and (flags != BPF_ANY or not self._inner_ok(r, value)):
                return -EINVAL  # the kernel's fd arrays take BPF_ANY only, and a map that fits the template
            if flags == BPF_NOEXIST:
                return -EEXIST
            if r.kind == "devmap" and r.value_size == 8 and value[4:] != bytes(4):
                raise MapError(f"map {r.name}: {DEVMAP_PROG_REFUSAL}")
            off = r.slot_addr(idx)
            if r.kind == "cpumap" and int.from_bytes(value[:4], "little") > params.CPUMAP_QSIZE_MAX:
                return -EOVERFLOW
            if r.kind == "cpumap" and not any(value[:4]):
                value = bytes(r.value_size)  # qsize 0 removes the entry, as in the kernel
            self.region_mem(r)[off : off + r.value_size] = value
            self.last_writes = windows(r.value_size)
            return 0
        if r.kind in HASH_KINDS:
            if r.kind == "devmap_hash" and r.value_size == 8 and value[4:] != bytes(4):
                raise MapError(f"map {r.name}: {DEVMAP_PROG_REFUSAL}")
            if r.kind == "hash_of_maps" and not self._inner_ok(r, value):
                return -EINVAL
            slot, free = self._hash_find(r, key)
            if slot is not None and flags == BPF_NOEXIST:
                return -EEXIST
            if slot is None and flags == BPF_EXIST and r.kind != "devmap_hash":
                return -ENOENT
            # the slot from its start to the value's end; the header (new entry, LRU clock); the victim's slot
            writes = windows(r.value_offset + r.value_size) + (slot is None or r.kind == "lru_hash")
            if slot is None:
                if self._u32(r, r.offset) >= r.max_entries:
                    if r.kind != "lru_hash":
                        return -E2BIG
                    victim = self._lru_victim(r)
                    if victim < 0:  # a corrupted count: full, and no used slot to evict
                        return -E2BIG
                    self._hash_remove(r, victim)
                    slot, free = self._hash_find(r, key)
                    self.last_probes += r.slots  # the victim scan visits every bucket (docs/helpers.md)
                    writes += windows(r.slot_size)
                slot = free
                if slot is None:  # a corrupted header or slots (buckets >= 2 * max_entries leaves a free one)
                    return -E2BIG
                base = r.slot_addr(slot)
                self.region_mem(r)[base] = USED
                self.region_mem(r)[base + r.key_offset : base + r.key_offset + r.key_size] = key
                self._set_u32(r, r.offset, self._u32(r, r.offset) + 1)
            base = r.slot_addr(slot)
            self.region_mem(r)[base + r.value_offset : base + r.value_offset + r.value_size] = value
            if r.kind == "lru_hash":
                self._lru_touch(r, slot)
            self.last_writes = writes
            return 0
        # lpm_trie
        plen = int.from_bytes(key[:4], "little")
        if plen > 8 * (r.key_size - 4):
            return -EINVAL
        slot = self._lpm_exact(r, plen, key[4:])
        high = self._lpm_high(r)
        self.last_probes = max(1, high)
        if slot is not None and flags == BPF_NOEXIST:
            return -EEXIST
        if slot is None and flags == BPF_EXIST:
            return -ENOENT
        if slot is None:
            # the first free slot below the high-water mark, else the mark (the hardware's scan); a corrupted
            # header with no room left is a full map
            slot = next((i for i in range(high) if self.region_mem(r)[r.slot_addr(i)] != USED), high)
            if self._u32(r, r.offset) >= r.max_entries or slot >= r.slots:
                return -ENOSPC
            self._set_u32(r, r.offset, self._u32(r, r.offset) + 1)
        base = r.slot_addr(slot)
        self.region_mem(r)[base] = USED
        self._set_u32(r, base + 4, plen)
        self.region_mem(r)[base + r.key_offset : base + r.key_offset + r.key_size - 4] = key[4:]
        self.region_mem(r)[base + r.value_offset : base + r.value_offset + r.value_size] = value
        self._set_u32(r, r.offset + 8, max(slot + 1, high))
        self.last_writes = windows(r.value_offset + r.value_size) + 1  # the slot, the header
        return 0

    def delete(self, map_id: int, key: bytes) -> int:
        """bpf_map_delete_elem: 0 or the kernel's negative errno."""
        r = self.layout.region(map_id)
        key = self._check_key(r, key)
        self.last_probes = 1
        self.last_writes = 0
        if r.kind in ("array", "percpu_array"):
            return -EINVAL
        if r.kind == "array_of_maps":  # the kernel's fd_array_map_delete_elem
            idx = int.from_bytes(key, "little")
            if idx >= r.max_entries:
                return -E2BIG
            off = r.slot_addr(idx)
            if not self.present(r, off):
                return -ENOENT
            self.region_mem(r)[off : off + r.slot_size] = bytes(r.slot_size)
            self.last_writes = windows(r.slot_size)
            return 0
        if r.kind in SPARSE_KINDS:
            idx = int.from_bytes(key, "little")
            if idx >= r.max_entries:
                return -EINVAL
            off = r.slot_addr(idx)
            self.region_mem(r)[off : off + r.slot_size] = bytes(r.slot_size)
            self.last_writes = windows(r.slot_size)
            return 0
        if r.kind in HASH_KINDS:
            slot, _ = self._hash_find(r, key)
            if slot is None:
                return -ENOENT
            self._hash_remove(r, slot)
            self.last_writes = windows(r.slot_size) + 1  # the slot, the header
            return 0
        slot = self._lpm_exact(r, int.from_bytes(key[:4], "little"), key[4:])
        high = self._lpm_high(r)
        self.last_probes = max(1, high)
        if slot is None:
            return -ENOENT
        base = r.slot_addr(slot)
        self.region_mem(r)[base : base + r.slot_size] = bytes(r.slot_size)
        self._set_u32(r, r.offset, self._u32(r, r.offset) - 1)
        self._lpm_set_high(r, high)
        self.last_writes = windows(r.slot_size) + 1  # the slot, the header
        return 0

    # --- host views --------------------------------------------------------------------------------------------------
    def dump_map(self, map_id: int) -> Mapping[bytes, bytes]:
        r = self.layout.region(map_id)
        out: dict[bytes, bytes] = {}
        if r.kind in EVENT_KINDS:
            return out
        if r.kind in ("array", "percpu_array"):
            return self.array_dump(r)
        if r.kind in ARRAY_KINDS:
            for i in range(r.max_entries):
                off = r.slot_addr(i)
                value = bytes(self.region_mem(r)[off : off + r.value_size])
                if not self.present(r, off):
                    continue
                out[i.to_bytes(4, "little")] = value
        elif r.kind in HASH_KINDS:
            mem = self.region_mem(r)
            # (off chip only the written pages can hold a used slot: a map of millions of slots dumps fast)
            slots = (mem.touched(r.slot_addr(0), r.slot_size, r.slots) if isinstance(mem, SparseMemory)
                     else range(r.slots))
            for i in slots:
                base = r.slot_addr(i)
                if self.region_mem(r)[base] == USED:
                    key = bytes(self.region_mem(r)[base + r.key_offset : base + r.key_offset + r.key_size])
                    out[key] = bytes(self.region_mem(r)[base + r.value_offset : base + r.value_offset + r.value_size])
        else:
            for i, plen, data in self._lpm_entries(r):
                base = r.slot_addr(i)
                out[plen.to_bytes(4, "little") + data] = bytes(
                    self.region_mem(r)[base + r.value_offset : base + r.value_offset + r.value_size])
        return out

    def array_dump(self, r: MapRegion) -> ArrayDump:
        """A plain array's values as one blob (its slots are value_size rounded to 8 bytes apart)."""
        start, end = r.slot_addr(0), r.slot_addr(r.max_entries)
        mem = self.region_mem(r)
        if isinstance(mem, SparseMemory):  # off chip: zeros but the slots in written pages
            vs = r.value_size
            blob = bytearray(r.max_entries * vs)
            for i in mem.touched(start, r.slot_size, r.max_entries):
                off = start + i * r.slot_size
                blob[i * vs : (i + 1) * vs] = mem[off : off + vs]
            return ArrayDump(bytes(blob), vs)
        mv = memoryview(bytes(mem[start:end]))
        if r.slot_size == r.value_size:
            return ArrayDump(mv.tobytes(), r.value_size)
        vs = r.value_size
        return ArrayDump(b"".join(mv[o : o + vs] for o in range(0, end - start, r.slot_size)), vs)

    def dump(self) -> dict[str, Mapping[bytes, bytes]]:
        """Map name -> {key: value}; arrays list every index, devmaps their non-empty entries."""
        return {r.name: self.dump_map(r.id) for r in self.layout.regions if r.kind not in EVENT_KINDS}

    def apply_config(self, cfg: dict | str | os.PathLike[str], source: str | None = None) -> None:
        """Load {"maps": {name: [{"key": hex, "value": hex}, ...]}} (or the JSON file at that path) with BPF_ANY
        updates. Errors are MapErrors naming the source (file), the map and the entry."""
        if not isinstance(cfg, dict):
            source = source or str(cfg)
            cfg = load_map_config(cfg)
        source = source or "map config"
        for name, pairs in check_map_config(cfg, source).items():
            if name in self.layout.unused:
                continue  # not on the NIC: the program never references it
            try:
                map_id = self.layout.map_id(name)
            except MapError:
                raise MapError(f"{source}: no map named {name!r} in the program "
                               f"(maps: {', '.join(self.layout.by_name) or 'none'})") from None
            r = self.layout.region(map_id)
            if pairs and r.kind in OUTER_KINDS:
                raise MapError(f"{source}: maps.{name}: map {name} is a map of maps: its slots are set with "
                               "\"inner_maps\" (inner maps the loader creates)")
            for i, (key, value) in enumerate(pairs):
                where = f"{source}: maps.{name}[{i}]"
                if isinstance(value, str):  # a PROG_ARRAY entry naming a program
                    if r.kind != "prog_array":
                        raise MapError(f"{where}.prog: map {name} is a {r.kind}, only a prog_array entry names a "
                                       "program")
                    try:
                        value = self.layout.prog_value(value)
                    except MapError as exc:
                        raise MapError(f"{where}.prog: {exc}") from None
                if len(key) != r.key_size:
                    raise MapError(f"{where}.key: {len(key)} bytes, map {name} has {r.key_size}-byte keys")
                if len(value) != r.value_size:
                    raise MapError(f"{where}.value: {len(value)} bytes, map {name} has {r.value_size}-byte values")
                try:
                    err = self.update(map_id, key, value, BPF_ANY)
                except MapError as exc:
                    raise MapError(f"{where}: {exc}") from None
                if err:
                    raise MapError(f"{where}: map {name}: initial entry {key.hex()} rejected "
                                   f"({errno_text(err)}{_why_rejected(r, key, err)})")

    def copy(self) -> MapState:
        other = MapState.__new__(MapState)
        other.layout = self.layout
        other.mem = bytearray(self.mem)
        other.tiers = {t: m.copy() for t, m in self.tiers.items()}
        other.last_probes = 0
        other.last_writes = 0
        return other
