"""Load-time map settings: max_entries set by the loader (libbpf's bpf_map__set_max_entries), tiers, unused maps."""

from __future__ import annotations

import re
from dataclasses import replace

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.frontend.program import MapDef, Program
from hxdp.isa import table as T

__all__ = ["MAP_OPTION_SHAPE", "MapSizeError", "apply_sizes", "apply_tiers", "config_sizes", "config_tiers",
           "drop_unused", "merge_sizes", "merge_tiers", "parse_map_options", "parse_map_tiers", "referenced_maps"]

MAP_OPTION_SHAPE = "NAME.max_entries=N|NAME.tier=bram|qdr|ddr"
_SETTINGS = ("max_entries", "tier")
MAX_ENTRIES_LIMIT = (1 << 31) - 1  # the kernel's u32 field, capped where its allocations would overflow
_OPTION = re.compile(r"^(?P<name>[^=]+)\.(?P<attr>[a-z_]+)=(?P<value>.*)$")
_DATA_SECTIONS = (".data", ".rodata", ".bss", ".kconfig")


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


def drop_unused(program: Program) -> Program:
    """The program without the maps neither it nor its resident programs reference (a loader creates them, the NIC
    has no use for them), the lddw map indices renumbered; their definitions move to Program.unused_maps."""
    used = referenced_maps(program)
    if len(used) == len(program.maps):
        return program
    renumber = {old: new for new, old in enumerate(sorted(used))}
    maps: list[MapDef] = [program.maps[i] for i in sorted(used)]
    unused = [m for i, m in enumerate(program.maps) if i not in used]
    resident = [replace(_renumber(p, renumber), maps=maps) for p in program.resident]
    return replace(_renumber(program, renumber), maps=maps, unused_maps=program.unused_maps + unused,
                   resident=resident)
