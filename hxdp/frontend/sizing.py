"""Load-time map settings: max_entries set by the loader (libbpf's bpf_map__set_max_entries), tiers, unused maps."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.frontend.program import MapDef, Program
from hxdp.isa import table as T

__all__ = ["MAP_OPTION_SHAPE", "MAP_IN_MAP_TYPES", "MapSizeError", "add_inner_maps", "apply_sizes", "apply_tiers",
           "check_inner", "config_inner", "config_sizes", "config_tiers", "drop_unused", "merge_sizes", "merge_tiers",
           "parse_map_options", "parse_map_tiers", "referenced_maps"]

MAP_OPTION_SHAPE = "NAME.max_entries=N|NAME.tier=bram|qdr|ddr"
_SETTINGS = ("max_entries", "tier")
MAX_ENTRIES_LIMIT = (1 << 31) - 1  # the kernel's u32 field, capped where its allocations would overflow
_OPTION = re.compile(r"^(?P<name>[^=]+)\.(?P<attr>[a-z_]+)=(?P<value>.*)$")
_DATA_SECTIONS = (".data", ".rodata", ".bss", ".kconfig")
MAP_IN_MAP_TYPES = frozenset({12, 13})  # BPF_MAP_TYPE_ARRAY_OF_MAPS, BPF_MAP_TYPE_HASH_OF_MAPS
INNER_SECTION = "loader"  # MapDef.section of an inner map the loader creates from its outer map's template
BPF_F_INNER_MAP = 0x1000  # an inner map's max_entries may differ from the template's (the kernel's rule)
_ARRAY_TYPES = frozenset({2, 6})  # the kernel compares an array's max_entries with the template's


class MapSizeError(HxdpError):
    """A bad --map option or max_entries setting, or a map left unsized."""


def _entries(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise MapSizeError(f"{where}: max_entries must be a positive integer, not {value!r}")
    try:
        n = int(value, 0) if isinstance(value, str) else value
    except ValueError:
        raise MapSizeError(f"{where}: max_entries must be a positive integer, not {value!r}") from None
    if not 1 <= n <= MAX_ENTRIES_LIMIT:
        raise MapSizeError(f"{where}: max_entries {n} out of range 1..{MAX_ENTRIES_LIMIT}")
    return n


def _tier(value: object, where: str) -> str:
    if value not in params.TIERS:
        raise MapSizeError(f"{where}: tier must be one of {', '.join(params.TIERS)}, not {value!r}")
    return str(value)


def _settings(options: list[str] | None, attr: str) -> dict[str, str]:
    """{map name: value text} of the `--map NAME.ATTR=VALUE` options setting `attr` (every option checked)."""
    out: dict[str, str] = {}
    for text in options or []:
        m = _OPTION.match(text)
        if m is None:
            raise MapSizeError(f"--map {text!r}: expected {MAP_OPTION_SHAPE}")
        if m["attr"] not in _SETTINGS:
            raise MapSizeError(f"--map {text!r}: unknown map setting {m['attr']!r} (settable: {', '.join(_SETTINGS)})")
        if m["attr"] == attr:
            out[m["name"]] = m["value"]
    return out


def parse_map_options(options: list[str] | None) -> dict[str, int]:
    """`--map NAME.max_entries=N` options -> {map name: N}; the last setting of a map wins, as on a command line."""
    return {name: _entries(v, f"--map {name}.max_entries={v}") for name, v in _settings(options, "max_entries").items()}


def parse_map_tiers(options: list[str] | None) -> dict[str, str]:
    """`--map NAME.tier=T` options -> {map name: tier} (params.TIERS); the last setting of a map wins."""
    return {name: _tier(v, f"--map {name}.tier={v}") for name, v in _settings(options, "tier").items()}


def config_tiers(cfg: dict | None, source: str = "map config") -> dict[str, str]:
    """The `"tier": {NAME: "bram"|"qdr"|"ddr"}` part of a map configuration (see hxdp.models.mapconfig)."""
    raw = (cfg or {}).get("tier") or {}
    if not isinstance(raw, dict):
        raise MapSizeError(f"{source}: \"tier\" must be an object {{map name: tier}}, not {type(raw).__name__}")
    return {str(name): _tier(t, f"{source}: tier.{name}") for name, t in raw.items()}


def merge_tiers(cfg: dict | None, options: list[str] | None, source: str = "map config") -> dict[str, str]:
    """Tiers from a configuration, then the command line's --map options over them."""
    return {**config_tiers(cfg, source), **parse_map_tiers(options)}


