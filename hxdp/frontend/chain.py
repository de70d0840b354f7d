"""The dispatcher of multi-program loaders (libxdp's xdp-dispatcher): programs run in order through tail calls.

libxdp chains several XDP programs on one interface: the dispatcher runs the first, and the next one when the
previous returns an action of its chain-call set (XDP_PASS by default). `chain_programs` builds that as one
Program for one ROM: every program of the chain is resident (docs/compiler.md), and each exit of program i (and of
the programs it tail-calls) goes through a trampoline that tail-calls program i + 1 through a PROG_ARRAY of the
loader's own, `CHAIN_MAP`, when the action is in program i's set, and exits otherwise. A tail call starts the next
program as a packet start does, with the packet and its metadata as they are: what the dispatcher passes on.
"""

from __future__ import annotations

from dataclasses import replace

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.frontend.program import MapDef, Program
from hxdp.isa import table as T
from hxdp.isa.insn import Insn

CHAIN_MAP = "hxdp_chain"  # the loader's PROG_ARRAY: entry i is program i (entry 0 is never called)
DEFAULT_ACTIONS = frozenset({params.XDP_PASS})  # libxdp's default chain-call actions
_ACTION_IDS = {name.lower(): num for num, name in params.ACTION_NAMES.items()}


class ChainError(HxdpError):
    """A chain of programs the dispatcher cannot build."""


def parse_actions(text: str) -> frozenset[int]:
    """`pass,drop` -> {XDP_PASS, XDP_DROP} (names as libxdp's chain_call_actions, case-insensitive)."""
    out = set()
    for word in text.split(","):
        name = word.strip().lower().removeprefix("xdp_")
        if name not in _ACTION_IDS:
            raise ChainError(f"--chain-actions {text}: unknown action {word.strip()!r} (actions: "
                             f"{', '.join(_ACTION_IDS)})")
        out.add(_ACTION_IDS[name])
    return frozenset(out)


def _trampoline(actions: frozenset[int], chain_map: int, nxt: int) -> list[Insn]:
    """r6 = r0; if w0 is in `actions` tail-call program `nxt`; r0 = r6; exit (r6 is dead at an exit)."""
    checks = sorted(actions)
    code = [Insn(0xBF, dst=6, src=0)]  # r6 = r0
    # if w0 == a goto call (JMP32 JEQ K): the call block starts after the checks and the exit
    for k, a in enumerate(checks):
        code.append(Insn(0x16, dst=0, off=len(checks) - k, imm=a))
    code.append(Insn(0x95))  # no chain: the action as it is
    code += [Insn(0x18, dst=2, src=T.PSEUDO_MAP_FD, imm=chain_map), Insn(0, imm=0),  # r2 = the chain's map
             Insn(0xB7, dst=3, imm=nxt), Insn(0x85, imm=params.HELPER_IDS["tail_call"]),
             Insn(0xBF, dst=0, src=6), Insn(0x95)]  # the chain's limit of tail calls: the action as it is
    return code


def _with_trampoline(p: Program, actions: frozenset[int], chain_map: int, nxt: int) -> Program:
    """The program with its entry function's exits jumping to a trampoline placed right after that function
    (bpf-to-bpf calls over it and the function table moved by its length)."""
    end = min((slot for slot in p.functions if slot > 0), default=len(p.insns))
    tramp = _trampoline(actions, chain_map, nxt)
    insns: list[Insn] = []
    for i, ins in enumerate(p.insns):
        if i < end and ins.opcode == 0x95:
            ins = Insn(0x05, off=end - i - 1)  # ja trampoline
        elif i < end and ins.opcode == 0x85 and ins.src == T.CALL_LOCAL and i + 1 + ins.imm >= end:
            ins = ins.with_(imm=ins.imm + len(tramp))
        insns.append(ins)
    functions = {(s + len(tramp) if s >= end else s): n for s, n in p.functions.items()}
    return replace(p, insns=insns[:end] + tramp + insns[end:], functions=functions)


def _renumbered(p: Program, base: int, maps: list[MapDef]) -> Program:
    insns = [ins.with_(imm=ins.imm + base) if ins.opcode == 0x18 and ins.src in (T.PSEUDO_MAP_FD, T.PSEUDO_MAP_VALUE)
             else ins for ins in p.insns]
    return replace(p, insns=insns, maps=maps, resident=[])


def chain_programs(programs: list[Program], actions: list[frozenset[int]]) -> Program:
    """One Program running `programs` in order as the dispatcher does: program i + 1 when program i returns an
    action of actions[i]. Its maps are every program's (names must differ: the chain has one map namespace) and
    CHAIN_MAP, whose entry i names program i (MapDef.prog_entries: set wherever the map memory is laid out)."""
    if len(programs) < 2:
        raise ChainError("a chain needs two programs or more")
    if len(actions) != len(programs):
        raise ChainError(f"{len(actions)} chain-call action sets for {len(programs)} programs")
    names: dict[str, str] = {}
    for p in programs:
        for q in (p, *p.resident):
            if q.name in names:
                raise ChainError(f"not supported: two programs named {q.name} in the chain ({names[q.name]} and "
                                 f"{q.source}), because the NIC's PROG_ARRAY entries name programs")
            names[q.name] = q.source
    maps: list[MapDef] = []
    owner: dict[str, str] = {}
    bases = []
    for p in programs:
        for m in p.maps:
            if m.name in owner:
                raise ChainError(f"not supported: map {m.name} in both {owner[m.name]} and {p.source}, because the "
                                 "chain's maps share one namespace on the NIC")
            owner[m.name] = p.source
        bases.append(len(maps))
        maps += p.maps
    if CHAIN_MAP in owner:
        raise ChainError(f"map {CHAIN_MAP} in {owner[CHAIN_MAP]}: the name of the chain's own PROG_ARRAY")
    chain_map = len(maps)
    maps.append(MapDef(CHAIN_MAP, params.LINUX_MAP_TYPE_IDS["prog_array"], 4, 4, len(programs),
                       prog_entries={i: p.name for i, p in enumerate(programs) if i > 0}))
    linked: list[Program] = []
    for i, (p, base) in enumerate(zip(programs, bases, strict=True)):
        for q in (p, *p.resident):
            q = _renumbered(q, base, maps)
            if i + 1 < len(programs):
                q = _with_trampoline(q, actions[i], chain_map, i + 1)
            linked.append(q)
    unused = [m for p in programs for m in p.unused_maps]
    return replace(linked[0], maps=maps, unused_maps=unused, resident=linked[1:])


def load_chain(links: list[tuple[str, str | None]], actions: list[frozenset[int]],
               sizes: dict[str, int] | None = None) -> Program:
    """Load each (object, program) of the chain (its maps sized as `sizes` names them) and chain them."""
    from hxdp.frontend.elf import load_maps, load_program

    sizes = sizes or {}
    programs = []
    for obj, prog in links:
        names = {m.name for m in load_maps(obj)}
        programs.append(load_program(obj, prog=prog, sizes={n: v for n, v in sizes.items() if n in names}))
    unknown = sorted(set(sizes) - {m.name for p in programs for m in (*p.maps, *p.unused_maps)})
    if unknown:
        raise ChainError(f"--map {unknown[0]}.max_entries: no map named {unknown[0]!r} in the chain")
    return chain_programs(programs, actions)


def parse_link(text: str) -> tuple[str, str | None]:
    """`OBJ` or `OBJ:PROG` (the program of an object holding several)."""
    obj, sep, prog = text.rpartition(":")
    if sep and obj and prog and "/" not in prog and not prog.endswith(".o"):
        return obj, prog
    return text, None
