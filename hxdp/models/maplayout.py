"""Map memory layout: where MapLayout places a program's maps in the map memory tiers, and the regions' format.

The byte format is docs/maps.md (layout version LAYOUT_VERSION); MapState (hxdp.models.maps) gives it kernel
semantics.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.frontend.program import MapDef, Program

LAYOUT_VERSION = 1
REGION_ALIGN = 64  # every map region starts on a 64-byte boundary (four 128-bit map lines)
HEADER_BYTES = 16  # hash/LPM regions: u32 count, u32 lru clock, u32 high-water mark, u32 reserved
SLOT_HEADER = 8  # hash/LPM slots: u8 state, 3 bytes pad, u32 LRU stamp (hash) or prefixlen (LPM)

ARRAY_KINDS = {"array", "percpu_array", "devmap", "cpumap", "xskmap", "prog_array", "array_of_maps"}
# array maps whose entries can be absent (docs/maps.md): devmap ifindex 0, cpumap qsize 0, xskmap no socket bound,
# prog_array entry row + 1 = 0, array_of_maps inner map id 0
SPARSE_KINDS = {"devmap", "cpumap", "xskmap", "prog_array", "array_of_maps"}
HASH_KINDS = {"hash", "percpu_hash", "lru_hash", "devmap_hash", "hash_of_maps"}
# maps of maps: a value is an inner map's id (docs/maps.md), a program's lookup returns that map's handle
OUTER_KINDS = {"array_of_maps", "hash_of_maps"}
_TEMPLATE_FIELDS = ("type", "key_size", "value_size", "max_entries", "flags")
# maps that hold no entries: their helpers send records to the host through the event ring (docs/maps.md)
EVENT_KINDS = {"perf_event_array", "ringbuf"}
RINGBUF_PAGE = 4096  # a ring's size is a power of two multiple of the page size, as Linux requires


class MapError(HxdpError):
    """A map the hardware cannot hold, or a bad map operation from the host."""



def round8(n: int) -> int:
    return (n + 7) & ~7


def next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p <<= 1
    return p



@dataclass
class MapRegion:
    """Where one map lives in map memory and how its bytes are arranged."""

    id: int
    name: str
    type: int
    kind: str
    key_size: int
    value_size: int
    max_entries: int
    flags: int
    section: str
    offset: int  # byte offset of the region in map memory
    size: int  # bytes of the region
    slots: int  # array: max_entries; hash: buckets (power of two); lpm: max_entries
    slot_size: int  # array: value stride; hash/lpm: SLOT_HEADER + round8(key part) + round8(value)
    key_offset: int  # in a slot (hash/lpm), 0 for arrays
    value_offset: int  # in a slot (hash/lpm), 0 for arrays
    data_offset: int  # first slot, from the region start (HEADER_BYTES for hash/lpm, 0 for arrays)
    initial: str = ""  # hex of the initial bytes (global data)
    prog_entries: dict[str, str] = field(default_factory=dict)  # a PROG_ARRAY the loader fills: index -> program
    tier: str = "bram"  # the memory holding the region (params.TIERS); `offset` is in that memory
    # a map of maps: its inner-map template (type, key_size, value_size, max_entries, flags) and the inner maps
    # the loader sets in its slots (key hex -> inner map name)
    inner: dict[str, int] = field(default_factory=dict)
    inner_entries: dict[str, str] = field(default_factory=dict)

    def slot_addr(self, i: int) -> int:
        """Byte offset of slot i in its tier's memory."""
        return self.offset + self.data_offset + i * self.slot_size

    @property
    def base(self) -> int:
        """The 32-bit address of the region's first byte."""
        return params.TIER_BASE[self.tier] + self.offset

    @property
    def prog_rdonly(self) -> bool:
        """The program may not write its values: BPF_F_RDONLY_PROG (.rodata maps have it), or a kind the kernel makes
        read-only to programs whatever the flags (params.PROG_RDONLY_KINDS: every devmap). Their lookups return
        pointers tagged read-only, which the hardware's map guard refuses to store through (contract section 4)."""
        return bool(self.flags & params.BPF_F_RDONLY_PROG) or self.kind in params.PROG_RDONLY_KINDS