def apply_tiers(program: Program, tiers: dict[str, str]) -> Program:
    """The program with its maps placed by the user (MapDef.tier); a name may be a map the program never references
    (it is not placed), any other must be one of its maps."""
    known = {m.name for m in (*program.maps, *program.unused_maps)}
    for name, tier in tiers.items():
        if name not in known:
            raise MapSizeError(f"{program.source or program.name}: --map {name}.tier={tier}: no map named {name!r} "
                               f"(maps: {', '.join(sorted(known)) or 'none'})")
    if not tiers:
        return program
    maps = [replace(m, tier=tiers[m.name]) if m.name in tiers else m for m in program.maps]
    return replace(program, maps=maps, resident=[replace(p, maps=maps) for p in program.resident])


def config_sizes(cfg: dict | None, source: str = "map config") -> dict[str, int]:
    """The `"max_entries": {NAME: N}` part of a map configuration (see hxdp.models.mapconfig)."""
    raw = (cfg or {}).get("max_entries") or {}
    if not isinstance(raw, dict):
        raise MapSizeError(f"{source}: \"max_entries\" must be an object {{map name: N}}, not {type(raw).__name__}")
    return {str(name): _entries(n, f"{source}: max_entries.{name}") for name, n in raw.items()}


def merge_sizes(cfg: dict | None, options: list[str] | None, source: str = "map config") -> dict[str, int]:
    """Sizes from a configuration, then the command line's --map options over them (the more specific wins)."""
    return {**config_sizes(cfg, source), **parse_map_options(options)}


def apply_sizes(program: Program, sizes: dict[str, int]) -> Program:
    """The program with its maps resized; every name must be a map of the object that a loader may resize."""
    by_name = {m.name: m for m in program.maps}
    for name, n in sizes.items():
        m = by_name.get(name)
        if m is None:
            raise MapSizeError(f"{program.source or program.name}: --map {name}.max_entries={n}: no map named "
                               f"{name!r} (maps: {', '.join(by_name) or 'none'})")
        if m.section.startswith(_DATA_SECTIONS):
            raise MapSizeError(f"{program.source or program.name}: map {name} holds the global data of "
                               f"{m.section}: it has one entry, its size is not settable")
    if not sizes:
        return program
    maps = [replace(m, max_entries=sizes[m.name]) if m.name in sizes else m for m in program.maps]
    return replace(program, maps=maps, resident=[replace(p, maps=maps) for p in program.resident])


def check_inner(outer: MapDef, m: MapDef, err: Callable[[str], Exception]) -> None:
    """An inner map must match its outer map's template as the kernel's bpf_map_meta_equal requires: type, key and
    value sizes, flags (and an array's max_entries, unless the template has BPF_F_INNER_MAP)."""
    t = outer.inner
    if t is None:
        raise err(f"map '{outer.name}': not a map of maps with an inner-map template (`__array(values, ...)`)")
    if m.type in MAP_IN_MAP_TYPES:
        raise err(f"map '{outer.name}': inner map '{m.name}' is itself a map of maps (the kernel nests one level)")
    for what in ("type", "key_size", "value_size", "flags"):
        if getattr(m, what) != getattr(t, what):
            raise err(f"map '{outer.name}': inner map '{m.name}' has {what} {getattr(m, what)}, the template "
                      f"{getattr(t, what)}")
    if m.type in _ARRAY_TYPES and not t.flags & BPF_F_INNER_MAP and m.max_entries != t.max_entries:
        raise err(f"map '{outer.name}': inner array '{m.name}' has max_entries {m.max_entries}, the template "
                  f"{t.max_entries} (set BPF_F_INNER_MAP in the template to allow others)")


