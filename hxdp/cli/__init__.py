"""The `hxdp` command line: one subcommand per module listed in COMMAND_MODULES."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import sysconfig
import threading
import traceback
from collections.abc import Iterator
from typing import NoReturn

from hxdp import __version__
from hxdp.errors import HxdpError

# Each module defines register(subparsers) adding its subcommands; the handler is set with set_defaults(func=...)
# and returns an exit code. A module not written yet in this checkout is skipped.
COMMAND_MODULES = (
    "hxdp.cli.disasm",
    "hxdp.cli.traffic",
    "hxdp.cli.compile",
    "hxdp.cli.exec",
    "hxdp.cli.run",
    "hxdp.cli.kernel",
    "hxdp.cli.diff",
    "hxdp.cli.baseline",
    "hxdp.cli.experiment",
    "hxdp.cli.fuzz",
    "hxdp.cli.board",
    "hxdp.cli.objects",
    "hxdp.cli.events",
    "hxdp.cli.fib",
)

DEBUG_ENV = "HXDP_DEBUG"  # set (to anything but "" or "0") to get Python tracebacks instead of one-line errors
EXIT_ERROR = 1  # a user-facing failure (HxdpError, an unreadable/unwritable file)
EXIT_USAGE = 2  # bad command line (argparse)
EXIT_INTERNAL = 3  # a bug: an exception hxdp did not expect
EXIT_INTERRUPTED = 130  # Ctrl-C

DESCRIPTION = (
    "hXDP toolchain: compile Linux XDP programs (clang -target bpf objects) into ROMs for the Sephirot VLIW core, "
    "run them on the models, the RTL simulation or the simulated board, and compare with Linux XDP. "
    f"Errors are one line on stderr with a non-zero exit; set {DEBUG_ENV}=1 for Python tracebacks."
)


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def one_line(text: str) -> str:
    """A message as one line: its non-empty lines joined with ' | '."""
    parts = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return " | ".join(parts) if parts else ""


class HxdpArgumentParser(argparse.ArgumentParser):
    """argparse with one-line usage errors (`hxdp CMD: error: ... (see hxdp CMD --help)`, exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)} (see `{self.prog} --help`)\n")


def _load_commands(sub: argparse._SubParsersAction) -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # not written yet in this checkout
                continue
            if debug_enabled():
                raise
            print(f"hxdp: warning: command module {name} cannot be loaded: {one_line(str(exc))} "
                  f"({DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
            continue
        except Exception as exc:  # one broken module must not take every other subcommand down
            if debug_enabled():
                raise
            print(f"hxdp: warning: command module {name} cannot be loaded: {type(exc).__name__}: "
                  f"{one_line(str(exc))} ({DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
            continue
        module.register(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = HxdpArgumentParser(prog="hxdp", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"hxdp {__version__}")
    # bpftool takes its output options before the object too: `hxdp -j map dump NAME`
    parser.add_argument("-j", "--json", dest="global_json", action="store_true",
                        help="JSON output, for the commands that have it (as their own -j/--json)")
    parser.add_argument("-p", "--pretty", dest="global_pretty", action="store_true",
                        help="pretty JSON, for the commands that have it (implies -j)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _load_commands(sub)
    return parser


def _os_error_text(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else ""
    what = exc.strerror or one_line(str(exc))
    if exc.filename2 is not None:
        where = f"{where} -> {exc.filename2}"
    return f"{where}: {what}" if where else what


def _is_project_file(filename: str) -> bool:
    """Not the standard library, an installed package or a frozen module: where a bug is worth pointing at."""
    libs = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return not filename.startswith("<") and not any(filename.startswith(d + os.sep) for d in libs)


def _silence_stdout() -> None:
    """After a broken pipe (`hxdp ... | head`), keep the interpreter from failing again when it flushes stdout."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class Terminated(SystemExit):
    """SIGTERM/SIGHUP turned into an exception, so that cleanup (temporary files, namespaces) runs."""


@contextlib.contextmanager
def _terminate_raises() -> Iterator[None]:
    """While a command runs (main thread only): SIGTERM/SIGHUP raise Terminated(128 + signal)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated(128 + signum)

    old = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):  # never override a handler someone installed
            old[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return {name: p for a in parser._actions if isinstance(a, argparse._SubParsersAction)
            for name, p in a.choices.items()}


def _has_flag(parser: argparse.ArgumentParser, flag: str) -> bool:
    """Whether `parser` or one of its verbs takes `flag` as a switch (no value)."""
    action = parser._option_string_actions.get(flag)
    if action is not None and action.nargs == 0:
        return True
    return any(_has_flag(p, flag) for p in _subparsers(parser).values())


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    if args.global_json or args.global_pretty:
        command = _subparsers(parser)[args.command]
        if not _has_flag(command, "--json"):
            parser.error(f"-j/-p: `hxdp {args.command}` has no JSON output switch")
        args.json = True
        if args.global_pretty and _has_flag(command, "--pretty"):
            args.pretty = True
    name = f"hxdp {args.command}"
    try:
        with _terminate_raises():
            return int(args.func(args) or 0)
    except Terminated as exc:
        print(f"{name}: terminated", file=sys.stderr)
        return int(exc.code or 1)
    except HxdpError as exc:
        if debug_enabled():
            traceback.print_exc()
        print(f"{name}: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        if debug_enabled():
            traceback.print_exc()
        print(f"{name}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except OSError as exc:  # a file the command did not check itself: still the user's path, named
        if debug_enabled():
            raise
        print(f"{name}: error: {_os_error_text(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug: one line, but distinguishable (exit 3) and never silent
        if debug_enabled():
            raise
        frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
        ours = [f for f in frames if _is_project_file(f.filename)] or frames  # deepest frame outside libraries
        at = f" at {os.path.basename(ours[-1].filename)}:{ours[-1].lineno}" if ours else ""
        print(f"{name}: internal error: {type(exc).__name__}: {one_line(str(exc))}{at} "
              f"(a bug; rerun with {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL

