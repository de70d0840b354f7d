"""The kernel's event outputs for the oracle: libbpf's perf_buffer and ring_buffer over a program's maps.

A PERF_EVENT_ARRAY gets libbpf's perf buffer (perf_buffer__new: a software BPF-output perf event per CPU, its
mmap ring, the event's fd in the CPU's slot of the map); a RINGBUF gets libbpf's ring buffer (ring_buffer__new).
`take()` consumes both after a test run and returns the records in the order of each reader (perf records carry
the CPU they were written on; the kernel pads their samples to whole u64s, see hxdp.events.Event.exact).
"""

from __future__ import annotations

import ctypes

from hxdp import params
from hxdp.events import Event
from hxdp.linux.libbpf import KernelError, err_text

PERF_PAGES = 64  # pages of each CPU's perf ring (a power of two): far more than one test run writes
_PERF_SAMPLE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32)
_PERF_LOST = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64)
_RING_SAMPLE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
EVENT_MAP_TYPES = frozenset(params.LINUX_MAP_TYPE_IDS[n] for n in ("perf_event_array", "ringbuf"))

_declared = False


def _declare(lib: ctypes.CDLL) -> None:
    global _declared
    if _declared:
        return
    vp, i, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    for name, res, args in (
        ("perf_buffer__new", vp, [i, sz, _PERF_SAMPLE, _PERF_LOST, vp, vp]),
        ("perf_buffer__consume", i, [vp]),
        ("perf_buffer__free", None, [vp]),
        ("ring_buffer__new", vp, [i, _RING_SAMPLE, vp, vp]),
        ("ring_buffer__consume", i, [vp]),
        ("ring_buffer__free", None, [vp]),
    ):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    _declared = True


class EventReaders:
    """The readers of one loaded program's event maps; close() frees them (the maps stay the program's)."""

    def __init__(self, lib: ctypes.CDLL, maps: list[tuple[str, int, int]], label: str) -> None:
        """maps: (name, fd, Linux map type) of every map of the program."""
        _declare(lib)
        self.lib = lib
        self.pending: list[Event] = []
        self.lost = 0
        self._perf: list[int] = []
        self._ring: list[int] = []
        self._callbacks: list[object] = []  # the ctypes callbacks must outlive their readers
        try:
            for name, fd, mtype in maps:
                if mtype == params.LINUX_MAP_TYPE_IDS["perf_event_array"]:
                    self._open_perf(name, fd, label)
                elif mtype == params.LINUX_MAP_TYPE_IDS["ringbuf"]:
                    self._open_ring(name, fd, label)
        except BaseException:
            self.close()
            raise

    def _open_perf(self, name: str, fd: int, label: str) -> None:
        def sample(_ctx: int, cpu: int, data: int, size: int) -> None:
            self.pending.append(Event("perf", name, cpu, ctypes.string_at(data, size), exact=False))

        def lost(_ctx: int, _cpu: int, count: int) -> None:
            self.lost += count

        cbs = (_PERF_SAMPLE(sample), _PERF_LOST(lost))
        self._callbacks += cbs
        pb = self.lib.perf_buffer__new(fd, PERF_PAGES, cbs[0], cbs[1], None, None)
        if not pb:
            raise KernelError(f"{label}: cannot open the perf buffer of map {name} ({err_text(0)})")
        self._perf.append(pb)

    def _open_ring(self, name: str, fd: int, label: str) -> None:
        def sample(_ctx: int, data: int, size: int) -> int:
            self.pending.append(Event("ringbuf", name, 0, ctypes.string_at(data, size)))
            return 0

        cb = _RING_SAMPLE(sample)
        self._callbacks.append(cb)
        rb = self.lib.ring_buffer__new(fd, cb, None, None)
        if not rb:
            raise KernelError(f"{label}: cannot open the ring buffer of map {name} ({err_text(0)})")
        self._ring.append(rb)

    def take(self) -> list[Event]:
        """Every record written since the last take (perf buffers first, then ring buffers, each in order)."""
        for pb in self._perf:
            ret = self.lib.perf_buffer__consume(pb)
            if ret < 0:
                raise KernelError(f"perf buffer: consume failed ({err_text(ret)})")
        for rb in self._ring:
            ret = self.lib.ring_buffer__consume(rb)
            if ret < 0:
                raise KernelError(f"ring buffer: consume failed ({err_text(ret)})")
        out, self.pending = self.pending, []
        return out

    def close(self) -> None:
        for pb in self._perf:
            self.lib.perf_buffer__free(pb)
        for rb in self._ring:
            self.lib.ring_buffer__free(rb)
        self._perf, self._ring = [], []