def config_inner(cfg: dict | None, source: str = "map config") -> dict[str, dict[bytes, str]]:
    """The `"inner_maps": {OUTER: {KEY hex: NEW INNER NAME}}` part of a map configuration: the inner maps the loader
    creates from OUTER's template and sets at KEY (as Katran's loader creates one LRU per CPU)."""
    raw = (cfg or {}).get("inner_maps") or {}
    if not isinstance(raw, dict):
        raise MapSizeError(f"{source}: \"inner_maps\" must be an object {{map of maps: {{key hex: inner map name}}}}")
    out: dict[str, dict[bytes, str]] = {}
    for outer, slots in raw.items():
        if not isinstance(slots, dict):
            raise MapSizeError(f"{source}: inner_maps.{outer} must be an object {{key hex: inner map name}}")
        entries: dict[bytes, str] = {}
        for key, name in slots.items():
            try:
                k = bytes.fromhex(str(key).replace(" ", "").replace("_", ""))
            except ValueError:
                raise MapSizeError(f"{source}: inner_maps.{outer}: key {key!r} is not hex bytes") from None
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.]{1,15}", name):
                raise MapSizeError(f"{source}: inner_maps.{outer}.{key}: {name!r} is not a map name (1 to 15 "
                                   "letters, digits, _ or ., as the kernel names maps)")
            entries[k] = name
        out[str(outer)] = entries
    return out


def add_inner_maps(program: Program, inner: dict[str, dict[bytes, str]]) -> Program:
    """The program with the inner maps its loader creates: each a copy of its outer map's template, named, set at
    its key (MapDef.inner_entries). A name may serve several slots (one map in two slots)."""
    if not inner:
        return program
    where = program.source or program.name
    maps = list(program.maps)
    names = {m.name for m in maps}
    for outer_name, slots in inner.items():
        idx = next((i for i, m in enumerate(maps) if m.name == outer_name), None)
        if idx is None or maps[idx].type not in MAP_IN_MAP_TYPES or maps[idx].inner is None:
            raise MapSizeError(f"{where}: inner_maps.{outer_name}: no map of maps with an inner-map template named "
                               f"{outer_name!r}")
        outer = maps[idx]
        template = outer.inner
        assert template is not None
        entries = dict(outer.inner_entries or {})
        for key, name in slots.items():
            if len(key) != outer.key_size:
                raise MapSizeError(f"{where}: inner_maps.{outer_name}: key {key.hex()} has {len(key)} bytes, the map "
                                   f"{outer.key_size}")
            if name not in names:
                maps.append(replace(template, name=name, section=INNER_SECTION, inner=None))
                names.add(name)
            else:
                made = next((m for m in maps if m.name == name and m.section == INNER_SECTION), None)
                if made is None:
                    raise MapSizeError(f"{where}: inner_maps.{outer_name}: {name!r} is a map of the object already")
                check_inner(outer, made, lambda msg: MapSizeError(f"{where}: {msg}"))  # created for another outer
            entries[key] = name
        maps[idx] = replace(outer, inner_entries=entries)
    return replace(program, maps=maps, resident=[replace(p, maps=maps) for p in program.resident])


def referenced_maps(program: Program) -> set[int]:
    """Indices of the maps an lddw of the program or of its resident programs names (by fd or by value address)."""
    return {ins.imm for p in (program, *program.resident) for ins in p.insns
            if ins.opcode == 0x18 and ins.src in (T.PSEUDO_MAP_FD, T.PSEUDO_MAP_VALUE)}


def _renumber(program: Program, renumber: dict[int, int]) -> Program:
    insns = list(program.insns)
    for i, ins in enumerate(insns):
        if ins.opcode == 0x18 and ins.src in (T.PSEUDO_MAP_FD, T.PSEUDO_MAP_VALUE):
            insns[i] = ins.with_(imm=renumber[ins.imm])
    return replace(program, insns=insns)


def _inner_of_used(program: Program, used: set[int]) -> set[int]:
    """Indices of the inner maps the used maps of maps hold (a program reaches them through their outer map)."""
    names = {n for i in used for n in (program.maps[i].inner_entries or {}).values()}
    return {i for i, m in enumerate(program.maps) if m.name in names}


def drop_unused(program: Program) -> Program:
    """The program without the maps neither it nor its resident programs reference (a loader creates them, the NIC
    has no use for them), the lddw map indices renumbered; their definitions move to Program.unused_maps. The inner
    maps of a map of maps come last: their ids, which the outer map's slots hold, are never 0 (an empty slot)."""
    used = referenced_maps(program)
    inner = _inner_of_used(program, used)
    order = sorted(used - inner) + sorted(inner)
    if order == list(range(len(program.maps))):
        return program
    used |= inner
    renumber = {old: new for new, old in enumerate(order)}
    maps: list[MapDef] = [program.maps[i] for i in order]
    unused = [m for i, m in enumerate(program.maps) if i not in used]
    resident = [replace(_renumber(p, renumber), maps=maps) for p in program.resident]
    return replace(_renumber(program, renumber), maps=maps, unused_maps=program.unused_maps + unused,
                   resident=resident)
