"""The bundled program suite (xdp_progs/): objects, traffic, initial maps, expected actions, main paths, and roms/."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.paths import PROGS_DIR, ROMS_DIR

PATHS_FILE = "paths.json"  # program -> the action of its main (forwarding) path


class SuiteError(HxdpError):
    """The suite's description files are incomplete or inconsistent."""


def main_paths(progs_dir: Path = PROGS_DIR) -> dict[str, str]:
    """xdp_progs/paths.json: each program's main path, the action of what it is for (its forwarding path)."""
    path = progs_dir / PATHS_FILE
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SuiteError(f"{path}: cannot read the programs' main paths ({exc})") from None
    names = set(params.ACTION_NAMES.values())
    bad = {k: v for k, v in doc.items() if v not in names}
    if bad:
        raise SuiteError(f"{path}: not an XDP action: {bad} (one of {', '.join(sorted(names))})")
    return doc


@dataclass(frozen=True)
class SuiteProgram:
    """One program of xdp_progs/ with its companion files."""

    name: str
    obj: Path
    traffic: Path
    maps: Path
    expect: Path

    def map_config(self) -> dict[str, Any]:
        if self.maps.exists():
            return json.loads(self.maps.read_text())
        return {"maps": {}}

    def sizes(self) -> dict[str, int]:
        """max_entries its loader gives the maps the object leaves unsized ("max_entries" of the configuration)."""
        from hxdp.frontend.sizing import config_sizes

        return config_sizes(self.map_config(), str(self.maps))

    @property
    def prog(self) -> str | None:
        """The program to load: None when the object holds one XDP program; else the one named as the file (the
        others are the stages it tail-calls), as a loader's --prog names it."""
        from hxdp.frontend.elf import list_programs

        return self.name if len(list_programs(self.obj)) > 1 else None

    def inner(self) -> dict[str, dict[bytes, str]]:
        """The inner maps its loader creates in its maps of maps ("inner_maps" of the configuration)."""
        from hxdp.frontend.sizing import config_inner

        return config_inner(self.map_config(), str(self.maps))

    def load(self) -> Any:
        """The program as hxdp.frontend.elf.load_program gives it, maps sized, inner maps created."""
        from hxdp.frontend.elf import load_program

        return load_program(self.obj, prog=self.prog, sizes=self.sizes(), inner=self.inner())

    def kernel(self) -> Any:
        """The program loaded in the kernel oracle (hxdp.linux.kernel.KernelProgram), maps sized, inner maps
        created."""
        from hxdp.linux.kernel import KernelProgram

        return KernelProgram(self.obj, prog=self.prog, sizes=self.sizes(), inner=self.inner())

    def main_path(self) -> str:
        """The action of the program's main path (xdp_progs/paths.json); a program without one is an error."""
        paths = main_paths(self.expect.parent.parent)
        if self.name not in paths:
            raise SuiteError(f"xdp_progs/{PATHS_FILE} has no main path for {self.name}: add the action of its "
                             "forwarding path (what the program is for)")
        return paths[self.name]

    def expected_actions(self) -> dict[str, int]:
        if self.expect.exists():
            return json.loads(self.expect.read_text())
        return {}


def program(name: str, progs_dir: Path = PROGS_DIR) -> SuiteProgram:
    """The suite program `name` with its companion files (xdp_progs/NAME.c, build/NAME.o, traffic/, maps/, expect/)."""
    return SuiteProgram(
        name=name,
        obj=progs_dir / "build" / f"{name}.o",
        traffic=progs_dir / "traffic" / f"{name}.pcap",
        maps=progs_dir / "maps" / f"{name}.json",
        expect=progs_dir / "expect" / f"{name}.json",
    )


def programs(progs_dir: Path = PROGS_DIR) -> list[SuiteProgram]:
    """Every program whose C source is in xdp_progs/ (objects are in xdp_progs/build/ after `make progs`)."""
    return [program(src.stem, progs_dir) for src in sorted(progs_dir.glob("*.c"))]


def build_roms(out_dir: Path = ROMS_DIR, progs_dir: Path = PROGS_DIR) -> list[Path]:
    """Compile every suite object into out_dir/NAME.rom and out_dir/NAME.maps.json (reproducible bit for bit)."""
    from hxdp.atomic_write import write_atomic
    from hxdp.compiler import compile_program

    written: list[Path] = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for prog in programs(progs_dir):
        result = compile_program(prog.load())
        rom_path = out_dir / f"{prog.name}.rom"
        result.rom.save(rom_path)
        write_atomic(rom_path.with_suffix(".maps.json"), result.layout.to_json())
        written.append(rom_path)
    return written
