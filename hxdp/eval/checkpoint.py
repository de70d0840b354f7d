"""The checkpoint of a run: one JSON line per finished point, after a fingerprint of the measured sources."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from hxdp.eval.harness import ExperimentError, Record
from hxdp.eval.output import json_default
from hxdp.paths import ROOT

FINGERPRINT_SOURCES = (("hxdp", "*.py"), ("sephirot", "*"), ("xdp_progs", "*.[ch]"),
                       ("xdp_progs/build", "*.o"), ("xdp_progs/maps", "*.json"), ("xdp_progs/traffic", "*.pcap"))


def checkpoint_path(out: Path, quick: bool) -> Path:
    return out / ("checkpoint-quick.jsonl" if quick else "checkpoint.jsonl")


def load_checkpoint(path: Path) -> dict[str, Record]:
    """Point key -> record; a torn last line (interrupted write) is ignored, any other bad line is an error."""
    done: dict[str, Record] = {}
    if not path.exists():
        return done
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if "fingerprint" in entry:
                continue
            done[entry["point"]] = entry["record"]
        except (ValueError, KeyError, TypeError) as exc:
            if i == len(lines) - 1:
                break
            raise ExperimentError(f"{path}:{i + 1}: not a checkpoint line ({exc})") from None
    return done


def code_fingerprint() -> str:
    """A hash of what the measurements depend on: a checkpoint is only resumed with the same sources."""
    h = hashlib.sha256()
    for folder, pattern in FINGERPRINT_SOURCES:
        for f in sorted((ROOT / folder).rglob(pattern) if folder == "sephirot" else (ROOT / folder).glob(pattern)):
            if f.is_file() and "__pycache__" not in f.parts:
                h.update(str(f.relative_to(ROOT)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()[:16]


def checkpoint_fingerprint(path: Path) -> str | None:
    try:
        with path.open() as f:
            first = json.loads(f.readline() or "{}")
    except (OSError, ValueError):
        return None
    return first.get("fingerprint") if isinstance(first, dict) else None


def start_checkpoint(path: Path, fingerprint: str) -> None:
    """A new checkpoint holding only the fingerprint (an old one at `path` is replaced)."""
    if path.exists():
        path.unlink()
    path.write_text(json.dumps({"fingerprint": fingerprint}) + "\n")


def append_checkpoint(path: Path, key: str, record: Record) -> None:
    line = json.dumps({"point": key, "record": record}, sort_keys=True, default=json_default)
    with path.open("a") as f:
        f.write(line + "\n")  # one write per line: a killed process leaves at most a torn last line