def _round(n: int, grain: int) -> int:
    return (n + grain - 1) // grain * grain


def _region(map_id: int, m: MapDef, offset: int, tier: str = "bram") -> MapRegion:
    kind = params.MAP_TYPES.get(m.type)
    if kind is None:
        raise MapError(f"map {m.name}: map type {m.type} is not supported by the hardware maps "
                       f"(supported: {', '.join(params.MAP_TYPES.values())})")
    if tier not in params.TIERS:
        raise MapError(f"map {m.name}: no map memory tier {tier!r} (tiers: {', '.join(params.TIERS)})")
    if kind in EVENT_KINDS:
        if tier != "bram":
            raise MapError(f"map {m.name}: a {kind} stays on chip (its records are the event unit's), not in {tier}")
        return _event_region(map_id, m, kind, offset)
    if m.max_entries == 0:
        raise MapError(f"map {m.name}: max_entries is 0 in the object, its loader sizes it at load time: give "
                       f"--map {m.name}.max_entries=N (or \"max_entries\": {{\"{m.name}\": N}} in the map "
                       "configuration)")
    if m.max_entries < 0 or m.value_size <= 0:
        raise MapError(f"map {m.name}: max_entries {m.max_entries} / value_size {m.value_size} must be positive")
    # values start on the tier's granularity and are padded to it (their pointers' tags count in it, docs/maps.md)
    grain = max(8, params.TIER_GRAIN[tier])
    key_off = value_off = data_off = 0
    if kind in OUTER_KINDS and m.value_size != 4:
        raise MapError(f"map {m.name}: a {kind} has 4-byte values (inner map ids), not {m.value_size}")
    if kind == "hash_of_maps":
        # the inner map id lives in the slot header's second word (a map of maps has no LRU stamp): the map FSM
        # reads it with the slot's state in the probe's first window, whatever the key's length
        if m.key_size <= 0:
            raise MapError(f"map {m.name}: key size must be positive")
        slots = next_pow2(max(2 * m.max_entries, 2))
        key_off, value_off, data_off = SLOT_HEADER, 4, HEADER_BYTES
        slot_size = SLOT_HEADER + round8(m.key_size)
    elif kind in ARRAY_KINDS:
        if m.key_size != 4:
            raise MapError(f"map {m.name}: {kind} needs a 4-byte key, not {m.key_size}")
        slots, slot_size = m.max_entries, _round(m.value_size, grain)
    elif kind in HASH_KINDS:
        if m.key_size <= 0:
            raise MapError(f"map {m.name}: key size must be positive")
        slots = next_pow2(max(2 * m.max_entries, 2))
        key_off, value_off = SLOT_HEADER, _round(SLOT_HEADER + round8(m.key_size), grain)
        slot_size, data_off = value_off + _round(m.value_size, grain), HEADER_BYTES
    else:  # lpm_trie
        if not 5 <= m.key_size <= 4 + 256:
            raise MapError(f"map {m.name}: LPM trie key size {m.key_size} must be 4 + 1..256")
        slots = m.max_entries
        key_off, value_off = SLOT_HEADER, _round(SLOT_HEADER + round8(m.key_size - 4), grain)
        slot_size, data_off = value_off + _round(m.value_size, grain), HEADER_BYTES
    if m.value_size > params.tier_value_max(tier):
        raise MapError(f"map {m.name}: values of {m.value_size} bytes are longer than a map-value pointer's tag "
                       f"describes in {tier} ({params.tier_value_max(tier)} bytes)")
    if kind in ("devmap", "devmap_hash") and m.value_size not in (4, 8):
        raise MapError(f"map {m.name}: devmap value must be 4 (ifindex) or 8 bytes (struct bpf_devmap_val)")
    if kind == "cpumap" and m.value_size not in (4, 8):
        raise MapError(f"map {m.name}: cpumap value must be 4 (qsize) or 8 bytes (struct bpf_cpumap_val)")
    if kind == "xskmap" and m.value_size != 4:
        raise MapError(f"map {m.name}: xskmap value must be 4 bytes (the kernel's socket fd; here the queue id)")
    if kind == "prog_array" and (m.key_size, m.value_size) != (4, 4):
        raise MapError(f"map {m.name}: prog_array needs 4-byte keys and values, not {m.key_size}/{m.value_size}")
    if kind in ("devmap", "devmap_hash") and m.key_size != 4:
        raise MapError(f"map {m.name}: {kind} needs a 4-byte key, not {m.key_size}")
    if kind in OUTER_KINDS and m.inner is None:
        raise MapError(f"map {m.name}: a {kind} needs its inner-map template (`__array(values, struct ...)` in its "
                       "BTF definition)")
    size = data_off + slots * slot_size
    initial = (m.initial or b"").hex()
    entries = {str(k): v for k, v in (m.prog_entries or {}).items()}
    template = {f: getattr(m.inner, f) for f in _TEMPLATE_FIELDS} if kind in OUTER_KINDS and m.inner else {}
    inner = {k.hex(): v for k, v in (m.inner_entries or {}).items()}
    return MapRegion(map_id, m.name, m.type, kind, m.key_size, m.value_size, m.max_entries, m.flags, m.section,
                     offset, size, slots, slot_size, key_off, value_off, data_off, initial, entries, tier, template,
                     inner)


