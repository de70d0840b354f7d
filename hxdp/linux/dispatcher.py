"""The dispatcher's chain in the kernel oracle: each program in its own object, the packet and its metadata passed on.

libxdp's xdp-dispatcher runs the next program of an interface when the previous one returns an action of its
chain-call set; here each program runs with BPF_PROG_TEST_RUN, and the next one gets the frame and the metadata
(data_meta..data) the previous one left, as the NIC's chain (hxdp.frontend.chain) does.
"""

from __future__ import annotations

from pathlib import Path

from hxdp.linux.kernel import KernelError, KernelProgram
from hxdp.result import RunResult


class KernelChain:
    """Programs (object, program name or None) loaded in the kernel, run in order; a context manager."""

    def __init__(self, links: list[tuple[str | Path, str | None]], actions: list[frozenset[int]],
                 sizes: dict[str, int] | None = None) -> None:
        self.actions = actions
        self.programs: list[KernelProgram] = []
        try:
            for obj, prog in links:
                kp = KernelProgram(obj, prog=prog, sizes={n: v for n, v in (sizes or {}).items()
                                                          if _has_map(obj, n)})
                self.programs.append(kp)
        except BaseException:
            self.close()
            raise

    def apply_config(self, cfg: dict, source: str | None = None) -> None:
        """Each map's entries go to the program that has it (the chain's maps have distinct names)."""
        rest = dict(cfg.get("maps") or {})
        for kp in self.programs:
            mine = {n: e for n, e in rest.items() if n in kp.maps or n in kp.unused}
            kp.apply_config({"maps": mine}, source=source)
            rest = {n: e for n, e in rest.items() if n not in mine}
        if rest:
            raise KernelError(f"{source or 'map config'}: no map named {sorted(rest)[0]!r} in the chain")

    def run(self, packet: bytes, ingress_ifindex: int = 1, rx_queue_index: int = 0) -> RunResult:
        meta = b""
        res: RunResult | None = None
        for i, kp in enumerate(self.programs):
            res = kp.run(packet, ingress_ifindex, rx_queue_index, meta=meta)
            if i + 1 == len(self.programs) or (res.action & 0xFFFFFFFF) not in self.actions[i]:
                return res
            packet, meta = res.packet, res.meta
        assert res is not None
        return res

    def dump(self) -> dict[str, dict[bytes, bytes]]:
        out: dict[str, dict[bytes, bytes]] = {}
        for kp in self.programs:
            out.update(kp.dump())
        return out

    @property
    def maps(self) -> dict:
        return {n: m for kp in self.programs for n, m in kp.maps.items()}

    def close(self) -> None:
        for kp in self.programs:
            kp.close()
        self.programs = []

    def __enter__(self) -> KernelChain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _has_map(obj: str | Path, name: str) -> bool:
    from hxdp.frontend.elf import load_maps

    return any(m.name == name for m in load_maps(obj))
