"""bpftool's conventions on the command line: its operands (DATA, key, value, flags), its text and JSON shapes."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from hxdp import params
from hxdp.board.tools import ACTION_COUNTERS, bpftool_bytes, parse_bytes
from hxdp.models.maps import BPF_ANY, BPF_EXIST, BPF_NOEXIST, MapError, MapRegion

# --- operands --------------------------------------------------------------------------------------------------------
PERCPU_KINDS = frozenset({"percpu_array", "percpu_hash"})  # a value per core of the board (CPU k: core k)
OUTER_KINDS = frozenset({"array_of_maps", "hash_of_maps"})  # values are inner map ids: bpftool's inner_map_id
UPDATE_FLAGS = {"any": BPF_ANY, "noexist": BPF_NOEXIST, "exist": BPF_EXIST}
ELEM_WORDS = frozenset({"key", "value", "flags", *UPDATE_FLAGS})
_HEX_BYTE = re.compile(r"(0x)?[0-9a-f]{1,2}")
_C_BYTE = re.compile(r"0x[0-9a-f]{1,2}|0[0-7]*|[1-9][0-9]{0,2}")


def parse_byte(tok: str, base: int, what: str = "key") -> int:
    """One byte as bpftool reads it (strtoul): base 16 after `hex`, else C syntax (0x1f hex, 017 octal, 31)."""
    t = tok.lower()
    ok = (_HEX_BYTE if base == 16 else _C_BYTE).fullmatch(t)
    v = (int(t.removeprefix("0x"), 16) if base == 16 or t.startswith("0x") else int(t, 8 if t.startswith("0") else 10)
         ) if ok else -1
    if not 0 <= v <= 0xFF:
        raise MapError(f"{what}: error parsing byte {tok!r} ({'hex' if base == 16 else 'decimal, 0x.. or 0..'} "
                       "bytes 0..255)")
    return v


def _whole_hex(tok: str) -> bool:
    """hxdp's shorthand: a token holding every byte in hex ("0a000001", "0x0a000001", "0a,00,00,01")."""
    digits = tok.lower().removeprefix("0x")
    return "," in tok or (len(digits) >= 4 and len(digits) % 2 == 0 and all(c in "0123456789abcdef" for c in digits))


def take_data(tokens: list[str], size: int, what: str) -> tuple[bytes, list[str]]:
    """bpftool's DATA: `[hex] BYTE..` up to `size` bytes (the next keyword ends it early); or one whole-hex token."""
    base = 0
    if tokens and tokens[0] == "hex":
        base, tokens = 16, tokens[1:]
    if not tokens or tokens[0] in ELEM_WORDS:
        raise MapError(f"{what}: no bytes given (e.g. {what} hex 0a 00 00 01)")
    if _whole_hex(tokens[0]):
        return parse_bytes(tokens[0], what), tokens[1:]
    out: list[int] = []
    while tokens and len(out) < size and tokens[0] not in ELEM_WORDS:
        out.append(parse_byte(tokens[0], base, what))
        tokens = tokens[1:]
    return bytes(out), tokens


@dataclass
class Elem:
    """The operands of map lookup/update/delete."""

    key: bytes
    value: bytes | None = None
    flags: int = BPF_ANY


def _legacy_elem(tokens: list[str], want_value: bool) -> Elem | None:
    """`KEY [VALUE]`, one hex token each (the first hxdp syntax): kept so that `lookup m 0a` stays hex 0x0a."""
    flags = BPF_ANY
    if len(tokens) >= 2 and tokens[-2] == "flags" and tokens[-1] in UPDATE_FLAGS:
        flags, tokens = UPDATE_FLAGS[tokens[-1]], tokens[:-2]
    elif tokens and tokens[-1] in UPDATE_FLAGS:
        flags, tokens = UPDATE_FLAGS[tokens[-1]], tokens[:-1]
    if len(tokens) != (2 if want_value else 1) or ELEM_WORDS & set(tokens) or "hex" in tokens:
        return None
    return Elem(parse_bytes(tokens[0], "key"), parse_bytes(tokens[1], "value") if want_value else None, flags)


def parse_elem(tokens: list[str], key_size: int, value_size: int, want_value: bool) -> Elem:
    """`[key] DATA [value DATA] [any|noexist|exist]` as bpftool takes them (DATA: `hex 0a 00 ..`, `10 0 ..`);
    `key`/`value` may be left out (key first); `flags any` and `KEY [VALUE]` hex tokens as hxdp took them."""
    legacy = _legacy_elem(tokens, want_value)
    if legacy is not None:
        return legacy
    key = value = None
    flags: int | None = None
    rest = [t for t in tokens if t != "flags"]  # `flags exist` (hxdp) and `exist` (bpftool) alike
    while rest:
        word = rest[0]
        if word in UPDATE_FLAGS and want_value and flags is None:
            flags, rest = UPDATE_FLAGS[word], rest[1:]
        elif word == "value" and want_value and value is None:
            value, rest = take_data(rest[1:], value_size, "value")
        elif word == "key" and key is None:
            key, rest = take_data(rest[1:], key_size, "key")
        elif word not in ELEM_WORDS and (key is None or (want_value and value is None)):
            which = "key" if key is None else "value"
            data, rest = take_data(rest, key_size if key is None else value_size, which)
            key, value = (data, value) if key is None else (key, data)
        else:
            raise MapError(f"unexpected {word!r}: expected key DATA" + (" value DATA [any|noexist|exist]"
                                                                         if want_value else ""))
    if key is None or (want_value and value is None):
        raise MapError(f"missing the {'key' if key is None else 'value'} (e.g. key hex 0a 00 00 01"
                       + (" value hex 01 00 00 00)" if want_value else ")"))
    return Elem(key, value, BPF_ANY if flags is None else flags)