_OPTIONAL = ("prog_entries", "inner", "inner_entries")  # layout fields present only where used (older files lack them)


def _region_doc(r: MapRegion) -> dict:
    """A region in the layout file; `prog_entries` only where the loader fills a PROG_ARRAY, `inner` and
    `inner_entries` only for a map of maps, `tier` only off chip (older files lack them)."""
    doc = asdict(r)
    for f in _OPTIONAL:
        if not doc[f]:
            del doc[f]
    if r.tier == "bram":
        del doc["tier"]
    return doc


def _event_region(map_id: int, m: MapDef, kind: str, offset: int) -> MapRegion:
    """A PERF_EVENT_ARRAY has no bytes in map memory: its slots are the NIC's CPUs (max_entries 0 means one per
    CPU, as libbpf sizes it). A RINGBUF region is its ring: the records the running packet reserved, each behind
    its 8-byte header (the producer position is a register of the event unit, docs/maps.md)."""
    if kind == "perf_event_array":
        if m.key_size != 4 or m.value_size != 4:
            raise MapError(f"map {m.name}: perf_event_array needs 4-byte keys and values, not {m.key_size}/"
                           f"{m.value_size}")
        entries = m.max_entries or params.EVENT_CPUS
        return MapRegion(map_id, m.name, m.type, kind, 4, 4, entries, m.flags, m.section, offset, 0, entries, 0,
                         0, 0, 0)
    size = m.max_entries
    if m.key_size or m.value_size:
        raise MapError(f"map {m.name}: ringbuf has no keys or values (key_size and value_size 0)")
    if size < RINGBUF_PAGE or size & (size - 1):
        raise MapError(f"map {m.name}: ringbuf size (max_entries) {size} must be a power of two multiple of "
                       f"{RINGBUF_PAGE} bytes")
    return MapRegion(map_id, m.name, m.type, kind, 0, 0, size, m.flags, m.section, offset, size, 1, 0, 0, 0, 0)


_STR_FIELDS = ("name", "kind", "section", "initial", "tier")
_OPTIONAL_FIELDS = {"initial": "", "prog_entries": {}, "tier": "bram"}


