"""Kernel oracle: load XDP objects into the running kernel, run packets with BPF_PROG_TEST_RUN.

The libbpf binding (ctypes structures, prototypes, the raw load and test-run calls) is hxdp.linux.libbpf.

Object mode (`KernelProgram`): the object is opened with bpf_object__open_file, only the chosen program is
loaded (type forced to XDP), map pinning is disabled (nothing is ever pinned), map fds are found by name.
`run()` executes one packet with repeat=1 (RunResult.packet = data..data_end afterwards, RunResult.meta =
data_meta..data, split with the output context) and an `xdp_md` context naming the ingress ifindex and rx queue; the
kernel requires the ifindex to exist in the caller's network namespace and the queue to be registered: ifindex 1
(lo) with rx_queue_index 0 always works and is what the kernel uses without a context; other queues of lo fail
with EINVAL (lo has one rx queue). The process is pinned to one CPU (CPU 0 when allowed, or `run(cpu=k)`'s: an XDP
test run refuses BPF_F_TEST_RUN_ON_CPU and runs on the calling CPU) while it runs, and `dump()` reads that CPU's slot
of per-CPU maps (`dump(cpu=k)` CPU k's; PERF_EVENT_ARRAY and RINGBUF maps have no entries: left out).
The program's perf event arrays and ring buffers get libbpf's readers (hxdp.linux.eventreader), and `run()`
returns the records the packet wrote (`RunResult.events`). The kernel does not report where a redirect goes:
`RunResult.redirect` and `RunResult.host` are always None here (compare redirect targets through maps or the models
only). Host queues: a cpumap entry is created with its qsize (only on a CPU the kernel calls possible); an xskmap
entry needs an AF_XDP socket, so `update()` of an xskmap opens one (unbound: test runs deliver nothing) and stores its
fd, whatever queue id the configuration names; the kernel then returns XDP_REDIRECT for that slot and the flags'
action for an empty one, which is what the comparison checks. The kernel cannot read xskmap entries back (lookup from
user space is EOPNOTSUPP), so `dump()` leaves xskmaps out and `hxdp diff` compares them on the engines only.
A program's verifier failure raises `KernelError` with one line naming the program and the path of the full
verifier log (written to the temporary directory).

Program mode (`KernelProgram.from_program(program)`): a Program of our ELF loader (hxdp.frontend.elf) is loaded without
libbpf: maps are created with BPF_MAP_CREATE (global data gets its initial bytes, .rodata is frozen), lddw map
references are patched with the fds and the instructions go to BPF_PROG_LOAD. It runs objects libbpf 1.x refuses
(legacy `maps` sections) and, on the suite, shows that the loader links programs exactly as libbpf does.

Timing (`timing()` / `time()`): a fresh copy of the object is loaded, given the same map configuration, and
runs the original packet `repeat` times in one BPF_PROG_TEST_RUN; the kernel's average (rounded down to whole
ns) and the wall-clock ns/packet are both reported. A run with repeat > 1 costs a fixed 15-30 ms here (the
program is swapped into the XDP dispatcher and out again); the wall clock subtracts the median of three repeat=2
runs, so it is only meaningful when repeat * ns/packet is well above that (repeat >= 10**6 for fast programs).
The kernel's timer stops while the test run yields the CPU; the wall clock does not, so on a busy machine the
wall clock is an upper bound and the kernel's average the better figure. The oracle's own instance and maps are
not touched. Repeats reuse the (possibly modified) buffer, as the kernel does.

Raw mode (`run_raw(insns, mem)`), for ISA-level tests. The kernel cannot run a program whose r1 points at an
arbitrary buffer, so a raw program runs as an XDP program with `mem` as the packet, wrapped like this:
    prologue: bounds-check data + len(mem) <= data_end, zero the 512-byte stack, r0 = 0, r3..r9 = 0,
              r1 = data (a packet pointer with len(mem) verified bytes), r2 = len(mem); then the body.
The body follows the models' raw convention (r1 = buffer, r2 = its length, stack zeroed, r0 returned) within the
verifier's rules: no pointer arithmetic other than add/sub of scalars on r1, no access beyond len(mem), no
bpf-to-bpf calls, no map references. Every `exit` ends the program. r0 is returned as 64 bits: the body is
loaded twice, the second time with every exit replaced by a jump to `r0 >>= 32; exit`, because the kernel
reports only the low 32 bits. `mem` shorter than 14 bytes (ETH_HLEN, the kernel's minimum) is padded with
zeros for the run and the padding removed from the returned bytes. Returns (r0, data_out).
"""


from __future__ import annotations

import ctypes
import errno as errno_mod
import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hxdp import params
from hxdp.errors import HxdpError, KernelUnavailable
from hxdp.frontend.elf import attach_kind
from hxdp.frontend.program import Program
from hxdp.isa import table as T
from hxdp.isa.insn import Insn
from hxdp.linux.eventreader import EVENT_MAP_TYPES, EventReaders
from hxdp.linux.libbpf import (
    BPF_ANY,
    BPF_F_RDONLY_PROG,
    BPF_PROG_TYPE_XDP,
    ETH_HLEN,
    LOG_SIZE,
    KernelError,
    MapCreateOpts,
    ProgLoadOpts,
    TestRunOpts,
    err_text,
    libbpf,
    prog_load,
    prog_test_run,
    take_messages,
    verifier_summary,
)
from hxdp.mapdump import ArrayDump
from hxdp.result import RunResult

