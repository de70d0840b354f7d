"""The hardware FIB of bpf_fib_lookup: its table and image (table), lookup (lookup), netlink sync (netlink, netns)."""

from __future__ import annotations

from collections.abc import Iterable

from hxdp import params
from hxdp.isa import table as T
from hxdp.isa.insn import Insn

FIB_LOOKUP = params.HELPER_IDS["fib_lookup"]


def uses_fib(insns: Iterable[Insn]) -> bool:
    """Whether a program calls bpf_fib_lookup (its map layout then places the FIB region)."""
    return any(i.opcode == 0x85 and i.src == T.CALL_HELPER and i.imm == FIB_LOOKUP for i in insns)
