"""libbpf through ctypes: the shared library with its prototypes, the structures, and the two raw calls.

`libbpf()` loads libbpf.so.1 once (shared by the oracle and the baseline) and collects libbpf's own messages
(`take_messages()`). `prog_load` is BPF_PROG_LOAD of an XDP program with the verifier log summarised on a
refusal; `prog_test_run` is one BPF_PROG_TEST_RUN with an xdp_md context, pinned to one CPU. Errors of the
kernel or libbpf are `KernelError`s (hxdp.linux.kernel re-exports it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno as errno_mod
import os
import re
import struct
import tempfile
import threading
import time as time_mod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hxdp.errors import HxdpError, KernelUnavailable
from hxdp.isa.insn import Insn


class KernelError(HxdpError):
    """The kernel or libbpf refused an operation (open, verifier, map update, test run)."""


BPF_PROG_TYPE_XDP = 6
BPF_ANY = 0
ETH_HLEN = 14
DATA_OUT_SIZE = 8192  # room for adjust_head/adjust_tail growth (frames live in one 4 KiB page)
LOG_SIZE = 1 << 22
BPF_F_RDONLY_PROG = 1 << 7


class TestRunOpts(ctypes.Structure):
    """struct bpf_test_run_opts (libbpf 1.x)."""

    __test__ = False  # not a pytest class
    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("data_in", ctypes.c_void_p),
        ("data_out", ctypes.c_void_p),
        ("data_size_in", ctypes.c_uint32),
        ("data_size_out", ctypes.c_uint32),
        ("ctx_in", ctypes.c_void_p),
        ("ctx_out", ctypes.c_void_p),
        ("ctx_size_in", ctypes.c_uint32),
        ("ctx_size_out", ctypes.c_uint32),
        ("retval", ctypes.c_uint32),
        ("repeat", ctypes.c_int),
        ("duration", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("cpu", ctypes.c_uint32),
        ("batch_size", ctypes.c_uint32),
    ]


class ProgLoadOpts(ctypes.Structure):
    """struct bpf_prog_load_opts (libbpf 1.x)."""

    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("attempts", ctypes.c_int),
        ("expected_attach_type", ctypes.c_int),
        ("prog_btf_fd", ctypes.c_uint32),
        ("prog_flags", ctypes.c_uint32),
        ("prog_ifindex", ctypes.c_uint32),
        ("kern_version", ctypes.c_uint32),
        ("attach_btf_id", ctypes.c_uint32),
        ("attach_prog_fd", ctypes.c_uint32),
        ("attach_btf_obj_fd", ctypes.c_uint32),
        ("fd_array", ctypes.c_void_p),
        ("func_info", ctypes.c_void_p),
        ("func_info_cnt", ctypes.c_uint32),
        ("func_info_rec_size", ctypes.c_uint32),
        ("line_info", ctypes.c_void_p),
        ("line_info_cnt", ctypes.c_uint32),
        ("line_info_rec_size", ctypes.c_uint32),
        ("log_level", ctypes.c_uint32),
        ("log_size", ctypes.c_uint32),
        ("log_buf", ctypes.c_char_p),
    ]


class MapCreateOpts(ctypes.Structure):
    """struct bpf_map_create_opts (libbpf 1.x)."""

    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("btf_fd", ctypes.c_uint32),
        ("btf_key_type_id", ctypes.c_uint32),
        ("btf_value_type_id", ctypes.c_uint32),
        ("btf_vmlinux_value_type_id", ctypes.c_uint32),
        ("inner_map_fd", ctypes.c_uint32),
        ("map_flags", ctypes.c_uint32),
        ("map_extra", ctypes.c_uint64),
        ("numa_node", ctypes.c_uint32),
        ("map_ifindex", ctypes.c_uint32),
    ]


_PRINT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_lib_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_libc: ctypes.CDLL | None = None
_messages: list[str] = []  # libbpf's own messages since the last take_messages()


def _print_cb(level: int, fmt: bytes, va_list: int) -> int:
    if level >= 2 or _libc is None:  # LIBBPF_DEBUG: not kept
        return 0
    buf = ctypes.create_string_buffer(4096)
    _libc.vsnprintf(buf, len(buf), fmt, ctypes.c_void_p(va_list))
    _messages.append(buf.value.decode(errors="replace").rstrip("\n"))
    return 0


_print_cb_c = _PRINT_FN(_print_cb)


def take_messages() -> list[str]:
    out = list(_messages)
    _messages.clear()
    return out


def _sig(lib: ctypes.CDLL, name: str, restype: Any, *argtypes: Any) -> None:
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


def libbpf() -> ctypes.CDLL:
    """The libbpf shared library with every prototype this package uses (loaded once, shared by the baseline)."""
    global _lib, _libc
    with _lib_lock:
        if _lib is not None:
            return _lib
        try:
            lib = ctypes.CDLL("libbpf.so.1", use_errno=True)
        except OSError as exc:
            raise KernelUnavailable(f"libbpf.so.1 not found ({exc}); install libbpf1 / libbpf-dev") from None
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.vsnprintf.restype = ctypes.c_int
        libc.vsnprintf.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p]
        vp, cp, u32, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_int
        _sig(lib, "libbpf_set_print", vp, _PRINT_FN)
        _sig(lib, "bpf_object__open_file", vp, cp, vp)
        _sig(lib, "bpf_object__load", i, vp)
        _sig(lib, "bpf_object__close", None, vp)
        _sig(lib, "bpf_object__next_program", vp, vp, vp)
        _sig(lib, "bpf_object__next_map", vp, vp, vp)
        _sig(lib, "bpf_program__name", cp, vp)
        _sig(lib, "bpf_program__section_name", cp, vp)
        _sig(lib, "bpf_program__set_autoload", i, vp, ctypes.c_bool)
        _sig(lib, "bpf_program__set_type", i, vp, i)
        _sig(lib, "bpf_program__set_log_buf", i, vp, ctypes.c_char_p, ctypes.c_size_t)
        _sig(lib, "bpf_program__set_log_level", i, vp, u32)
        _sig(lib, "bpf_program__fd", i, vp)
        _sig(lib, "bpf_map__name", cp, vp)
        _sig(lib, "bpf_map__fd", i, vp)
        _sig(lib, "bpf_map__type", i, vp)
        _sig(lib, "bpf_map__key_size", u32, vp)
        _sig(lib, "bpf_map__value_size", u32, vp)
        _sig(lib, "bpf_map__max_entries", u32, vp)
        _sig(lib, "bpf_map__set_pin_path", i, vp, cp)
        _sig(lib, "bpf_map__set_max_entries", i, vp, u32)
        _sig(lib, "bpf_map__set_autocreate", i, vp, ctypes.c_bool)
        _sig(lib, "bpf_map_update_elem", i, i, vp, vp, ctypes.c_uint64)
        _sig(lib, "bpf_map_lookup_elem", i, i, vp, vp)
        _sig(lib, "bpf_map_delete_elem", i, i, vp)
        _sig(lib, "bpf_map_get_next_key", i, i, vp, vp)
        _sig(lib, "bpf_map_lookup_batch", i, i, vp, vp, vp, vp, ctypes.POINTER(ctypes.c_uint32), vp)
        _sig(lib, "bpf_map_create", i, i, cp, u32, u32, u32, ctypes.POINTER(MapCreateOpts))
        _sig(lib, "bpf_map_freeze", i, i)
        _sig(lib, "bpf_obj_get_info_by_fd", i, i, vp, ctypes.POINTER(u32))
        _sig(lib, "bpf_prog_load", i, i, cp, cp, vp, ctypes.c_size_t, ctypes.POINTER(ProgLoadOpts))
        _sig(lib, "bpf_prog_test_run_opts", i, i, ctypes.POINTER(TestRunOpts))
        _sig(lib, "bpf_xdp_attach", i, i, i, u32, vp)
        _sig(lib, "bpf_xdp_detach", i, i, u32, vp)
        _sig(lib, "libbpf_num_possible_cpus", i)
        lib.libbpf_set_print(_print_cb_c)
        _libc = libc
        _lib = lib
        return lib


def err_text(ret: int) -> str:
    """Text of a libbpf error return (negative errno) or of the current errno."""
    code = -ret if ret < 0 else ctypes.get_errno()
    return f"{errno_mod.errorcode.get(code, str(code))}: {os.strerror(code)}"


@contextmanager
def _pinned_cpu(cpu: int | None = None) -> Iterator[int]:
    """Run on one CPU (`cpu`, by default CPU 0 when allowed) so that per-CPU maps are read on the CPU that ran the
    program. (An XDP test run refuses BPF_F_TEST_RUN_ON_CPU, EINVAL: it runs on the calling CPU, hence the pin.)"""
    old = os.sched_getaffinity(0)
    if cpu is None:
        cpu = 0 if 0 in old else min(old)
    elif cpu not in old:
        raise KernelError(f"CPU {cpu}: not one this process may run on (allowed: {sorted(old)})")
    os.sched_setaffinity(0, {cpu})
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, old)


def verifier_summary(log: str, base: int = 0) -> str:
    """One line from a verifier log: the last instruction it looked at (numbered from `base`) and the errors."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("processed ", "verification time", "stack depth"))]
    insn = max((i for i, ln in enumerate(lines) if re.match(r"\d+: \(", ln)), default=-1)
    errors = lines[insn + 1 :][-3:] if insn + 1 < len(lines) else lines[-1:]
    where = ""
    if insn >= 0:
        m = re.match(r"(\d+): \([0-9a-f]+\) ([^;]*)", lines[insn])
        if m:
            where = f"insn {int(m.group(1)) - base} ({m.group(2).strip()}): "
    return where + "; ".join(errors)