__all__ = ["KernelError", "KernelMap", "KernelProgram", "Timing", "available", "libbpf", "list_programs", "require",
           "run_raw"]

_ids = params.LINUX_MAP_TYPE_IDS
PERCPU_MAP_TYPES = frozenset(_ids[n] for n in ("percpu_hash", "percpu_array", "lru_percpu_hash",
                                               "percpu_cgroup_storage"))
# what Program mode creates with BPF_MAP_CREATE alone (no BTF, no inner maps)
# map types libbpf sizes itself when the object says 0 (a PERF_EVENT_ARRAY: one slot per possible CPU)
AUTOSIZED_MAP_TYPES = frozenset({_ids["perf_event_array"]})
MAP_IN_MAP_TYPES = frozenset({_ids["array_of_maps"], _ids["hash_of_maps"]})
CREATABLE_MAP_TYPES = frozenset(_ids[n] for n in ("hash", "array", "percpu_hash", "percpu_array", "lru_hash",
                                                  "lru_percpu_hash", "lpm_trie", "devmap", "devmap_hash", "cpumap",
                                                  "xskmap", "perf_event_array", "ringbuf", "prog_array"))
XSKMAP = _ids["xskmap"]
# arrays dumped in one batch lookup (hxdp.mapdump.ArrayDump); devmaps and the like list their set entries only
_BLOB_ARRAY_TYPES = frozenset({_ids["array"], _ids["percpu_array"]})
AF_XDP = 44  # socket family of AF_XDP sockets (linux/socket.h)

_available: tuple[bool, str] | None = None


def available() -> tuple[bool, str]:
    """Whether bpf() works here: loads `r0 = XDP_PASS; exit` as XDP and runs it once with BPF_PROG_TEST_RUN."""
    global _available
    if _available is not None:
        return _available
    try:
        lib = libbpf()
    except KernelUnavailable as exc:
        _available = (False, str(exc))
        return _available
    insns = Insn(0xB7, dst=0, imm=2).to_bytes() + Insn(0x95).to_bytes()
    opts = ProgLoadOpts(sz=ctypes.sizeof(ProgLoadOpts))
    fd = lib.bpf_prog_load(BPF_PROG_TYPE_XDP, b"hxdp_probe", b"GPL", insns, 2, ctypes.byref(opts))
    take_messages()
    if fd < 0:
        code = -fd
        if code in (errno_mod.EPERM, errno_mod.EACCES):
            reason = f"bpf() not permitted ({err_text(fd)}): run as root or with CAP_BPF+CAP_NET_ADMIN"
        elif code == errno_mod.ENOSYS:
            reason = "the kernel has no bpf() syscall (ENOSYS)"
        else:
            reason = f"bpf(BPF_PROG_LOAD) failed ({err_text(fd)})"
        _available = (False, reason)
        return _available
    try:
        data = ctypes.create_string_buffer(bytes(60), 60)
        run = TestRunOpts(sz=ctypes.sizeof(TestRunOpts), data_in=ctypes.addressof(data), data_size_in=60, repeat=1)
        ret = lib.bpf_prog_test_run_opts(fd, ctypes.byref(run))
        if ret < 0:
            _available = (False, f"BPF_PROG_TEST_RUN failed ({err_text(ret)})")
        elif run.retval != 2:
            _available = (False, f"BPF_PROG_TEST_RUN returned {run.retval} for a program returning 2")
        else:
            _available = (True, "bpf() and BPF_PROG_TEST_RUN work")
    finally:
        os.close(fd)
    return _available


def require() -> ctypes.CDLL:
    """libbpf, after checking that bpf() works (raises KernelUnavailable with the reason otherwise)."""
    ok, reason = available()
    if not ok:
        raise KernelUnavailable(reason)
    return libbpf()


@dataclass
class KernelMap:
    """One loaded map: its fd and geometry."""

    name: str
    fd: int
    type: int
    key_size: int
    value_size: int
    max_entries: int

    @property
    def percpu(self) -> bool:
        return self.type in PERCPU_MAP_TYPES


@dataclass
class Timing:
    """One timing run: the kernel's average (whole ns) and the wall-clock ns/packet, fixed syscall cost removed."""

    repeat: int
    kernel_ns: int
    wall_ns: float
    action: int


