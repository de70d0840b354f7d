"""Write output files atomically so that a failure never leaves a half-written file behind."""

from __future__ import annotations

import os
import shutil
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


def _umask() -> int:
    """The process umask, read without changing it (from /proc; else the usual 022)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _mode_for(path: Path) -> int:
    """An existing file keeps its mode (never widened); a new one gets 0666 less the umask, as open() would."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _target(path: str | os.PathLike[str]) -> Path:
    if not str(path):
        raise OutputError("an empty output path ('') names no file")
    p = Path(path)
    if p.is_symlink():
        p = Path(os.path.realpath(p))
    if p.is_dir():
        raise OutputError(f"{p}: cannot write: it is a directory")
    return p


def _stage(path: Path, data: str | bytes) -> str:
    """Write `data` to a temporary file beside `path` with the mode `path` will have; returns its name."""
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
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)
        os.chmod(tmp, _mode_for(path))
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, HxdpError):
            raise OutputError(f"{path}: cannot write: {_why(exc)}") from None
        raise
    return tmp


def _unlink(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def _write_special(path: Path, data: str | bytes) -> None:
    try:
        with open(path, "wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {_why(exc)}") from None


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and a rename: readers see the old file
    or the whole new one, and an error or Ctrl-C leaves no partial file. A symlink is followed (its target is
    replaced); devices and FIFOs such as /dev/null or /dev/stdout are written in place. The file gets the mode an
    existing one had (never widened), a new one 0666 less the umask. Raises OutputError (an HxdpError and OSError)
    naming the path when it cannot be written."""
    write_outputs([(path, data)])


def write_outputs(items: list[tuple[str | os.PathLike[str], str | bytes]]) -> None:
    """Write several outputs all or none (as far as files allow): every regular file is staged first, devices are
    written next, and only then are the staged files renamed into place; an error before that leaves none."""
    targets = [(_target(p), d) for p, d in items]
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in targets:
            if not _is_special(path):
                staged.append((_stage(path, data), path))
        for path, data in targets:
            if _is_special(path):
                _write_special(path, data)
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException as exc:
        for tmp, _path in staged:
            _unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, HxdpError):
            raise OutputError(f"{path}: cannot write: {_why(exc)}") from None
        raise


def check_outputs(outputs: dict[str | os.PathLike[str], str], inputs: list[str | os.PathLike[str]]) -> None:
    """Refuse, before any work, an empty output path, an output that is one of the inputs (it would be replaced)
    or two outputs on one file; then check each output is writable."""
    seen: dict[str, str] = {}
    for out, what in outputs.items():
        if not str(out):
            raise OutputError(f"the {what} path is empty ('')")
        real = os.path.realpath(out)
        if _is_special(Path(out)):
            continue  # /dev/null and friends may take several outputs
        for inp in inputs:
            if real == os.path.realpath(inp):
                raise OutputError(f"{out}: the {what} would replace the input {inp}")
        if real in seen:
            raise OutputError(f"{out}: both the {seen[real]} and the {what} would be written there")
        seen[real] = what
        check_writable(out, what)


def layout_path_beside(rom: str | os.PathLike[str]) -> Path | None:
    """PROG.maps.json beside a ROM output; None when the ROM goes to a device (/dev/null has no folder to hold
    a layout beside it: /dev/null.maps.json would be a stray file)."""
    p = Path(rom)
    return None if _is_special(p) else p.with_suffix(".maps.json")


def install_file(src: str | os.PathLike[str], dest: str | os.PathLike[str]) -> None:
    """Put a finished file (a trace, a waveform) at `dest` whole: copied beside it, then renamed over it."""
    target = _target(dest)
    if _is_special(target):
        with open(src, "rb") as fin, open(target, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        return
    parent = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=parent)
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, HxdpError):
            raise OutputError(f"{target}: cannot write: {_why(exc)}") from None
        raise