def prog_test_run(
    lib: ctypes.CDLL,
    label: str,
    prog_fd: int,
    packet: bytes,
    ingress_ifindex: int,
    rx_queue_index: int,
    repeat: int,
    out: bool,
    meta: bytes = b"",
    cpu: int | None = None,
) -> tuple[TestRunOpts, bytes, bytes, float]:
    """One BPF_PROG_TEST_RUN on CPU `cpu` (default: CPU 0 when allowed): (opts, metadata, frame, wall ns per
    repeat). The kernel returns the metadata (data_meta..data) in front of the frame in data_out and its length in the
    output context's `data`; `meta` goes in the same way (data_in = meta + frame, the input context's `data` its
    length), as a dispatcher passes it on."""
    if len(packet) < ETH_HLEN:
        raise KernelError(f"packet of {len(packet)} bytes: the kernel's test run needs at least {ETH_HLEN}")
    for what, v in (("ingress ifindex", ingress_ifindex), ("rx_queue_index", rx_queue_index)):
        if not 0 <= v < 2**32:
            raise KernelError(f"{what} {v}: must be a u32 (0 .. {2**32 - 1})")
    data = ctypes.create_string_buffer(meta + packet, len(meta) + len(packet))
    dout = ctypes.create_string_buffer(DATA_OUT_SIZE) if out else None
    ctx = struct.pack("<6I", len(meta), len(meta) + len(packet), 0, ingress_ifindex, rx_queue_index, 0)
    cbuf = ctypes.create_string_buffer(ctx, len(ctx))
    cout = ctypes.create_string_buffer(len(ctx)) if out else None
    opts = TestRunOpts(
        sz=ctypes.sizeof(TestRunOpts),
        data_in=ctypes.addressof(data),
        data_size_in=len(meta) + len(packet),
        data_out=ctypes.addressof(dout) if dout is not None else None,
        data_size_out=DATA_OUT_SIZE if dout is not None else 0,
        ctx_in=ctypes.addressof(cbuf),
        ctx_size_in=len(ctx),
        ctx_out=ctypes.addressof(cout) if cout is not None else None,
        ctx_size_out=len(ctx) if cout is not None else 0,
        repeat=repeat,
    )
    with _pinned_cpu(cpu):
        t0 = time_mod.perf_counter_ns()
        ret = lib.bpf_prog_test_run_opts(prog_fd, ctypes.byref(opts))
        t1 = time_mod.perf_counter_ns()
    if ret < 0:
        hint = ""
        if -ret in (errno_mod.EINVAL, errno_mod.ENODEV):
            hint = f" (ingress_ifindex {ingress_ifindex} rx_queue_index {rx_queue_index} must exist here; 1/0 = lo)"
        raise KernelError(f"{label}: BPF_PROG_TEST_RUN failed ({err_text(ret)}){hint}")
    if dout is None or cout is None:
        return opts, b"", b"", (t1 - t0) / max(repeat, 1)
    raw = dout.raw[: opts.data_size_out]
    metalen = struct.unpack_from("<I", cout.raw, 0)[0] if opts.ctx_size_out >= 4 else 0
    return opts, raw[:metalen], raw[metalen:], (t1 - t0) / max(repeat, 1)


