"""Enter a Linux network namespace in the calling thread (setns), for netlink reads and the kernel oracle."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
from collections.abc import Iterator

from hxdp.errors import HxdpError

CLONE_NEWNET = 0x40000000
NETNS_RUN_DIR = "/run/netns"  # where `ip netns add NAME` binds the namespace


def netns_path(name: str) -> str:
    """A namespace name of `ip netns`, or a path such as /proc/PID/ns/net."""
    return name if "/" in name else os.path.join(NETNS_RUN_DIR, name)


def _setns(fd: int, what: str) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise HxdpError(f"setns into {what}: {os.strerror(err)} (entering a network namespace needs CAP_SYS_ADMIN)")


@contextlib.contextmanager
def netns(name: str | None) -> Iterator[None]:
    """Run the block in network namespace `name` (None: stay where we are); the thread returns to its own after."""
    if name is None:
        yield
        return
    path = netns_path(name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise HxdpError(f"network namespace {name}: cannot open {path}: {exc.strerror}") from None
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        _setns(fd, f"network namespace {name}")
        try:
            yield
        finally:
            _setns(own, "the thread's own network namespace")
    finally:
        os.close(fd)
        os.close(own)
