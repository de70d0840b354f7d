"""What this host loaded on a board (name, source, time, map layout), noted by the program's tag: the board holds
rows, not names."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from hxdp.atomic_write import write_atomic
from hxdp.board.transport import Board
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapError, MapLayout

STATE_ENV = "HXDP_STATE_DIR"  # where `prog load`/`inject` note what they loaded (default ~/.cache/hxdp/boards)


def program_tag(rom: Rom) -> str:
    """16 hex digits naming a program by its rows (like bpftool's tag, a SHA-1 prefix of the instructions)."""
    return hashlib.sha1(b"".join(ins.to_bytes() for row in rom.rows for ins in row)).hexdigest()[:16]


def _record_path(board: Board) -> Path:
    kind, _, where = board.name.partition(":")
    name = f"{kind}:{os.path.abspath(where)}" if kind == "sim" else board.name
    base = os.environ.get(STATE_ENV) or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hxdp"
    return Path(base) / "boards" / (hashlib.sha1(name.encode()).hexdigest()[:16] + ".json")


def remember_load(board: Board, rom: Rom, layout: MapLayout | None, source: str | Path) -> None:
    """Note on this host what was loaded (name, source, time, map layout): the board holds the rows, not names."""
    doc = {"board": board.name, "name": Path(source).stem, "source": str(Path(source).resolve()),
           "tag": program_tag(rom), "loaded_at": int(time.time()),
           "layout": json.loads(layout.to_json()) if layout is not None else None}
    path = _record_path(board)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(doc, indent=1) + "\n")
    except OSError:
        pass  # a convenience: without the note, names need --layout/--rom and `prog show` shows the tag only


def recall_load(board: Board, tag: str) -> dict | None:
    """The note of the program the board runs now, if this host loaded it (same tag); else None."""
    try:
        doc = json.loads(_record_path(board).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("tag") == tag else None


def recalled_layout(doc: dict | None) -> MapLayout | None:
    if not doc or not doc.get("layout"):
        return None
    try:
        return MapLayout.from_json(json.dumps(doc["layout"]))
    except MapError:
        return None  # a note from another hxdp version: ignored like a missing one
