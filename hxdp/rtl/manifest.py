"""The RTL's file lists, read from the FuseSoC manifest sephirot/sephirot.core (its one definition)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from hxdp.errors import HxdpError
from hxdp.paths import SEPHIROT

CORE_FILE = SEPHIROT / "sephirot.core"


class ManifestError(HxdpError):
    """The FuseSoC manifest is missing or does not describe a target."""


@cache
def _core() -> dict[str, Any]:
    import yaml

    try:
        doc = yaml.safe_load(CORE_FILE.read_text())
    except OSError as exc:
        raise ManifestError(f"{CORE_FILE}: cannot read the RTL manifest: {exc.strerror}") from None
    if not isinstance(doc, dict) or "filesets" not in doc or "targets" not in doc:
        raise ManifestError(f"{CORE_FILE}: not a CAPI2 core description (filesets, targets)")
    return doc


def _entries(fileset: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for item in fileset.get("files", []):
        if isinstance(item, dict):
            (name, attrs), = item.items()
            out.append((name, attrs or {}))
        else:
            out.append((item, {}))
    return out


def target(name: str) -> dict[str, Any]:
    targets = _core()["targets"]
    if name not in targets:
        raise ManifestError(f"{CORE_FILE}: no target {name!r} (targets: {', '.join(targets)})")
    return targets[name]


def toplevel(name: str) -> str:
    return target(name)["toplevel"]


def files(name: str, file_type: str | None = None, includes: bool = False) -> list[Path]:
    """The files of target `name` in the manifest's order: those of `file_type` (verilogSource, cppSource, vlt;
    None: every type), include files (headers) only when `includes`."""
    sets = _core()["filesets"]
    out: list[Path] = []
    for fs_name in target(name)["filesets"]:
        fs = sets[fs_name]
        for path, attrs in _entries(fs):
            ftype = attrs.get("file_type", fs.get("file_type"))
            if file_type is not None and ftype != file_type:
                continue
            if attrs.get("is_include_file", False) and not includes:
                continue
            p = SEPHIROT / path
            if p not in out:
                out.append(p)
    return out


def sources(name: str) -> list[Path]:
    """Every file a build of target `name` depends on (sources, headers, waivers) and the manifest itself."""
    return files(name, includes=True) + [CORE_FILE]
