"""The simulated board daemon: build sephirot_board under Verilator (cached) and run it as a server process."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from hxdp.board.transport import DEFAULT_SOCKET, BoardError, SimBoard
from hxdp.rtl import manifest
from hxdp.rtl.sim import (
    MAKE_FLAGS,
    RTL_DIR,
    SEPHIROT,
    RtlError,
    available,
    cache_root,
    cores_flags,
    hash_sources,
    verilator_build,
)

HARNESS_DIR = SEPHIROT / "harness" / "board"
MANIFEST_TARGET = "board_sim"  # the board daemon's target in sephirot/sephirot.core
TOP = manifest.toplevel(MANIFEST_TARGET)
BINARY = "board_sim"
MAX_PORTS = 4  # the model is built with NPORTS = 4; `--ports N` uses the first N
BUILD_FLAGS = ["--cc", "--exe", "--build", "-O2", "-j", "2", "-Wno-fatal", "--top-module", TOP, f"-GNPORTS={MAX_PORTS}",
               *MAKE_FLAGS]
CFLAGS = "-O2 -std=c++17"


def sources() -> list[Path]:
    """The target's files in the manifest, and every RTL file besides (see hxdp.rtl.sim.sources)."""
    listed = manifest.sources(MANIFEST_TARGET)
    return listed + [f for f in sorted(RTL_DIR.glob("*.v")) + sorted(RTL_DIR.glob("*.vh")) if f not in listed]


def board_flags(cores: int = 1) -> tuple[list[str], str]:
    """The Verilator flags and C++ flags of a board with `cores` Sephirot cores (sephirot_board's CORES, the
    daemon's SEPH_CORES; one core: the flags of before)."""
    try:
        gflags, cdefs = cores_flags(cores)
    except RtlError as exc:
        raise BoardError(str(exc)) from None
    return [*BUILD_FLAGS, *gflags], CFLAGS + cdefs


def source_hash(cores: int = 1) -> str:
    return hash_sources(sources(), *board_flags(cores))


def build(verbose: bool = False, cores: int = 1) -> Path:
    """The board simulator binary for the current sources and `cores` cores, built on first use (under a minute on
    2 cores for one core; a board of several cores is a build of its own, cached beside it)."""
    ok, why = available()
    if not ok:
        raise BoardError(why)
    inputs = manifest.files(MANIFEST_TARGET, "verilogSource") + manifest.files(MANIFEST_TARGET, "cppSource")
    name = "board" if cores == 1 else f"board-cores{cores}"
    flags, cflags = board_flags(cores)
    return verilator_build(cache_root() / f"{name}-{source_hash(cores)}", inputs, flags, cflags, BINARY, TOP,
                           BoardError, verbose)


def server_args(socket_path: str = DEFAULT_SOCKET, ports: int = 1, pcap: str | None = None, loop: bool = False,
                out: str | None = None, step: bool = False, keep: int | None = None, pcap_port: int = 0,
                taps: list[str] | None = None, host_pcap: str | None = None, host_hold: bool = False,
                group: str | None = None, cores: int = 1) -> list[str]:
    if not 1 <= ports <= MAX_PORTS:
        raise BoardError(f"--ports {ports}: the simulated board has 1 to {MAX_PORTS} ports")
    args = [str(build(cores=cores)), "--socket", socket_path, "--ports", str(ports)]
    if pcap:
        args += ["--pcap", pcap, "--pcap-port", str(pcap_port)] + (["--loop"] if loop else [])
    if out:
        args += ["--out", out]
    if step:
        args.append("--step")
    if keep is not None:
        args += ["--keep", str(keep)]
    if taps:
        if len(taps) > ports:
            raise BoardError(f"--tap: {len(taps)} TAP interfaces for {ports} ports")
        args += ["--tap", ",".join(taps)]
    if host_pcap:
        if not os.path.isdir(host_pcap):
            raise BoardError(f"--host-pcap {host_pcap}: not a directory")
        args += ["--host-pcap", host_pcap]
    if host_hold:
        args.append("--host-hold")
    if group:
        args += ["--group", group]
    return args


class BoardServer:
    """A simulated board daemon started in the background (context manager; `.board()` connects a client)."""

    def __init__(self, socket_path: str | None = None, ports: int = 1, **kw: object) -> None:
        self._tmp = None
        if socket_path is None:
            self._tmp = tempfile.mkdtemp(prefix="hxdp-board-")
            socket_path = os.path.join(self._tmp, "board.sock")
        self.socket_path = socket_path
        self.args = server_args(socket_path, ports, **kw)  # type: ignore[arg-type]
        self.proc: subprocess.Popen[bytes] | None = None
        self.spec = f"sim:{socket_path}"

    def start(self, timeout: float = 30.0) -> BoardServer:
        if os.path.exists(self.socket_path):
            try:
                SimBoard(self.socket_path, timeout=2.0).close()
            except BoardError:
                pass  # a stale socket file: the daemon replaces it
            else:
                raise BoardError(f"another board is already serving on {self.socket_path}")
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise BoardError(f"simulated board exited at start (exit {self.proc.returncode}): {err.strip()}")
            if os.path.exists(self.socket_path):
                try:
                    SimBoard(self.socket_path).close()
                    return self
                except BoardError:
                    pass
            time.sleep(0.02)
        self.stop()
        raise BoardError(f"simulated board did not start listening on {self.socket_path} within {timeout:.0f} s")

    def board(self) -> SimBoard:
        return SimBoard(self.socket_path)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stderr:
            self.proc.stderr.close()
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> BoardServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
