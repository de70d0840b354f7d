"""Hardware map memory: MapLayout places every map in one byte array, MapState gives it kernel map semantics.

The byte-level format of every map type is documented in docs/maps.md (layout version LAYOUT_VERSION); the
host, the models and the RTL all compute placements from that text.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.frontend.program import MapDef

LAYOUT_VERSION = 1
REGION_ALIGN = 64  # every map region starts on a 64-byte boundary (four 128-bit map lines)
HEADER_BYTES = 16  # hash/LPM regions: u32 count, u32 lru clock, u32 high-water mark, u32 reserved
SLOT_HEADER = 8  # hash/LPM slots: u8 state, 3 bytes pad, u32 LRU stamp (hash) or prefixlen (LPM)

# slot states
EMPTY, USED, DELETED = 0, 1, 2

# update flags and kernel return codes
BPF_ANY, BPF_NOEXIST, BPF_EXIST = 0, 1, 2
ENOENT, E2BIG, EEXIST, EINVAL, ENOSPC = 2, 7, 17, 22, 28

ARRAY_KINDS = {"array", "percpu_array", "devmap"}
HASH_KINDS = {"hash", "percpu_hash", "lru_hash", "devmap_hash"}

HASH_MULT = 0x9E3779B1


class MapError(HxdpError):
    """A map the hardware cannot hold, or a bad map operation from the host."""


def windows(n: int) -> int:
    """Map-window writes covering n bytes from an 8-byte aligned offset (the helper unit writes one a cycle)."""
    return -(-n // params.MAP_WINDOW_BYTES)


def round8(n: int) -> int:
    return (n + 7) & ~7


def next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p <<= 1
    return p


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


CONFIG_SHAPE = '{"maps": {"<map name>": [{"key": "<hex>", "value": "<hex>"}, ...]}}'


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


def _config_hex(text: object, where: str) -> bytes:
    if not isinstance(text, str):
        raise MapError(f"{where}: expected a hex string, got {type(text).__name__} {text!r}")
    try:
        return bytes.fromhex(text.replace(" ", "").replace("_", ""))
    except ValueError:
        raise MapError(f"{where}: not hex bytes: {text!r}") from None


def check_map_config(cfg: object, source: str = "map config") -> dict[str, list[tuple[bytes, bytes]]]:
    """Validate the shape of an initial map configuration; {map name: [(key, value), ...]} with the hex decoded.

    Every error is a MapError naming `source` (the file) and the entry, e.g. `f.json: maps.tx_port[0].key: ...`.
    Sizes are checked against the program's maps by MapState.apply_config and KernelProgram.apply_config."""
    if not isinstance(cfg, dict):
        raise MapError(f"{source}: top level must be a JSON object {CONFIG_SHAPE}, not {type(cfg).__name__}")
    unknown = sorted(set(cfg) - {"maps", "comment"})
    if unknown:
        raise MapError(f"{source}: unknown top-level key {unknown[0]!r} (expected {CONFIG_SHAPE})")
    maps = cfg.get("maps", {})
    if maps is None:
        maps = {}
    if not isinstance(maps, dict):
        raise MapError(f"{source}: \"maps\" must be an object {{map name: [entries]}}, not {type(maps).__name__}")
    out: dict[str, list[tuple[bytes, bytes]]] = {}
    for name, entries in maps.items():
        if not isinstance(entries, list):
            raise MapError(f"{source}: maps.{name}: must be a list of {{\"key\": hex, \"value\": hex}}, "
                           f"not {type(entries).__name__}")
        pairs = []
        for i, e in enumerate(entries):
            where = f"{source}: maps.{name}[{i}]"
            if not isinstance(e, dict) or "key" not in e or "value" not in e:
                raise MapError(f'{where}: an entry needs "key" and "value" (hex strings)')
            extra = sorted(set(e) - {"key", "value", "comment"})
            if extra:
                raise MapError(f"{where}: unknown field {extra[0]!r} (an entry has \"key\" and \"value\")")
            pairs.append((_config_hex(e["key"], where + ".key"), _config_hex(e["value"], where + ".value")))
        out[str(name)] = pairs
    return out