def _checked_region(doc: dict, i: int) -> MapRegion:
    """A layout file's region, held to the one schema: field types, then every derived field (kind, slots, slot
    size, offsets in a slot, size) equal to what the compiler computes from the map's definition."""
    entries = doc.get("prog_entries", {})
    if not isinstance(entries, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items()):
        raise MapError(f"map layout: maps[{i}].prog_entries must map indexes to program names")
    slots = doc.get("inner_entries", {})
    if not isinstance(slots, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in slots.items()):
        raise MapError(f"map layout: maps[{i}].inner_entries must map keys (hex) to inner map names")
    template = doc.get("inner", {})
    if not isinstance(template, dict) or set(template) - set(_TEMPLATE_FIELDS) or \
            not all(type(v) is int and v >= 0 for v in template.values()):
        raise MapError(f"map layout: maps[{i}].inner must be an inner-map template {{{', '.join(_TEMPLATE_FIELDS)}}}")
    for f in fields(MapRegion):
        if f.name in _OPTIONAL:
            continue
        v = doc.get(f.name, _OPTIONAL_FIELDS.get(f.name, ""))
        want_str = f.name in _STR_FIELDS
        if (want_str and not isinstance(v, str)) or (not want_str and (type(v) is not int or v < 0)):
            what = "a string" if want_str else "a whole number, 0 or more"
            raise MapError(f"map layout: maps[{i}].{f.name} is {v!r}, expected {what}")
    r = MapRegion(**doc)
    if r.tier not in params.TIERS:
        raise MapError(f"map layout: maps[{i}].tier is {r.tier!r}, not one of {', '.join(params.TIERS)}")
    if r.id != i:
        raise MapError(f"map layout: maps[{i}] has id {r.id} (ids are 0..n-1 in order)")
    try:
        initial = bytes.fromhex(r.initial)
    except ValueError:
        raise MapError(f"map layout: maps[{i}].initial is not hex bytes") from None
    inner = MapDef("inner", **{f: r.inner.get(f, 0) for f in _TEMPLATE_FIELDS}) if r.inner else None
    ref = _region(r.id, MapDef(r.name, r.type, r.key_size, r.value_size, r.max_entries, r.flags, initial or None,
                               r.section, inner=inner), r.offset, r.tier)
    bad = [f.name for f in fields(MapRegion)
           if f.name not in ("initial", *_OPTIONAL) and getattr(ref, f.name) != getattr(r, f.name)]
    if bad:
        raise MapError(f"map layout: maps[{i}] ({r.name}): {bad[0]} {getattr(r, bad[0])!r} is not what a "
                       f"{ref.kind} map of these sizes has ({getattr(ref, bad[0])!r}); recompile the ROM")
    if len(initial) > r.size:
        raise MapError(f"map layout: maps[{i}] ({r.name}): {len(initial)} initial bytes, the region has {r.size}")
    return r


def _check_placement(regions: list[MapRegion], mem_bytes: int) -> None:
    """Regions aligned, inside their tier's memory (on chip: `mem_bytes`), not overlapping, names unique."""
    for tier in params.TIERS:
        end = 0
        limit, where = (mem_bytes, "map memory") if tier == "bram" else (params.TIER_BYTES[tier], tier)
        for r in sorted((x for x in regions if x.tier == tier), key=lambda x: x.offset):
            if r.offset % REGION_ALIGN:
                raise MapError(f"map layout: map {r.name} at offset {r.offset}, not on a {REGION_ALIGN}-byte "
                               "boundary")
            if r.offset < end:
                raise MapError(f"map layout: map {r.name} at offset {r.offset} overlaps the region before it")
            end = r.offset + r.size
            if end > limit:
                raise MapError(f"map layout: map {r.name} ends at byte {end}, {where} holds {limit}")
    names = [r.name for r in regions]
    if len(set(names)) != len(names):
        raise MapError(f"map layout: map name {next(n for n in names if names.count(n) > 1)!r} appears twice")


def _tier_size(m: MapDef, tier: str) -> int | None:
    """Bytes the map takes in `tier`, rounded to the region alignment, or None when it cannot live there."""
    try:
        return _round(_region(0, m, 0, tier).size, REGION_ALIGN)
    except MapError:
        return None


def place_tiers(maps: list[MapDef], room: dict[str, int]) -> list[str]:
    """The tier of each map: the user's (MapDef.tier) where given; the others on chip when they all fit there (so
    every program that fits 1 MiB keeps its layout), else, smallest first (small maps are the hot ones: arrays of
    counters, configuration), each in the fastest tier with room left (off chip: params.OFF_CHIP_KINDS only). A map
    that fits no tier keeps `bram`, where placement then reports its size."""
    tiers: list[str | None] = [m.tier for m in maps]
    free = dict(room)
    for m in maps:
        if m.tier is not None and m.tier not in params.TIERS:
            raise MapError(f"map {m.name}: no map memory tier {m.tier!r} (tiers: {', '.join(params.TIERS)})")
        if m.tier is not None:
            free[m.tier] -= _tier_size(m, m.tier) or 0
    auto = [i for i, t in enumerate(tiers) if t is None]
    on_chip = [_tier_size(maps[i], "bram") for i in auto]
    if all(n is not None for n in on_chip) and sum(n or 0 for n in on_chip) <= free["bram"]:
        return [t or "bram" for t in tiers]
    for i in sorted(auto, key=lambda j: (_tier_size(maps[j], "bram") or 1 << 62, j)):
        kind = params.LINUX_MAP_TYPES.get(maps[i].type)
        for tier in params.TIERS if kind in params.OFF_CHIP_KINDS else ("bram",):
            need = _tier_size(maps[i], tier)
            if need is not None and need <= free[tier]:
                tiers[i], free[tier] = tier, free[tier] - need
                break
        else:
            tiers[i] = "bram"
    return [t or "bram" for t in tiers]


