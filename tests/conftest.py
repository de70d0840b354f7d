"""Shared test helpers: compiling the C test objects under tests/data/elf with clang."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
ELF_SOURCES = DATA / "elf"
XDP_PROGS = Path(__file__).parent.parent / "xdp_progs"


def clang() -> str | None:
    return shutil.which("clang") or shutil.which("clang-14")


def bpf_cflags() -> list[str]:
    return ["-O2", "-g", "-target", "bpf", "-mcpu=v3", f"-I/usr/include/{platform.machine()}-linux-gnu"]


def compile_bpf(src_path: str | Path, out_dir: str | Path, include: Sequence[str | Path] = ()) -> Path:
    """Compile one C file to a BPF object in out_dir (clang -O2 -g -target bpf -mcpu=v3); returns the object."""
    cc = clang()
    if cc is None:
        pytest.skip("clang is not installed")
    src = Path(src_path)
    out = Path(out_dir) / (src.stem + ".o")
    inc = [f"-I{d}" for d in include]
    proc = subprocess.run([cc, *bpf_cflags(), *inc, "-c", str(src), "-o", str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"clang failed on {src}:\n{proc.stderr}")
    return out


@pytest.fixture(scope="session", autouse=True)
def _session_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The files the toolchain leaves for a user in the temporary folder (a refused program's verifier log, a board's
    folder) go under pytest's own temporary folder, which pytest prunes, instead of piling up in /tmp."""
    tmp = tmp_path_factory.mktemp("tmp")
    tempfile.tempdir = str(tmp)
    os.environ["TMPDIR"] = str(tmp)


@pytest.fixture(scope="session")
def elf_objects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every tests/data/elf/*.c compiled once per session: {stem: object path}."""
    out_dir = tmp_path_factory.mktemp("elf")
    return {src.stem: compile_bpf(src, out_dir) for src in sorted(ELF_SOURCES.glob("*.c"))}


@pytest.fixture(scope="session")
def xdp_prog_objects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every xdp_progs/*.c compiled once per session (in parallel): {stem: object path}."""
    out_dir = tmp_path_factory.mktemp("xdp_progs")
    sources = sorted(XDP_PROGS.glob("*.c"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        objs = list(pool.map(lambda src: compile_bpf(src, out_dir, [XDP_PROGS]), sources))
    return {src.stem: obj for src, obj in zip(sources, objs, strict=True)}