def load_map_config(path: str | os.PathLike[str]) -> dict:
    """Read a map configuration file (JSON, see check_map_config); MapError names the file and the problem."""
    try:
        blob = Path(path).read_bytes()
    except OSError as exc:
        raise MapError(f"{path}: cannot read the map configuration: {exc.strerror}") from None
    try:
        cfg = json.loads(blob.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MapError(f"{path}: not a JSON map configuration (byte 0x{blob[exc.start]:02x} at offset "
                       f"{exc.start})") from None
    except json.JSONDecodeError as exc:
        raise MapError(f"{path}:{exc.lineno}:{exc.colno}: map configuration is not valid JSON: {exc.msg}") from None
    check_map_config(cfg, str(path))
    return cfg


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

    def slot_addr(self, i: int) -> int:
        """Byte offset of slot i in map memory."""
        return self.offset + self.data_offset + i * self.slot_size


def _region(map_id: int, m: MapDef, offset: int) -> MapRegion:
    kind = params.MAP_TYPES.get(m.type)
    if kind is None:
        raise MapError(f"map {m.name}: map type {m.type} is not supported by the hardware maps "
                       f"(supported: {', '.join(params.MAP_TYPES.values())})")
    if m.max_entries <= 0 or m.value_size <= 0:
        raise MapError(f"map {m.name}: max_entries {m.max_entries} / value_size {m.value_size} must be positive")
    key_off = value_off = data_off = 0
    if kind in ARRAY_KINDS:
        if m.key_size != 4:
            raise MapError(f"map {m.name}: {kind} needs a 4-byte key, not {m.key_size}")
        slots, slot_size = m.max_entries, round8(m.value_size)
    elif kind in HASH_KINDS:
        if m.key_size <= 0:
            raise MapError(f"map {m.name}: key size must be positive")
        slots = next_pow2(max(2 * m.max_entries, 2))
        key_off, value_off = SLOT_HEADER, SLOT_HEADER + round8(m.key_size)
        slot_size, data_off = value_off + round8(m.value_size), HEADER_BYTES
    else:  # lpm_trie
        if not 5 <= m.key_size <= 4 + 256:
            raise MapError(f"map {m.name}: LPM trie key size {m.key_size} must be 4 + 1..256")
        slots = m.max_entries
        key_off, value_off = SLOT_HEADER, SLOT_HEADER + round8(m.key_size - 4)
        slot_size, data_off = value_off + round8(m.value_size), HEADER_BYTES
    if kind in ("devmap", "devmap_hash") and m.value_size not in (4, 8):
        raise MapError(f"map {m.name}: devmap value must be 4 (ifindex) or 8 bytes (struct bpf_devmap_val)")
    if kind in ("devmap", "devmap_hash") and m.key_size != 4:
        raise MapError(f"map {m.name}: {kind} needs a 4-byte key, not {m.key_size}")
    size = data_off + slots * slot_size
    initial = (m.initial or b"").hex()
    return MapRegion(map_id, m.name, m.type, kind, m.key_size, m.value_size, m.max_entries, m.flags, m.section,
                     offset, size, slots, slot_size, key_off, value_off, data_off, initial)


class MapLayout:
    """Deterministic placement of a program's maps in map memory: map id = index in Program.maps."""

    def __init__(self, regions: list[MapRegion], mem_bytes: int = params.MAP_MEM_BYTES) -> None:
        self.regions = regions
        self.mem_bytes = mem_bytes
        self.by_name = {r.name: r for r in regions}

    @classmethod
    def from_maps(cls, maps: list[MapDef], mem_bytes: int = params.MAP_MEM_BYTES) -> MapLayout:
        regions: list[MapRegion] = []
        offset = 0
        for i, m in enumerate(maps):
            r = _region(i, m, offset)
            if r.offset + r.size > mem_bytes:
                raise MapError(f"map {m.name}: needs {r.size} bytes at offset {r.offset}, map memory holds "
                               f"{mem_bytes} bytes")
            regions.append(r)
            offset = (r.offset + r.size + REGION_ALIGN - 1) // REGION_ALIGN * REGION_ALIGN
        return cls(regions, mem_bytes)

    def region(self, map_id: int) -> MapRegion:
        if not 0 <= map_id < len(self.regions):
            raise MapError(f"no map with id {map_id} (the program has {len(self.regions)} maps)")
        return self.regions[map_id]

    def map_id(self, name: str) -> int:
        try:
            return self.by_name[name].id
        except KeyError:
            raise MapError(f"no map named {name!r} (maps: {', '.join(self.by_name) or 'none'})") from None

    def handle(self, map_id: int) -> int:
        self.region(map_id)
        return params.MAP_HANDLE_BASE + map_id

    def map_of_handle(self, handle: int) -> int | None:
        """The map id of an lddw map handle, or None if the value is not a handle of this layout."""
        i = handle - params.MAP_HANDLE_BASE
        return i if 0 <= i < len(self.regions) else None

    def value_addr(self, map_id: int, off: int = 0) -> int:
        """Absolute address of byte `off` of entry 0's value (global data sections, arrays)."""
        r = self.region(map_id)
        if r.kind not in ("array", "percpu_array"):
            raise MapError(f"map {r.name}: direct value access needs an array map, not {r.kind}")
        return params.MAP_BASE + r.offset + off

    def used_bytes(self) -> int:
        return max((r.offset + r.size for r in self.regions), default=0)

    def to_json(self) -> str:
        doc = {"format": "hxdp-map-layout", "version": LAYOUT_VERSION, "map_base": params.MAP_BASE,
               "handle_base": params.MAP_HANDLE_BASE, "mem_bytes": self.mem_bytes,
               "maps": [asdict(r) for r in self.regions]}
        return json.dumps(doc, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> MapLayout:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MapError(f"map layout is not JSON: {exc}") from None
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
            if not isinstance(r, dict) or not names >= set(r) or not set(r) >= names - {"initial"}:
                raise MapError(f"map layout: maps[{i}] is malformed (fields: {', '.join(sorted(names))})")
            regions.append(MapRegion(**r))
        return cls(regions, doc.get("mem_bytes", params.MAP_MEM_BYTES))

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


class MapState:
    """The contents of map memory with the kernel's semantics per map type (one hardware CPU).

    Every operation sets `last_probes`, the slots the hardware FSM visits, and `last_writes`, the map-window writes
    (MAP_WINDOW_BYTES each, one a cycle) it makes: the latency (see helpers.py).
    """

    def __init__(self, layout: MapLayout) -> None:
        self.layout = layout
        self.mem = bytearray(layout.mem_bytes)
        self.last_probes = 0
        self.last_writes = 0
        for r in layout.regions:
            if r.initial:
                init = bytes.fromhex(r.initial)
                self.mem[r.offset : r.offset + len(init)] = init

    @classmethod
    def from_maps(cls, maps: list[MapDef]) -> MapState:
        return cls(MapLayout.from_maps(maps))

    # --- small accessors ---------------------------------------------------------------------------------------
    def _u32(self, off: int) -> int:
        return struct.unpack_from("<I", self.mem, off)[0]

    def _set_u32(self, off: int, v: int) -> None:
        struct.pack_into("<I", self.mem, off, v & 0xFFFFFFFF)

    def _check_key(self, r: MapRegion, key: bytes) -> bytes:
        if len(key) != r.key_size:
            raise MapError(f"map {r.name}: key of {len(key)} bytes, the map's key size is {r.key_size}")
        return bytes(key)

    def count(self, map_id: int) -> int:
        r = self.layout.region(map_id)
        if r.kind in ARRAY_KINDS:
            return r.max_entries
        return self._u32(r.offset)

    # --- hash tables ---------------------------------------------------------------------------------------------
    def _hash_find(self, r: MapRegion, key: bytes) -> tuple[int | None, int | None]:
        """(slot holding key or None, first free slot for an insert or None); sets last_probes."""
        mask = r.slots - 1
        start = key_hash(key) & mask
        free = None
        probes = 0
        for n in range(r.slots):
            i = (start + n) & mask
            base = r.slot_addr(i)
            state = self.mem[base]
            probes += 1
            if state == EMPTY:
                self.last_probes = probes
                return None, (free if free is not None else i)
            if state == DELETED:
                if free is None:
                    free = i
            elif self.mem[base + r.key_offset : base + r.key_offset + r.key_size] == key:
                self.last_probes = probes
                return i, free
        self.last_probes = probes
        return None, free

    def _lru_touch(self, r: MapRegion, slot: int) -> None:
        clock = (self._u32(r.offset + 4) + 1) & 0xFFFFFFFF
        self._set_u32(r.offset + 4, clock)
        self._set_u32(r.slot_addr(slot) + 4, clock)

    def _lru_victim(self, r: MapRegion) -> int:
        best, best_stamp = -1, None
        for i in range(r.slots):
            base = r.slot_addr(i)
            if self.mem[base] == USED:
                stamp = self._u32(base + 4)
                if best_stamp is None or stamp < best_stamp:
                    best, best_stamp = i, stamp
        self.last_probes += r.slots
        return best

    def _hash_remove(self, r: MapRegion, slot: int) -> None:
        base = r.slot_addr(slot)
        self.mem[base : base + r.slot_size] = bytes(r.slot_size)
        self.mem[base] = DELETED
        self._set_u32(r.offset, self._u32(r.offset) - 1)

    # --- LPM trie ------------------------------------------------------------------------------------------------
    def _lpm_entries(self, r: MapRegion) -> list[tuple[int, int, bytes]]:
        """(slot, prefixlen, data) of every valid slot below the high-water mark."""
        out = []
        dsz = r.key_size - 4
        for i in range(self._u32(r.offset + 8)):
            base = r.slot_addr(i)
            if self.mem[base] == USED:
                out.append((i, self._u32(base + 4), bytes(self.mem[base + 8 : base + 8 + dsz])))
        return out

    @staticmethod
    def _prefix_match(a: bytes, b: bytes, bits: int) -> bool:
        full, rest = divmod(bits, 8)
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

    def _lpm_set_high(self, r: MapRegion) -> None:
        high = 0
        for i in range(r.slots):
            if self.mem[r.slot_addr(i)] == USED:
                high = i + 1
        self._set_u32(r.offset + 8, high)

    # --- the operations --------------------------------------------------------------------------------------------
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
            if r.kind == "devmap" and not any(self.mem[off : off + 4]):
                return None  # empty devmap slot (ifindex 0)
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
        self.last_probes = max(1, self._u32(r.offset + 8))
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
        return bytes(self.mem[off : off + r.value_size])

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
            if flags == BPF_NOEXIST:
                return -EEXIST
            if r.kind == "devmap" and r.value_size == 8 and value[4:] != bytes(4):
                raise MapError(f"map {r.name}: devmap entries with a program are not supported")
            off = r.slot_addr(idx)
            self.mem[off : off + r.value_size] = value
            self.last_writes = windows(r.value_size)
            return 0
        if r.kind in HASH_KINDS:
            if r.kind == "devmap_hash" and r.value_size == 8 and value[4:] != bytes(4):
                raise MapError(f"map {r.name}: devmap entries with a program are not supported")
            slot, free = self._hash_find(r, key)
            if slot is not None and flags == BPF_NOEXIST:
                return -EEXIST
            if slot is None and flags == BPF_EXIST and r.kind != "devmap_hash":
                return -ENOENT
            # the slot from its start to the value's end; the header (new entry, LRU clock); the victim's slot
            writes = windows(r.value_offset + r.value_size) + (slot is None or r.kind == "lru_hash")
            if slot is None:
                if self._u32(r.offset) >= r.max_entries:
                    if r.kind != "lru_hash":
                        return -E2BIG
                    victim = self._lru_victim(r)
                    self._hash_remove(r, victim)
                    slot, free = self._hash_find(r, key)
                    self.last_probes += r.slots  # the victim scan visits every bucket (docs/helpers.md)
                    writes += windows(r.slot_size)
                slot = free
                assert slot is not None  # buckets >= 2 * max_entries leaves a free slot
                base = r.slot_addr(slot)
                self.mem[base] = USED
                self.mem[base + r.key_offset : base + r.key_offset + r.key_size] = key
                self._set_u32(r.offset, self._u32(r.offset) + 1)
            base = r.slot_addr(slot)
            self.mem[base + r.value_offset : base + r.value_offset + r.value_size] = value
            if r.kind == "lru_hash":
                self._lru_touch(r, slot)
            self.last_writes = writes
            return 0
        # lpm_trie
        plen = int.from_bytes(key[:4], "little")
        if plen > 8 * (r.key_size - 4):
            return -EINVAL
        slot = self._lpm_exact(r, plen, key[4:])
        self.last_probes = max(1, self._u32(r.offset + 8))
        if slot is not None and flags == BPF_NOEXIST:
            return -EEXIST
        if slot is None and flags == BPF_EXIST:
            return -ENOENT
        if slot is None:
            if self._u32(r.offset) >= r.max_entries:
                return -ENOSPC
            slot = next(i for i in range(r.slots) if self.mem[r.slot_addr(i)] != USED)
            self._set_u32(r.offset, self._u32(r.offset) + 1)
        base = r.slot_addr(slot)
        self.mem[base] = USED
        self._set_u32(base + 4, plen)
        self.mem[base + r.key_offset : base + r.key_offset + r.key_size - 4] = key[4:]
        self.mem[base + r.value_offset : base + r.value_offset + r.value_size] = value
        self._lpm_set_high(r)
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
        if r.kind == "devmap":
            idx = int.from_bytes(key, "little")
            if idx >= r.max_entries:
                return -EINVAL
            off = r.slot_addr(idx)
            self.mem[off : off + r.slot_size] = bytes(r.slot_size)
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
        self.last_probes = max(1, self._u32(r.offset + 8))
        if slot is None:
            return -ENOENT
        base = r.slot_addr(slot)
        self.mem[base : base + r.slot_size] = bytes(r.slot_size)
        self._set_u32(r.offset, self._u32(r.offset) - 1)
        self._lpm_set_high(r)
        self.last_writes = windows(r.slot_size) + 1  # the slot, the header
        return 0

    # --- host views --------------------------------------------------------------------------------------------------
    def dump_map(self, map_id: int) -> dict[bytes, bytes]:
        r = self.layout.region(map_id)
        out: dict[bytes, bytes] = {}
        if r.kind in ARRAY_KINDS:
            for i in range(r.max_entries):
                off = r.slot_addr(i)
                value = bytes(self.mem[off : off + r.value_size])
                if r.kind == "devmap" and not any(value[:4]):
                    continue
                out[i.to_bytes(4, "little")] = value
        elif r.kind in HASH_KINDS:
            for i in range(r.slots):
                base = r.slot_addr(i)
                if self.mem[base] == USED:
                    key = bytes(self.mem[base + r.key_offset : base + r.key_offset + r.key_size])
                    out[key] = bytes(self.mem[base + r.value_offset : base + r.value_offset + r.value_size])
        else:
            for i, plen, data in self._lpm_entries(r):
                base = r.slot_addr(i)
                out[plen.to_bytes(4, "little") + data] = bytes(
                    self.mem[base + r.value_offset : base + r.value_offset + r.value_size])
        return out

    def dump(self) -> dict[str, dict[bytes, bytes]]:
        """Map name -> {key: value}; arrays list every index, devmaps their non-empty entries."""
        return {r.name: self.dump_map(r.id) for r in self.layout.regions}

    def apply_config(self, cfg: dict | str | os.PathLike[str], source: str | None = None) -> None:
        """Load {"maps": {name: [{"key": hex, "value": hex}, ...]}} (or the JSON file at that path) with BPF_ANY
        updates. Errors are MapErrors naming the source (file), the map and the entry."""
        if not isinstance(cfg, dict):
            source = source or str(cfg)
            cfg = load_map_config(cfg)
        source = source or "map config"
        for name, pairs in check_map_config(cfg, source).items():
            try:
                map_id = self.layout.map_id(name)
            except MapError:
                raise MapError(f"{source}: no map named {name!r} in the program "
                               f"(maps: {', '.join(self.layout.by_name) or 'none'})") from None
            r = self.layout.region(map_id)
            for i, (key, value) in enumerate(pairs):
                where = f"{source}: maps.{name}[{i}]"
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
        other.last_probes = 0
        other.last_writes = 0
        return other