# --- map entries and maps ------------------------------------------------------------------------------------------
def hex_bytes(b: bytes) -> str:
    return " ".join(f"{x:02x}" for x in b)


def per_cpu(value: bytes | list[bytes]) -> list[bytes]:
    """A per-CPU map's values, one per core (a single value: the one core's)."""
    return value if isinstance(value, list) else [value]


def entry_json(r: MapRegion, key: bytes, value: bytes | list[bytes]) -> dict:
    """bpftool map dump -j: {"key": [...], "value": [...]}; per-CPU maps {"key", "values": [{"cpu", "value"}]}
    (`value`: a list with core k's value at k, or one value)."""
    if r.kind in PERCPU_KINDS:
        return {"key": bpftool_bytes(key),
                "values": [{"cpu": k, "value": bpftool_bytes(v)} for k, v in enumerate(per_cpu(value))]}
    assert isinstance(value, bytes)
    if r.kind in OUTER_KINDS:
        return {"key": bpftool_bytes(key), "inner_map_id": int.from_bytes(value[:4], "little")}
    return {"key": bpftool_bytes(key), "value": bpftool_bytes(value)}


def entry_plain(r: MapRegion, key: bytes, value: bytes | list[bytes]) -> str:
    """bpftool map dump: `key: .. value: ..` on one line when short, names on their own lines when long; per-CPU
    maps a `value (CPU k):` line per core."""
    if r.kind in PERCPU_KINDS:
        values = per_cpu(value)
        sep = "\n" if len(values[0]) > 16 else " "
        return "\n".join([f"key:\n{hex_bytes(key)}",
                          *(f"value (CPU {k:02d}):{sep}{hex_bytes(v)}" for k, v in enumerate(values))])
    assert isinstance(value, bytes)
    if r.kind in OUTER_KINDS:
        sep = "\n" if len(key) > 16 else " "
        return f"key:{sep}{hex_bytes(key)}  inner_map_id: {int.from_bytes(value[:4], 'little')}"
    long = len(key) > 16 or len(value) > 16
    one_line = len(key) + len(value) <= 24 and not long
    sep = "\n" if long else " "
    return f"key:{sep}{hex_bytes(key)}{'  ' if one_line else chr(10)}value:{sep}{hex_bytes(value)}"


def dump_plain(r: MapRegion, entries: dict[bytes, bytes] | dict[bytes, list[bytes]]) -> str:
    n = len(entries)
    lines = [entry_plain(r, k, v) for k, v in entries.items()]
    return "\n".join([*lines, f"Found {n} element{'' if n == 1 else 's'}"])


def map_info(r: MapRegion, entries: int) -> dict:
    """bpftool map show -j fields (id, type, name, flags, bytes_key, bytes_value, max_entries) and the board's own:
    entries in use, where the region is in map memory and its size."""
    info: dict = {"id": r.id, "type": r.kind}
    if r.name:
        info["name"] = r.name
    info.update({"flags": r.flags, "bytes_key": r.key_size, "bytes_value": r.value_size,
                 "max_entries": r.max_entries, "entries": entries, "offset": r.offset, "bytes_region": r.size})
    return info


def map_info_plain(info: dict) -> str:
    name = f"name {info['name']}  " if "name" in info else ""
    return (f"{info['id']}: {info['type']}  {name}flags 0x{info['flags']:x}\n"
            f"\tkey {info['bytes_key']}B  value {info['bytes_value']}B  max_entries {info['max_entries']}  "
            f"entries {info['entries']}  at 0x{info['offset']:x} ({info['bytes_region']}B)")


# --- programs --------------------------------------------------------------------------------------------------------
def prog_info_plain(info: dict) -> str:
    name = f"name {info['name']}  " if "name" in info else ""
    lines = [f"{info['id']}: {info['type']}  {name}tag {info['tag']}"]
    if "loaded_at" in info:
        when = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(info["loaded_at"]))
        lines.append(f"\tloaded_at {when}  from {info['source']}")
    maps = f"  map_ids {','.join(str(i) for i in info['map_ids'])}" if info["map_ids"] else ""
    cores = f"  cores {info['cores']}" if info.get("cores", 1) > 1 else ""
    lines.append(f"\trows {info['rows']} (of {params.IMEM_ROWS})  xlated {info['bytes_xlated']}B{maps}{cores}")
    c = info["counters"]
    actions = "  ".join(f"{a.removeprefix('xdp_')} {c[a]}" for a in ACTION_COUNTERS)
    lines.append(f"\trun_cnt {info['run_cnt']}  {actions}  faults {c['faults']}  cycles {c['cycles']}")
    return "\n".join(lines)


def xlated_plain(insns: list[dict], opcodes: bool = False) -> list[str]:
    """bpftool prog dump xlated: `ROW.LANE: (code) text`, with `opcodes` the instruction bytes on the next line."""
    lines = []
    for i in insns:
        lines.append(f"{i['row']:4d}.{i['lane']}: ({i['code'][2:]}) {i['disasm']}")
        if opcodes:
            lines.append("       " + " ".join(b[2:] for b in i["bytes"]))
    return lines