def prog_load(lib: ctypes.CDLL, insns: list[Insn], name: str = "raw", license: bytes = b"GPL", base: int = 0) -> int:
    """BPF_PROG_LOAD of an XDP program; a refusal names the instruction counted from slot `base`."""
    code = b"".join(i.to_bytes() for i in insns)
    log = ctypes.create_string_buffer(LOG_SIZE)
    opts = ProgLoadOpts(sz=ctypes.sizeof(ProgLoadOpts), log_level=1, log_size=LOG_SIZE)
    opts.log_buf = ctypes.cast(log, ctypes.c_char_p)
    kname = ("hxdp_" + "".join(c if c.isalnum() or c == "_" else "_" for c in name))[:15].encode()
    fd = lib.bpf_prog_load(BPF_PROG_TYPE_XDP, kname, license, code, len(insns), ctypes.byref(opts))
    take_messages()
    if fd < 0:
        text = log.value.decode(errors="replace")
        tfd, log_path = tempfile.mkstemp(prefix=f"hxdp-verifier-{name}-", suffix=".log")
        with os.fdopen(tfd, "w") as fh:
            fh.write(text)
        raise KernelError(
            f"kernel refused program {name} ({err_text(fd)}): {verifier_summary(text, base)} [log: {log_path}]"
        )
    return fd
