"""Write output files atomically so that a failure never leaves a half-written file behind."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from hxdp.errors import HxdpError


class OutputError(HxdpError, OSError):
    """An output file that cannot be written (missing folder, a directory in the way, no permission, disk full).

    Also an OSError, so callers that catch OSError keep working."""


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def check_writable(path: str | os.PathLike[str], what: str = "output") -> None:
    """Raise OutputError now when `path` could not be written later (call it before long work)."""
    p = Path(path)
    if p.is_dir():
        raise OutputError(f"{p}: cannot write the {what}: it is a directory")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise OutputError(f"{p}: cannot write the {what}: folder {parent} does not exist")
    if not parent.is_dir():
        raise OutputError(f"{p}: cannot write the {what}: {parent} is not a folder")
    if p.exists() and not _is_special(p):
        if not os.access(p, os.W_OK) and not os.access(parent, os.W_OK):
            raise OutputError(f"{p}: cannot write the {what}: permission denied")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{p}: cannot write the {what}: folder {parent} is not writable")


def _is_special(p: Path) -> bool:
    """A device, FIFO or socket (/dev/null, /dev/stdout, a named pipe): written in place, never replaced."""
    try:
        mode = p.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and a rename: readers see the old file
    or the whole new one, and an error or Ctrl-C leaves no partial file. A symlink is followed (its target is
    replaced); devices and FIFOs such as /dev/null or /dev/stdout are written in place. Raises OutputError (an
    HxdpError and OSError) naming the path when it cannot be written."""
    path = Path(path)
    mode = "wb" if isinstance(data, bytes) else "w"
    if _is_special(path):
        try:
            with open(path, mode) as fh:
                fh.write(data)
        except OSError as exc:
            raise OutputError(f"{path}: cannot write: {_why(exc)}") from None
        return
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    if path.is_dir():
        raise OutputError(f"{path}: cannot write: it is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=parent)
    except OSError as exc:
        if not parent.exists():
            raise OutputError(f"{path}: cannot write: folder {parent} does not exist") from None
        if not parent.is_dir():
            raise OutputError(f"{path}: cannot write: {parent} is not a folder") from None
        raise OutputError(f"{path}: cannot write: {_why(exc)}") from None
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, HxdpError):
            raise OutputError(f"{path}: cannot write: {_why(exc)}") from None
        raise
