"""Options of the commands that load a user's object: map sizes (`--map NAME.max_entries=N`), the kernel verifier."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from hxdp.frontend.sizing import (
    MAP_OPTION_SHAPE,
    MapSizeError,
    config_inner,
    merge_sizes,
    merge_tiers,
    parse_map_tiers,
)

if TYPE_CHECKING:
    from hxdp.models.maplayout import MapLayout


def add_map_option(p: argparse.ArgumentParser, tiers: bool = False) -> None:
    """--map NAME.max_entries=N, and NAME.tier=T where the command places maps (`tiers`)."""
    what = " NAME.tier=bram|qdr|ddr places a map in a memory tier (over the configuration's \"tier\")." \
        if tiers else ""
    p.add_argument("--map", dest="map_options", action="append", default=[],
                   metavar=MAP_OPTION_SHAPE if tiers else "NAME.max_entries=N",
                   help="set a map's max_entries at load time, as a libbpf loader does with "
                        "bpf_map__set_max_entries (repeatable; over the configuration's \"max_entries\")." + what)


def sizes_from_args(args: argparse.Namespace, cfg: dict | None = None, source: str | None = None,
                    tiers: bool = False) -> dict[str, int]:
    """{map name: max_entries} from the map configuration (if any) and the --map options. A `--map NAME.tier=T` is
    refused where the command does not place maps (`tiers` False): the ROM's layout already placed them."""
    options = getattr(args, "map_options", None)
    placed = parse_map_tiers(options)
    if placed and not tiers:
        name, tier = next(iter(placed.items()))
        raise MapSizeError(f"--map {name}.tier={tier}: only hxdp compile and hxdp diff place maps in tiers (compile "
                           "writes the placement into the ROM's map layout)")
    return merge_sizes(cfg, options, source or "map config")


def tiers_from_args(args: argparse.Namespace, cfg: dict | None = None, source: str | None = None) -> dict[str, str]:
    """{map name: tier} from the map configuration's "tier" (if any) and the --map NAME.tier=T options."""
    return merge_tiers(cfg, getattr(args, "map_options", None), source or "map config")


def inner_from_cfg(cfg: dict | None, source: str | None = None, chain: bool = False) -> dict[str, dict[bytes, str]]:
    """The inner maps the loader creates in the maps of maps ("inner_maps" of the map configuration, if any)."""
    inner = config_inner(cfg, source or "map config")
    if inner and chain:
        raise MapSizeError(f"{source or 'map config'}: not supported: \"inner_maps\" with --chain, because the "
                           "dispatcher's loader creates no inner maps (static `.values` slots work)")
    return inner


def check_rom_sizes(layout: MapLayout, sizes: dict[str, int], rom: str) -> None:
    """A ROM's map layout is fixed at compile time: sizes given to a run must be the ones it was compiled with."""
    for name, n in sizes.items():
        if name in layout.unused:
            continue
        region = layout.by_name.get(name)
        if region is None:
            raise MapSizeError(f"{rom}: --map {name}.max_entries={n}: no map named {name!r} in the ROM's layout")
        if region.max_entries != n:
            raise MapSizeError(f"{rom}: map {name} was compiled with max_entries {region.max_entries}, not {n}: "
                               f"compile again with --map {name}.max_entries={n}")


def check_rom_inner(layout: MapLayout, inner: dict[str, dict[bytes, str]], rom: str) -> None:
    """The inner maps a ROM's layout holds are fixed at compile time: a configuration's "inner_maps" must be them."""
    for outer, slots in inner.items():
        region = layout.by_name.get(outer)
        have = region.inner_entries if region is not None else {}
        for key, name in slots.items():
            if have.get(key.hex()) != name:
                raise MapSizeError(f"{rom}: inner_maps.{outer}.{key.hex()} = {name!r}: the ROM was compiled with "
                                   f"{have.get(key.hex())!r} there: compile again with this map configuration")


def add_verify_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-kernel-verify", action="store_true",
                   help="do not load the object into the kernel's verifier first (a warning; only the compiler's "
                        "own checks then stand between the program and the NIC)")


def verify_in_kernel(args: argparse.Namespace, obj: str, section: str | None, prog: str | None,
                     sizes: dict[str, int]) -> None:
    """What the Linux verifier refuses never reaches the NIC: the object is loaded into it first, where bpf() works.
    A refusal raises the verifier's message; no bpf() here, or --no-kernel-verify, is a warning on stderr."""
    from hxdp.errors import KernelUnavailable
    from hxdp.linux.kernel import verify

    if args.no_kernel_verify:
        print("hxdp: warning: --no-kernel-verify: the kernel verifier is skipped, only the compiler's own "
              "checks apply", file=sys.stderr)
        return
    try:
        verify(obj, section, prog, sizes)
    except KernelUnavailable as exc:
        print(f"hxdp: warning: the kernel verifier is not available ({exc}): only the compiler's own checks "
              "apply", file=sys.stderr)


def add_chain_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chain", dest="chain", action="append", default=[], metavar="OBJ[:PROG]",
                   help="a program to run after this one, as libxdp's dispatcher chains the programs of an "
                        "interface (repeatable, in order; PROG: the program of an object holding several)")
    p.add_argument("--chain-actions", dest="chain_actions", action="append", default=[], metavar="ACTIONS",
                   help="the actions after which the next program runs, e.g. pass,drop (libxdp's chain-call "
                        "actions; default pass): once for every program, or once per program in order")


def chain_from_args(args: argparse.Namespace) -> object | None:
    """The hxdp.diff.Chain of --chain and --chain-actions (None without --chain)."""
    from hxdp.diff import Chain
    from hxdp.frontend.chain import DEFAULT_ACTIONS, ChainError, parse_actions, parse_link

    if not args.chain:
        if args.chain_actions:
            raise ChainError("--chain-actions without --chain: the actions after which the next program runs")
        return None
    n = 1 + len(args.chain)
    actions = [parse_actions(a) for a in args.chain_actions] or [DEFAULT_ACTIONS]
    if len(actions) == 1:
        actions = actions * n
    if len(actions) != n:
        raise ChainError(f"{len(actions)} --chain-actions for {n} programs: give one for all, or one per program")
    return Chain([parse_link(link) for link in args.chain], actions)


def verify_chain_in_kernel(args: argparse.Namespace, links: list[tuple[str, str | None]],
                           sizes: dict[str, int]) -> None:
    """Every object of a dispatcher's chain through the kernel verifier, with the sizes of its own maps."""
    from hxdp.frontend.elf import load_maps

    for obj, prog in links:
        names = {m.name for m in load_maps(obj)}
        verify_in_kernel(args, obj, None, prog, {n: v for n, v in sizes.items() if n in names})
