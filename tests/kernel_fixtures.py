"""Pytest helpers for tests that need the bpf() syscall: the `requires_kernel` marker and a C-to-object builder."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hxdp.linux import kernel

_ok, _reason = kernel.available()

# Marks a test as needing bpf() (BPF_PROG_LOAD + BPF_PROG_TEST_RUN) and skips it with the kernel's reason otherwise.
requires_kernel = pytest.mark.skipif(not _ok, reason=f"kernel oracle unavailable: {_reason}")
kernel_test = [pytest.mark.kernel, requires_kernel]

CLANG = shutil.which("clang") or shutil.which("clang-14")
requires_clang = pytest.mark.skipif(CLANG is None, reason="clang (BPF target) not installed")

ARCH_INC = "/usr/include/x86_64-linux-gnu"


def build_bpf(tmp_path: Path, source: str, name: str = "prog") -> Path:
    """Compile a C XDP source (libbpf style) to tmp_path/name.o with the flags of xdp_progs/Makefile."""
    src = tmp_path / f"{name}.c"
    obj = tmp_path / f"{name}.o"
    src.write_text(source)
    multiarch = subprocess.run([CLANG, "-print-multiarch"], capture_output=True, text=True).stdout.strip()
    inc = f"/usr/include/{multiarch}" if multiarch else ARCH_INC
    cmd = [CLANG, "-O2", "-g", "-target", "bpf", "-mcpu=v3", f"-I{inc}", "-c", str(src), "-o", str(obj)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return obj
