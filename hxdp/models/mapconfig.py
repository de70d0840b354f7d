"""Initial map configurations ({"maps": {name: [{"key": hex, "value": hex}]}}): shape checks, file reading.

Shared by the models, the board and the kernel oracle; sizes are checked against a program's maps where applied.
An entry of a PROG_ARRAY names a program of the object instead of a value: {"key": hex, "prog": "NAME"} (as
`bpftool map update ... value pinned PROG` sets one); check_map_config gives its value as that name (a str),
which the NIC resolves to the program's entry row and the kernel oracle to the program's fd.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hxdp.frontend.sizing import MapSizeError, config_inner, config_sizes, config_tiers
from hxdp.models.maplayout import MapError

__all__ = ["CONFIG_SHAPE", "MapError", "check_map_config", "load_map_config"]

CONFIG_SHAPE = ('{"maps": {"<map name>": [{"key": "<hex>", "value": "<hex>"}, ...]}, '
                '"max_entries": {"<map name>": N}, "tier": {"<map name>": "bram|qdr|ddr"}, '
                '"inner_maps": {"<map of maps>": {"<key hex>": "<new inner map>"}}}')


def _config_hex(text: object, where: str) -> bytes:
    if not isinstance(text, str):
        raise MapError(f"{where}: expected a hex string, got {type(text).__name__} {text!r}")
    try:
        return bytes.fromhex(text.replace(" ", "").replace("_", ""))
    except ValueError:
        raise MapError(f"{where}: not hex bytes: {text!r}") from None


def check_map_config(cfg: object, source: str = "map config") -> dict[str, list[tuple[bytes, bytes | str]]]:
    """Validate the shape of an initial map configuration; {map name: [(key, value), ...]} with the hex decoded
    (a PROG_ARRAY entry's value: the program name it gives).

    Every error is a MapError naming `source` (the file) and the entry, e.g. `f.json: maps.tx_port[0].key: ...`.
    Sizes are checked against the program's maps by MapState.apply_config and KernelProgram.apply_config."""
    if not isinstance(cfg, dict):
        raise MapError(f"{source}: top level must be a JSON object {CONFIG_SHAPE}, not {type(cfg).__name__}")
    unknown = sorted(set(cfg) - {"maps", "max_entries", "tier", "inner_maps", "comment"})
    if unknown:
        raise MapError(f"{source}: unknown top-level key {unknown[0]!r} (expected {CONFIG_SHAPE})")
    try:
        config_sizes(cfg, source)  # checked here, applied when the program is loaded (hxdp.frontend.sizing)
        config_tiers(cfg, source)  # checked here, applied by `hxdp compile` when it places the maps
        config_inner(cfg, source)
    except MapSizeError as exc:
        raise MapError(str(exc)) from None
    maps = cfg.get("maps", {})
    if maps is None or not isinstance(maps, dict):
        raise MapError(f"{source}: \"maps\" must be an object {{map name: [entries]}}, not {type(maps).__name__}")
    out: dict[str, list[tuple[bytes, bytes | str]]] = {}
    for name, entries in maps.items():
        if not isinstance(entries, list):
            raise MapError(f"{source}: maps.{name}: must be a list of {{\"key\": hex, \"value\": hex}}, "
                           f"not {type(entries).__name__}")
        pairs = []
        for i, e in enumerate(entries):
            where = f"{source}: maps.{name}[{i}]"
            if not isinstance(e, dict) or "key" not in e or ("value" in e) == ("prog" in e):
                raise MapError(f'{where}: an entry needs "key" and "value" (hex strings), or "key" and "prog" (a '
                               "program name, for a PROG_ARRAY)")
            extra = sorted(set(e) - {"key", "value", "prog", "comment"})
            if extra:
                raise MapError(f"{where}: unknown field {extra[0]!r} (an entry has \"key\" and \"value\")")
            if "prog" in e:
                if not isinstance(e["prog"], str) or not e["prog"]:
                    raise MapError(f"{where}.prog: expected a program name, got {e['prog']!r}")
                pairs.append((_config_hex(e["key"], where + ".key"), e["prog"]))
                continue
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
    except RecursionError:
        raise MapError(f"{path}: map configuration nested too deeply to be one") from None
    check_map_config(cfg, str(path))
    if not {"maps", "max_entries", "tier", "inner_maps"} & set(cfg):  # `{}` would load nothing silently
        raise MapError(f"{path}: an empty map configuration (none of \"maps\", \"max_entries\", \"tier\", "
                       f"\"inner_maps\"; an explicit \"maps\": {{}} loads no entries): expected {CONFIG_SHAPE}")
    return cfg