class MapLayout:
    """Deterministic placement of a program's maps in map memory: map id = index in Program.maps."""

    def __init__(self, regions: list[MapRegion], mem_bytes: int = params.MAP_MEM_BYTES,
                 unused: list[str] | None = None, fib: bool = False) -> None:
        self.regions = regions
        self.mem_bytes = mem_bytes
        self.by_name = {r.name: r for r in regions}
        self.unused = list(unused or [])  # maps of the object the program never references: not placed
        # the programs resident in instruction memory and their entry rows (tail calls; the main one at row 0):
        # a PROG_ARRAY entry holds the row + 1 of its program, 0 when empty (docs/maps.md)
        self.programs: dict[str, int] = {}
        self.fib = fib  # the FIB region (params.FIB_OFFSET, FIB_BYTES) is placed: the program calls fib_lookup

    @classmethod
    def from_maps(cls, maps: list[MapDef], mem_bytes: int = params.MAP_MEM_BYTES,
                  unused: list[str] | None = None, fib: bool = False) -> MapLayout:
        """Each map in its tier (MapDef.tier, else `place_tiers`), each tier's regions in map id order from 0."""
        room = {"bram": params.FIB_OFFSET if fib else mem_bytes, "qdr": params.QDR_BYTES, "ddr": params.DDR_BYTES}
        tiers = place_tiers(maps, room)
        regions: list[MapRegion] = []
        offset = dict.fromkeys(params.TIERS, 0)
        for i, m in enumerate(maps):
            tier = tiers[i]
            r = _region(i, m, offset[tier], tier)
            if r.offset + r.size > room[tier]:
                fits = f" below the FIB of bpf_fib_lookup at {params.FIB_OFFSET}" if fib and tier == "bram" else ""
                where = "map memory" if tier == "bram" else tier
                raise MapError(f"map {m.name}: needs {r.size} bytes at offset {r.offset}, {where} holds "
                               f"{room[tier]} bytes{fits}")
            regions.append(r)
            offset[tier] = _round(r.offset + r.size, REGION_ALIGN)
        layout = cls(regions, mem_bytes, unused, fib)
        layout.check_inner_entries()
        return layout

    def check_inner_entries(self) -> None:
        """Every inner map a map of maps' slot names is a map of the layout, other than a map of maps, with an id
        above 0 (its slot holds the id; 0 is an empty slot)."""
        for r in self.regions:
            for key, name in r.inner_entries.items():
                inner = self.by_name.get(name)
                if inner is None or inner.kind in OUTER_KINDS or inner.id == 0:
                    raise MapError(f"map {r.name}: slot {key} names {name!r}, which is not an inner map of the "
                                   "layout")

    def fits_inner(self, outer: MapRegion, inner_id: int) -> bool:
        """Whether map id `inner_id` may be set in a slot of map of maps `outer`: a map of the layout, other than a
        map of maps, with the outer map's template (as the kernel's bpf_map_meta_equal; id 0 is an empty slot)."""
        if not 0 < inner_id < len(self.regions):
            return False
        m, t = self.regions[inner_id], outer.inner
        if m.kind in OUTER_KINDS or any(getattr(m, f) != t.get(f) for f in ("type", "key_size", "value_size", "flags")):
            return False
        return m.kind not in ("array", "percpu_array") or bool(t.get("flags", 0) & 0x1000) or \
            m.max_entries == t.get("max_entries")

    @classmethod
    def for_program(cls, program: Program, mem_bytes: int = params.MAP_MEM_BYTES, fib: bool = False) -> MapLayout:
        """The layout of a loaded program's maps, the maps it never references named as unused. Its resident
        programs (tail calls) are numbered in order, the main one 0: the sequential model's entry "rows"; the
        compiler replaces them with the ROM's entry rows."""
        layout = cls.from_maps(program.maps, mem_bytes, [m.name for m in program.unused_maps], fib)
        if program.resident or any(r.kind == "prog_array" for r in layout.regions):
            layout.programs = {p.name: i for i, p in enumerate((program, *program.resident))}
        return layout

    def region(self, map_id: int) -> MapRegion:
        if not 0 <= map_id < len(self.regions):
            raise MapError(f"no map with id {map_id} (the program has {len(self.regions)} maps)")
        return self.regions[map_id]

    def map_id(self, name: str) -> int:
        try:
            return self.by_name[name].id
        except KeyError:
            if name in self.unused:
                raise MapError(f"map {name} is not on the NIC: the program never references it") from None
            raise MapError(f"no map named {name!r} (maps: {', '.join(self.by_name) or 'none'})") from None

    def handle(self, map_id: int) -> int:
        self.region(map_id)
        return params.MAP_HANDLE_BASE + map_id

    def map_of_handle(self, handle: int) -> int | None:
        """The map id of an lddw map handle, or None if the value is not a handle of this layout."""
        i = handle - params.MAP_HANDLE_BASE
        return i if 0 <= i < len(self.regions) else None

    def value_addr(self, map_id: int, off: int = 0) -> int:
        """The tagged pointer to byte `off` of entry 0's value (global data sections, arrays)."""
        r = self.region(map_id)
        if r.kind not in ("array", "percpu_array"):
            raise MapError(f"map {r.name}: direct value access needs an array map, not {r.kind}")
        return self.value_pointer(map_id, r.offset) + off

    def value_pointer(self, map_id: int, value_off: int) -> int:
        """The tagged pointer a lookup of map `map_id` returns for the value at byte `value_off` of map memory
        (execution contract section 4: the value's start and length, and whether the program may write it)."""
        r = self.region(map_id)
        return params.map_pointer(value_off, r.value_size, r.prog_rdonly, tier=r.tier)

    def prog_value(self, name: str) -> bytes:
        """The PROG_ARRAY value that names program `name`: its entry row + 1 (u32, little-endian)."""
        if name not in self.programs:
            raise MapError(f"no program named {name!r} in instruction memory (programs: "
                           f"{', '.join(self.programs) or 'none: the ROM holds one program with no PROG_ARRAY'})")
        return (self.programs[name] + 1).to_bytes(4, "little")

    def off_chip_refusal(self, where: str) -> str | None:
        """Why `where` (the VLIW model, the RTL) cannot run this layout: a map placed off chip of a kind the map unit
        does not reach there (params.OFF_CHIP_KINDS), or None. The sequential model runs every kind off chip."""
        r = next((r for r in self.regions if r.tier != "bram" and r.kind not in params.OFF_CHIP_KINDS), None)
        if r is None:
            return None
        return (f"map {r.name} is placed in {r.tier}: not supported by {where} for a {r.kind} map, because the map "
                f"unit reaches only {', '.join(sorted(params.OFF_CHIP_KINDS))} maps off chip (docs/maps.md \"Memory "
                f"tiers\"); the sequential model runs it, or place it on chip (--map {r.name}.tier=bram)")

    def used_spans(self) -> list[tuple[int, int]]:
        """The byte ranges of the on-chip map memory in use: its maps from offset 0, and the FIB region when
        placed."""
        spans = [(0, self.tier_end("bram"))]
        return spans + ([(params.FIB_OFFSET, params.FIB_OFFSET + params.FIB_BYTES)] if self.fib else [])

    def used_bytes(self) -> int:
        """Bytes of the on-chip map memory in use (up to the end of the FIB region when placed)."""
        if self.fib:
            return params.FIB_OFFSET + params.FIB_BYTES
        return self.tier_end("bram")

    def tier_end(self, tier: str) -> int:
        """The end of the last region in `tier` (its memory in use from 0)."""
        return max((r.offset + r.size for r in self.regions if r.tier == tier), default=0)

    def tier_use(self) -> dict[str, dict]:
        """Per tier: the maps placed there, the bytes in use and the capacity (the compile report's "map_tiers")."""
        cap = {"bram": self.mem_bytes, "qdr": params.QDR_BYTES, "ddr": params.DDR_BYTES}
        return {t: {"maps": [r.name for r in self.regions if r.tier == t],
                    "bytes": self.used_bytes() if t == "bram" else self.tier_end(t), "capacity": cap[t]}
                for t in params.TIERS}

    def to_json(self) -> str:
        doc = {"format": "hxdp-map-layout", "version": LAYOUT_VERSION, "map_base": params.MAP_BASE,
               "handle_base": params.MAP_HANDLE_BASE, "mem_bytes": self.mem_bytes,
               "maps": [_region_doc(r) for r in self.regions], "unused": self.unused}
        if self.programs:  # several programs resident (tail calls): their entry rows
            doc["programs"] = [{"name": n, "row": row} for n, row in self.programs.items()]
        if self.fib:
            doc["fib"] = {"offset": params.FIB_OFFSET, "size": params.FIB_BYTES}
        return json.dumps(doc, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> MapLayout:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MapError(f"map layout is not JSON: {exc}") from None
        except RecursionError:
            raise MapError("map layout nested too deeply to be one") from None
        if not isinstance(doc, dict) or doc.get("format") != "hxdp-map-layout":
            raise MapError("not an hxdp map layout (no \"format\": \"hxdp-map-layout\"; the compiler writes "
                           "PROG.maps.json next to PROG.rom)")
        if doc.get("version") != LAYOUT_VERSION:
            raise MapError(f"map layout version {doc.get('version')!r} is not {LAYOUT_VERSION} (recompile the ROM)")
        names = {f.name for f in fields(MapRegion)}
        regions = []
        if not isinstance(doc.get("maps", []), list):
            raise MapError("map layout: \"maps\" must be a list of map regions")
        for i, r in enumerate(doc.get("maps", [])):
            if not isinstance(r, dict) or not names >= set(r) or not set(r) >= names - {"initial", "tier", *_OPTIONAL}:
                raise MapError(f"map layout: maps[{i}] is malformed (fields: {', '.join(sorted(names))})")
            regions.append(_checked_region(r, i))
        unused = doc.get("unused", [])
        if not isinstance(unused, list) or not all(isinstance(n, str) for n in unused):
            raise MapError("map layout: \"unused\" must be a list of map names")
        fib = doc.get("fib")
        if fib is not None and fib != {"offset": params.FIB_OFFSET, "size": params.FIB_BYTES}:
            raise MapError(f"map layout: FIB at {fib} is not where this hardware keeps it (offset "
                           f"{params.FIB_OFFSET}, size {params.FIB_BYTES}): recompile the ROM")
        mem_bytes = doc.get("mem_bytes", params.MAP_MEM_BYTES)
        if type(mem_bytes) is not int or not 0 < mem_bytes <= params.MAP_MEM_BYTES:
            raise MapError(f"map layout: mem_bytes {mem_bytes!r} is not 1..{params.MAP_MEM_BYTES}")
        _check_placement(regions, min(mem_bytes, params.FIB_OFFSET) if fib is not None else mem_bytes)
        layout = cls(regions, mem_bytes, unused, fib is not None)
        layout.check_inner_entries()
        progs = doc.get("programs", [])
        if not isinstance(progs, list) or not all(isinstance(p, dict) and isinstance(p.get("name"), str) and
                                                  isinstance(p.get("row"), int) for p in progs):
            raise MapError('map layout: "programs" must be a list of {"name": program, "row": entry row}')
        layout.programs = {p["name"]: p["row"] for p in progs}
        return layout

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> MapLayout:
        """Read a map layout file (PROG.maps.json); MapError names the file and the problem."""
        try:
            text = Path(path).read_bytes().decode("utf-8")
        except OSError as exc:
            raise MapError(f"{path}: cannot read the map layout: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise MapError(f"{path}: not a map layout (binary data)") from None
        try:
            return cls.from_json(text)
        except MapError as exc:
            raise MapError(f"{path}: {exc}") from None