def _check_object_file(path: str) -> None:
    """A clear KernelError for a path that is missing, a folder, unreadable or not an ELF file."""
    p = Path(path)
    if p.is_dir():
        raise KernelError(f"{path}: is a directory, not an object file")
    if not p.exists():
        raise KernelError(f"{path}: no such object file")
    try:
        with open(p, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise KernelError(f"{path}: cannot open the object: {exc.strerror}") from None
    if head != b"\x7fELF":
        raise KernelError(f"{path}: cannot open: not an ELF object (compile XDP programs with clang -O2 -g "
                          "-target bpf)")


class LibbpfOpenError(KernelError):
    """libbpf cannot open the object (e.g. legacy `maps` sections, which libbpf 1.x refuses)."""


def verify(path: str | os.PathLike[str], section: str | None = None, prog: str | None = None,
           sizes: dict[str, int] | None = None) -> None:
    """Load one program into the kernel's verifier, its maps created at `sizes`, then unload it.

    A refusal is a KernelError with the verifier's message and instruction; KernelUnavailable when bpf() is not
    usable here. Objects libbpf cannot open go through our own loader (KernelProgram.from_program)."""
    require()
    try:
        with KernelProgram(path, section, prog, sizes):
            return
    except LibbpfOpenError:
        from hxdp.frontend.elf import load_program

        with KernelProgram.from_program(load_program(path, section, prog, sizes)):
            return


def _referenced_maps(path: str, section: str, prog: str) -> set[str] | None:
    """Names of the maps the program references, by our ELF loader; None when it cannot read the object (libbpf
    then reports a referenced map left unsized)."""
    from hxdp.frontend.elf import load_program

    try:
        return {m.name for m in load_program(path, section, prog).maps}
    except HxdpError:
        return None


def _resident_programs(path: str, section: str, prog: str) -> set[str]:
    """Names of the object's other XDP programs our loader places beside this one (it makes tail calls)."""
    from hxdp.frontend.elf import load_program

    try:
        return {p.name for p in load_program(path, section, prog).resident}
    except HxdpError:
        return set()


class KernelProgram:
    """One XDP program of an object, loaded in the kernel; a context manager that closes every fd it created."""

    def __init__(self, obj_path: str | os.PathLike[str], section: str | None = None, prog: str | None = None,
                 sizes: dict[str, int] | None = None, inner: dict[str, dict[bytes, str]] | None = None):
        self.lib = require()
        self.path = str(obj_path)
        self.obj: int | None = None
        self.maps: dict[str, KernelMap] = {}
        self.sizes = dict(sizes or {})  # max_entries set at load time, as a libbpf loader does
        self.inner = dict(inner or {})  # the inner maps the loader creates: {map of maps: {key: inner map name}}
        self.hxdp_ids: dict[str, int] = {}  # map name -> the NIC's map id (what a map of maps' slot holds there)
        self.unused: set[str] = set()  # maps left uncreated: unsized and never referenced by the program
        self.configs: list[dict] = []
        self._select = (section, prog)
        self._program: Program | None = None
        self._fds: list[int] = []
        self._xsks: dict[tuple[str, bytes], socket.socket] = {}  # xskmap entries' AF_XDP sockets
        self._open = False
        self.events: EventReaders | None = None
        _check_object_file(self.path)
        take_messages()
        obj = self.lib.bpf_object__open_file(self.path.encode(), None)
        if not obj:
            msgs = take_messages()
            detail = f": {msgs[-1].removeprefix('libbpf: ')}" if msgs else f" ({err_text(0)})"
            raise LibbpfOpenError(f"{self.path}: libbpf cannot open the object{detail}")
        self.obj = obj
        self._open = True
        try:
            self._load(section, prog)
            self._open_events()
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_program(cls, program: Program) -> KernelProgram:
        """Load a Program of our ELF loader (hxdp.frontend.elf) instead of going through libbpf: its maps are
        created with bpf(BPF_MAP_CREATE), global data maps get their initial bytes (.rodata frozen), and every lddw
        map reference is patched with the map's fd. This runs objects libbpf 1.x refuses (legacy `maps` sections)
        and cross-checks the loader's relocations against libbpf's."""
        self = cls.__new__(cls)
        self.lib = require()
        self.path = program.source or f"<{program.name}>"
        self.obj = None
        self.maps = {}
        self.sizes = {}
        self.inner = {}
        self.hxdp_ids = {}
        self.unused = {m.name for m in program.unused_maps}
        self.configs = []
        self._select = (program.section, program.name)
        self._program = program
        self._fds = []
        self._xsks = {}
        self._open = True
        self.events = None
        self.section, self.name = program.section, program.name
        self.prog_fds: dict[str, int] = {}
        self.ncpus = self.lib.libbpf_num_possible_cpus()
        try:
            self._load_program(program)
            self._open_events()
        except BaseException:
            self.close()
            raise
        return self

    def _load_program(self, program: Program) -> None:
        lib = self.lib
        fds: list[int] = []
        for m in program.maps:
            if m.inner is not None or m.type not in CREATABLE_MAP_TYPES:
                raise KernelError(f"{self.path}: map {m.name} of type {m.type} cannot be created without libbpf")
            if m.lock_offset is not None:
                raise KernelError(f"{self.path}: map {m.name}: its value holds a struct bpf_spin_lock, which the "
                                  "kernel accepts only with the object's BTF: load it through libbpf")
            flags = m.flags
            if m.section.startswith(".rodata"):
                flags |= BPF_F_RDONLY_PROG
            opts = MapCreateOpts(sz=ctypes.sizeof(MapCreateOpts), map_flags=flags)
            kname = "".join(c if c.isalnum() or c in "._" else "_" for c in m.name)[:15].encode()
            entries = m.max_entries or (self.ncpus if m.type in AUTOSIZED_MAP_TYPES else 0)
            fd = lib.bpf_map_create(m.type, kname, m.key_size, m.value_size, entries, ctypes.byref(opts))
            if fd < 0:
                raise KernelError(f"{self.path}: kernel refused map {m.name} ({err_text(fd)})")
            self._fds.append(fd)
            fds.append(fd)
            km = KernelMap(m.name, fd, m.type, m.key_size, m.value_size, entries)
            self.maps[m.name] = km
            if m.initial is not None:
                self.update(m.name, bytes(4), m.initial.ljust(m.value_size, b"\0")[: m.value_size])
                if m.section.startswith(".rodata"):
                    ret = lib.bpf_map_freeze(fd)
                    if ret < 0:
                        raise KernelError(f"{self.path}: cannot freeze {m.name} ({err_text(ret)})")
        for p in (program, *program.resident):  # the resident programs: for the PROG_ARRAY entries
            insns = list(p.insns)
            for i, ins in enumerate(insns):
                if ins.opcode == 0x18 and ins.src in (T.PSEUDO_MAP_FD, T.PSEUDO_MAP_VALUE):
                    if not 0 <= ins.imm < len(fds):
                        raise KernelError(f"{self.path}: {p.name} slot {i} refers to map {ins.imm}, the program "
                                          f"has {len(fds)}")
                    insns[i] = ins.with_(imm=fds[ins.imm])
            fd = prog_load(lib, insns, p.name, (program.license or "GPL").encode())
            self._fds.append(fd)
            self.prog_fds[p.name] = fd
        self.prog_fd = self.prog_fds[program.name]

    # --- loading ----------------------------------------------------------------------------------------------
    def _programs(self) -> list[tuple[int, str, str]]:
        out = []
        p = self.lib.bpf_object__next_program(self.obj, None)
        while p:
            out.append((p, self.lib.bpf_program__section_name(p).decode(), self.lib.bpf_program__name(p).decode()))
            p = self.lib.bpf_object__next_program(self.obj, p)
        return out

    def _load(self, section: str | None, prog: str | None) -> None:
        lib = self.lib
        progs = self._programs()
        chosen = [p for p in progs if (section is None or p[1] == section) and (prog is None or p[2] == prog)]
        if section is None and prog is None:  # the NIC's program, as the ELF loader picks it (not a map entry's)
            chosen = [p for p in chosen if attach_kind(p[1]) is None] or chosen
        if not chosen:
            if not progs:
                raise KernelError(f"{self.path}: no program in the object (an XDP program is a function in a "
                                  "SEC(\"xdp\") section)")
            have = ", ".join(f"{s}/{n}" for _, s, n in progs)
            want = " ".join(w for w in (f"--section {section}" if section else "", f"--prog {prog}" if prog else "")
                            if w)
            raise KernelError(f"{self.path}: no program matches {want} (have: {have})")
        if len(chosen) > 1:
            have = ", ".join(f"{s}/{n}" for _, s, n in chosen)
            raise KernelError(f"{self.path}: several programs match, choose with --section/--prog: {have}")
        handle, self.section, self.name = chosen[0]
        # a program with tail calls: the object's other XDP programs are loaded too, for its PROG_ARRAY entries
        resident = _resident_programs(self.path, self.section, self.name)
        loaded = [p for p in progs if p[0] == handle or p[2] in resident]
        for p, _, _ in progs:
            lib.bpf_program__set_autoload(p, any(p == q[0] for q in loaded))
        for p, _, _ in loaded:
            lib.bpf_program__set_type(p, BPF_PROG_TYPE_XDP)
        self._log = ctypes.create_string_buffer(LOG_SIZE)
        lib.bpf_program__set_log_buf(handle, self._log, LOG_SIZE)
        self._size_maps()
        take_messages()
        ret = lib.bpf_object__load(self.obj)
        msgs = take_messages()
        if ret < 0:
            log = self._log.value.decode(errors="replace")
            fd, log_path = tempfile.mkstemp(prefix=f"hxdp-verifier-{self.name}-", suffix=".log")
            with os.fdopen(fd, "w") as fh:
                fh.write("\n".join(msgs) + "\n-- verifier log --\n" + log)
            why = verifier_summary(log) or (msgs[-1] if msgs else err_text(ret))
            raise KernelError(f"{self.path}: kernel refused program {self.name} ({err_text(ret)}): {why} "
                              f"[log: {log_path}]")
        self.prog_fd = lib.bpf_program__fd(handle)
        self.prog_fds = {name: lib.bpf_program__fd(p) for p, _, name in loaded}
        m = lib.bpf_object__next_map(self.obj, None)
        while m:
            if lib.bpf_map__fd(m) < 0:  # left uncreated (self.unused)
                m = lib.bpf_object__next_map(self.obj, m)
                continue
            km = KernelMap(
                name=lib.bpf_map__name(m).decode(),
                fd=lib.bpf_map__fd(m),
                type=lib.bpf_map__type(m),
                key_size=lib.bpf_map__key_size(m),
                value_size=lib.bpf_map__value_size(m),
                max_entries=lib.bpf_map__max_entries(m),
            )
            self.maps[km.name] = km
            m = lib.bpf_object__next_map(self.obj, m)
        self.ncpus = lib.libbpf_num_possible_cpus()
        self._create_inner_maps()

    def _create_inner_maps(self) -> None:
        """The inner maps a loader creates after load (Katran's per-CPU LRUs): each with bpf_map_create from its
        outer map's template (our ELF reader's, as libbpf reads `__array(values, ...)`), its fd set in the outer
        map's slot. The NIC's map ids of every map, for a map of maps' dump (hxdp.frontend.elf.load_program)."""
        from hxdp.frontend.elf import load_program

        if not self.inner and not any(m.type in MAP_IN_MAP_TYPES for m in self.maps.values()):
            return  # (our reading of the object only where a map of maps needs it)
        program = load_program(self.path, self.section, self.name, self.sizes, self.inner)
        self.hxdp_ids = {m.name: i for i, m in enumerate(program.maps)}
        by_name = {m.name: m for m in program.maps}
        for outer, slots in self.inner.items():
            for key, name in slots.items():
                if name not in self.maps:
                    t = by_name[name]
                    opts = MapCreateOpts(sz=ctypes.sizeof(MapCreateOpts), map_flags=t.flags)
                    fd = self.lib.bpf_map_create(t.type, name.encode(), t.key_size, t.value_size, t.max_entries,
                                                 ctypes.byref(opts))
                    if fd < 0:
                        raise KernelError(f"{self.path}: kernel refused inner map {name} of {outer} ({err_text(fd)})")
                    self._fds.append(fd)
                    self.maps[name] = KernelMap(name, fd, t.type, t.key_size, t.value_size, t.max_entries)
                try:
                    self.update(outer, key, self.maps[name].fd.to_bytes(4, "little"))
                except KernelError as exc:
                    raise KernelError(f"{self.path}: inner map {name} in {outer} at {key.hex()}: {exc}") from None

    def _kernel_map_ids(self) -> dict[int, str]:
        """The kernel's id of every map (bpf_obj_get_info_by_fd: struct bpf_map_info's second u32) -> its name."""
        out: dict[int, str] = {}
        for km in self.maps.values():
            info = ctypes.create_string_buffer(256)
            size = ctypes.c_uint32(256)
            if self.lib.bpf_obj_get_info_by_fd(km.fd, info, ctypes.byref(size)) == 0:
                out[int.from_bytes(info.raw[4:8], "little")] = km.name
        return out

    def _size_maps(self) -> None:
        """Never pin; max_entries as given; maps left unsized (0, for the loader to set) and never referenced by
        the program are not created, as a loader that does not use them would not."""
        lib = self.lib
        referenced = _referenced_maps(self.path, self.section, self.name)
        known: list[str] = []
        m = lib.bpf_object__next_map(self.obj, None)
        while m:
            name = lib.bpf_map__name(m).decode()
            known.append(name)
            lib.bpf_map__set_pin_path(m, None)  # never pin, whatever the object asks for
            if name in self.sizes:
                ret = lib.bpf_map__set_max_entries(m, self.sizes[name])
                if ret < 0:
                    raise KernelError(f"{self.path}: cannot size map {name} ({err_text(ret)})")
            if lib.bpf_map__max_entries(m) == 0 and lib.bpf_map__type(m) not in AUTOSIZED_MAP_TYPES:
                if referenced is not None and name in referenced:
                    raise KernelError(f"{self.path}: map {name}: max_entries is 0 in the object, its loader sizes "
                                      f"it at load time: give --map {name}.max_entries=N")
                lib.bpf_map__set_autocreate(m, False)
                self.unused.add(name)
            m = lib.bpf_object__next_map(self.obj, m)
        created = {name for slots in self.inner.values() for name in slots.values()}  # sized at bpf_map_create
        missing = sorted(set(self.sizes) - set(known) - created)
        if missing:
            raise KernelError(f"{self.path}: --map {missing[0]}.max_entries: no map named {missing[0]!r} "
                              f"(maps: {', '.join(known) or 'none'})")

    def _open_events(self) -> None:
        """Readers of the program's PERF_EVENT_ARRAY and RINGBUF maps (libbpf's perf_buffer and ring_buffer)."""
        event_maps = [(m.name, m.fd, m.type) for m in self.maps.values() if m.type in EVENT_MAP_TYPES]
        if event_maps:
            self.events = EventReaders(self.lib, event_maps, f"{self.path}: {self.name}")

    def close(self) -> None:
        if getattr(self, "events", None) is not None:
            self.events.close()
            self.events = None
        if self.obj is not None:
            self.lib.bpf_object__close(self.obj)
            self.obj = None
        for fd in getattr(self, "_fds", []):
            os.close(fd)
        self._fds = []
        for sock in getattr(self, "_xsks", {}).values():
            sock.close()
        self._xsks = {}
        self.maps = {}
        self._open = False

    def __enter__(self) -> KernelProgram:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # --- maps -------------------------------------------------------------------------------------------------
    def map(self, name: str) -> KernelMap:
        try:
            return self.maps[name]
        except KeyError:
            raise KernelError(f"{self.path}: no map named {name!r} (have: {', '.join(self.maps) or 'none'})") from None

    def _vsize(self, m: KernelMap) -> int:
        return ((m.value_size + 7) // 8) * 8 * self.ncpus if m.percpu else m.value_size

    def update(self, name: str, key: bytes, value: bytes, flags: int = BPF_ANY) -> None:
        """Set one entry; a per-CPU map gets the value on every CPU."""
        m = self.map(name)
        if len(key) != m.key_size or len(value) != m.value_size:
            raise KernelError(
                f"map {name}: entry of {len(key)}/{len(value)} bytes, map wants key {m.key_size} value {m.value_size}"
            )
        if m.percpu:
            slot = (m.value_size + 7) // 8 * 8
            value = (value + bytes(slot - len(value))) * self.ncpus
        if m.type == XSKMAP:
            value = self._xsk_socket(name, key).to_bytes(4, "little")
        kbuf = ctypes.create_string_buffer(key, len(key))
        vbuf = ctypes.create_string_buffer(value, len(value))
        ret = self.lib.bpf_map_update_elem(m.fd, kbuf, vbuf, flags)
        if ret < 0:
            raise KernelError(f"map {name}: update of key {key.hex()} refused ({err_text(ret)})")

    def _xsk_socket(self, name: str, key: bytes) -> int:
        """The fd of an AF_XDP socket for xskmap entry `key` (opened once, closed with the program)."""
        sockets = self._xsks
        if (name, key) not in sockets:
            try:
                sockets[(name, key)] = socket.socket(AF_XDP, socket.SOCK_RAW, 0)
            except OSError as exc:
                raise KernelError(f"map {name}: cannot open an AF_XDP socket for entry {key.hex()} "
                                  f"({exc.strerror})") from None
        return sockets[(name, key)].fileno()

    def lookup(self, name: str, key: bytes, cpu: int = 0) -> bytes | None:
        m = self.map(name)
        kbuf = ctypes.create_string_buffer(key, max(len(key), 1))
        vbuf = ctypes.create_string_buffer(self._vsize(m))
        ret = self.lib.bpf_map_lookup_elem(m.fd, kbuf, vbuf)
        if ret < 0:
            if -ret == errno_mod.ENOENT:
                return None
            raise KernelError(f"map {name}: lookup of key {key.hex()} failed ({err_text(ret)})")
        raw = vbuf.raw
        if m.percpu:
            slot = (m.value_size + 7) // 8 * 8
            return raw[cpu * slot : cpu * slot + m.value_size]
        return raw[: m.value_size]

    def delete(self, name: str, key: bytes) -> None:
        m = self.map(name)
        ret = self.lib.bpf_map_delete_elem(m.fd, ctypes.create_string_buffer(key, len(key)))
        if ret < 0 and -ret != errno_mod.ENOENT:
            raise KernelError(f"map {name}: delete of key {key.hex()} failed ({err_text(ret)})")

    def keys(self, name: str) -> list[bytes]:
        m = self.map(name)
        out: list[bytes] = []
        cur = None
        nxt = ctypes.create_string_buffer(m.key_size)
        while len(out) <= m.max_entries:
            ret = self.lib.bpf_map_get_next_key(m.fd, cur, nxt)
            if ret < 0:
                if -ret == errno_mod.ENOENT:
                    break
                raise KernelError(f"map {name}: key iteration failed ({err_text(ret)})")
            out.append(nxt.raw[: m.key_size])
            cur = ctypes.create_string_buffer(out[-1], m.key_size)
        return out

    def apply_config(self, cfg: dict | str | os.PathLike[str], source: str | None = None) -> None:
        """Load an initial map configuration ({"maps": {name: [{"key": hex, "value": hex}, ...]}}, or its path).

        Errors are KernelErrors naming the source (the file when known), the map and the entry."""
        from hxdp.models.mapconfig import MapError, check_map_config, load_map_config

        try:
            if not isinstance(cfg, dict):
                source = source or str(cfg)
                cfg = load_map_config(cfg)
            source = source or "map config"
            checked = check_map_config(cfg, source)
        except MapError as exc:
            raise KernelError(str(exc)) from None
        for name, pairs in checked.items():
            if name in self.unused:
                continue  # not created: the program never references it
            if name not in self.maps:
                raise KernelError(f"{source}: no map named {name!r} in {self.path} "
                                  f"(maps: {', '.join(self.maps) or 'none'})")
            for i, (key, value) in enumerate(pairs):
                where = f"{source}: maps.{name}[{i}]"
                if self.maps[name].type in MAP_IN_MAP_TYPES:
                    raise KernelError(f"{where}: map {name} is a map of maps: its slots are set with "
                                      "\"inner_maps\" (inner maps the loader creates)")
                if isinstance(value, str):  # a PROG_ARRAY entry naming a program: its fd
                    if value not in self.prog_fds:
                        raise KernelError(f"{where}.prog: no program {value!r} loaded with {self.name} (programs: "
                                          f"{', '.join(self.prog_fds)})")
                    value = self.prog_fds[value].to_bytes(4, "little")
                try:
                    self.update(name, key, value)
                except KernelError as exc:
                    raise KernelError(f"{where}: {exc}") from None
        self.configs.append(cfg)

    def dump(self, cpu: int | None = None) -> dict[str, dict[bytes, bytes]]:
        """Every map's contents: {map name: {key: value}}; per-CPU maps give CPU `cpu`'s slot (default: the slot of
        the CPU runs use by default)."""
        cpu = self._run_cpu() if cpu is None else cpu
        out: dict[str, dict[bytes, bytes]] = {}
        kernel_ids = self._kernel_map_ids() if any(m.type in MAP_IN_MAP_TYPES for m in self.maps.values()) else {}
        for name in self.maps:
            if self.maps[name].type == XSKMAP:
                continue  # user space cannot read xskmap entries (EOPNOTSUPP)
            if self.maps[name].type in EVENT_MAP_TYPES:
                continue  # their records go to the host as events (RunResult.events), not entries
            if self.maps[name].type == _ids["prog_array"]:
                continue  # program ids: they mean nothing outside this kernel (the NIC holds entry rows)
            if self.maps[name].type in _BLOB_ARRAY_TYPES:
                out[name] = self.array_dump(name, cpu)
                continue
            entries: dict[bytes, bytes] = {}
            for k in self.keys(name):
                v = self.lookup(name, k, cpu)
                if v is not None and self.maps[name].type in MAP_IN_MAP_TYPES:
                    v = self._hxdp_inner_id(name, v, kernel_ids)
                if v is not None:
                    entries[k] = v
            out[name] = entries
        return out

    def array_dump(self, name: str, cpu: int = 0) -> ArrayDump:
        """An array map's values in one BPF_MAP_LOOKUP_BATCH (a ring of millions of slots is read in one call);
        a per-CPU array gives CPU `cpu`'s slot of every index."""
        m = self.map(name)
        stride = self._vsize(m)
        count = ctypes.c_uint32(m.max_entries)
        keys = ctypes.create_string_buffer(4 * m.max_entries)
        values = ctypes.create_string_buffer(stride * m.max_entries)
        out_batch = ctypes.create_string_buffer(4)
        ret = self.lib.bpf_map_lookup_batch(m.fd, None, out_batch, keys, values, ctypes.byref(count), None)
        if ret < 0 and -ret != errno_mod.ENOENT or count.value != m.max_entries:
            raise KernelError(f"map {name}: batch lookup of {m.max_entries} entries failed "
                              f"({err_text(ret) if ret < 0 else f'{count.value} returned'})")
        raw = values.raw
        if not m.percpu:
            return ArrayDump(raw, m.value_size)
        slot = (m.value_size + 7) // 8 * 8
        lo = cpu * slot
        return ArrayDump(b"".join(raw[i + lo : i + lo + m.value_size] for i in range(0, len(raw), stride)),
                         m.value_size)

    def _hxdp_inner_id(self, outer: str, value: bytes, kernel_ids: dict[int, str]) -> bytes:
        """A map of maps' value as the NIC holds it: the inner map's id there (the kernel's is its own map id)."""
        name = kernel_ids.get(int.from_bytes(value[:4], "little"))
        if name is None or name not in self.hxdp_ids:
            raise KernelError(f"map {outer}: a slot holds kernel map id {int.from_bytes(value[:4], 'little')}, not a "
                              "map of this program")
        return self.hxdp_ids[name].to_bytes(4, "little")

    @staticmethod
    def _run_cpu() -> int:
        allowed = os.sched_getaffinity(0)
        return 0 if 0 in allowed else min(allowed)

    # --- running ----------------------------------------------------------------------------------------------
    def _test_run(
        self, prog_fd: int, packet: bytes, ingress_ifindex: int, rx_queue_index: int, repeat: int, out: bool,
        meta: bytes = b"", cpu: int | None = None,
    ) -> tuple[TestRunOpts, bytes, bytes, float]:
        label = f"{self.path}: {self.name}"
        return prog_test_run(self.lib, label, prog_fd, packet, ingress_ifindex, rx_queue_index, repeat, out, meta, cpu)

    def run(self, packet: bytes, ingress_ifindex: int = 1, rx_queue_index: int = 0, meta: bytes = b"",
            cpu: int | None = None) -> RunResult:
        """Run one packet (repeat 1) on CPU `cpu` (default: CPU 0 when allowed): action = low 32 bits of r0, packet =
        data..data_end afterwards; `meta`: the metadata in front of it (data_meta..data), as a previous program of a
        chain leaves it."""
        if not self._open:
            raise KernelError(f"{self.path}: program is closed")
        opts, meta, outb, _ = self._test_run(self.prog_fd, packet, ingress_ifindex, rx_queue_index, 1, True, meta, cpu)
        events = self.events.take() if self.events is not None else []
        return RunResult(action=opts.retval, packet=outb, redirect=None, fault=None, cycles=0, trace=[], meta=meta,
                         events=events)

    def timing(
        self, packet: bytes, repeat: int = 5_000_000, ingress_ifindex: int = 1, rx_queue_index: int = 0
    ) -> Timing:
        """Time `repeat` runs of the original packet on a fresh copy of the program and its configured maps."""
        if repeat < 1:
            raise KernelError(f"repeat must be >= 1, got {repeat}")
        section, prog = self._select
        fresh = KernelProgram.from_program(self._program) if self._program else KernelProgram(self.path, section, prog)
        with fresh as copy:
            for cfg in self.configs:
                copy.apply_config(cfg)
            # A test run with repeat > 1 swaps the program into the XDP dispatcher and back, a fixed cost of
            # 15-30 ms here: measure it with repeat=2 runs and subtract it from the long run's wall clock.
            fixed = sorted(
                copy._test_run(copy.prog_fd, packet, ingress_ifindex, rx_queue_index, 2, False)[3] * 2 for _ in range(3)
            )[1]
            opts, _, _, wall = copy._test_run(copy.prog_fd, packet, ingress_ifindex, rx_queue_index, repeat, False)
        wall_ns = max(0.0, (wall * repeat - fixed) / repeat) if repeat > 2 else wall
        return Timing(repeat=repeat, kernel_ns=opts.duration, wall_ns=wall_ns, action=opts.retval)

    def time(self, packet: bytes, repeat: int = 5_000_000) -> float:
        """Wall-clock ns per packet over `repeat` runs (see timing() for the kernel's own average too)."""
        return self.timing(packet, repeat).wall_ns


# --- raw mode -----------------------------------------------------------------------------------------------------
def _raw_prologue(n: int) -> list[Insn]:
    body = [
        Insn(0x61, dst=2, src=1, off=0),  # r2 = data
        Insn(0x61, dst=3, src=1, off=4),  # r3 = data_end
        Insn(0xBF, dst=4, src=2),  # r4 = r2
        Insn(0x07, dst=4, imm=n),  # r4 += n
        Insn(0xBD, dst=4, src=3, off=2),  # if r4 <= r3 goto +2
        Insn(0xB7, dst=0, imm=0),
        Insn(0x95),
    ]
    body += [Insn(0x7A, dst=10, off=-8 * (i + 1), imm=0) for i in range(64)]  # *(u64 *)(r10 - 8k) = 0
    body += [Insn(0xBF, dst=1, src=2), Insn(0xB7, dst=2, imm=n)]
    body += [Insn(0xB7, dst=r, imm=0) for r in (0, 3, 4, 5, 6, 7, 8, 9)]
    return body


def run_raw(insns: list[Insn], mem: bytes) -> tuple[int, bytes]:
    """Run a raw instruction list on `mem` (see the module docstring): returns (64-bit r0, mem afterwards)."""
    lib = require()
    for i, ins in enumerate(insns):
        if ins.opcode == 0x85 and ins.src == T.CALL_LOCAL:
            raise KernelError(f"raw program: bpf-to-bpf call at slot {i} is not supported in raw mode")
        if ins.opcode == 0x18 and ins.src != 0:
            raise KernelError(f"raw program: map reference at slot {i} is not supported in raw mode")
    n = len(mem)
    if n > 3000:
        raise KernelError(f"raw program: mem of {n} bytes is larger than a test-run frame (3000)")
    data = mem + bytes(max(0, ETH_HLEN - n))
    pro = _raw_prologue(n)
    lo = pro + list(insns)
    hi = pro + list(insns)
    epi = len(hi)
    for i in range(len(pro), len(hi)):
        if hi[i].opcode == 0x95:
            hi[i] = Insn(0x05, off=epi - i - 1)
    hi += [Insn(0x77, dst=0, imm=32), Insn(0x95)]
    results = []
    for prog in (lo, hi):
        fd = prog_load(lib, prog, base=len(pro))
        try:
            opts, _, outb, _ = prog_test_run(lib, "raw program", fd, data, 1, 0, 1, True)
            results.append((opts.retval, outb[:n]))
        finally:
            os.close(fd)
    (low, out), (high, _) = results
    return (high << 32) | low, out


def list_programs(obj_path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(section, name) of every program libbpf sees in the object (opens it, loads nothing)."""
    lib = libbpf()
    obj = lib.bpf_object__open_file(str(obj_path).encode(), None)
    if not obj:
        raise KernelError(f"{obj_path}: libbpf cannot open the object ({err_text(0)})")
    try:
        out = []
        p = lib.bpf_object__next_program(obj, None)
        while p:
            out.append((lib.bpf_program__section_name(p).decode(), lib.bpf_program__name(p).decode()))
            p = lib.bpf_object__next_program(obj, p)
        return out
    finally:
        lib.bpf_object__close(obj)
