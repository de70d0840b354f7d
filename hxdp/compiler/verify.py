"""Schedule verifier: checks a ROM against docs/execution_contract.md and raises CompileError naming row and lane."""

from __future__ import annotations

from hxdp import params
from hxdp.errors import CompileError
from hxdp.isa import table as T
from hxdp.isa.insn import Insn, IsaError, disasm
from hxdp.isa.rom import Rom


def _err(r: int, lane: int, ins: Insn | None, msg: str) -> CompileError:
    text = f" ({disasm(ins)})" if ins is not None else ""
    return CompileError(f"row {r} lane {lane}{text}: {msg}")


def _writes(ins: Insn) -> set[int]:
    k = ins.info.kind
    if k in ("alu", "alu3", "neg", "end", "bswap", "ldx", "ldxsx", "ldx6", "lddw"):
        return {ins.dst}
    if k == "call":
        return {0}
    if k == "atomic":
        aop = T.ATOMIC_OPS.get(ins.imm, "")
        if aop == "cmpxchg":
            return {0}
        if aop.startswith("fetch_") or aop == "xchg":
            return {ins.src}
    return set()


def verify_rom(rom: Rom, disjoint_stores: set[tuple[int, int, int]] | None = None,
               imem_rows: int = params.IMEM_ROWS, regions: dict[tuple[int, int], str] | None = None) -> None:
    """Raise CompileError at the first violation of the execution contract. `disjoint_stores` are the (row, lane,
    lane) store pairs the compiler proved disjoint and `regions` the region it proved each (row, lane) memory
    access to stay in (stack, ctx, pkt, map or handle); an access it did not place counts against the load and
    store ports of every memory with a port rule (the stack, the packet buffer, the map memory)."""
    proven = disjoint_stores or set()
    placed = regions or {}
    n = len(rom.rows)
    if n == 0:
        raise CompileError("empty ROM")
    if n > imem_rows:
        raise CompileError(f"program needs {n} rows, instruction memory holds {imem_rows}")
    for r, row in enumerate(rom.rows):
        if len(row) != rom.lanes:
            raise _err(r, 0, None, f"row has {len(row)} lanes, expected {rom.lanes}")
        written: dict[int, int] = {}
        calls = 0
        atomics = 0
        muls = 0
        mem = 0
        loads_in: dict[str, int] = {}
        stores_in: dict[str, int] = {}
        stores: list[tuple[int, Insn]] = []
        stores_where: list[tuple[int, Insn, str | None]] = []  # every memory store: lane, insn, proved region
        loads_where: list[tuple[int, Insn, str | None]] = []  # every memory load (an atomic too), the same
        called: str | None = None
        unconditional = False
        lane = 0
        while lane < rom.lanes:
            ins = row[lane]
            if ins.is_nop:
                lane += 1
                continue
            try:
                info = ins.info
            except IsaError:
                raise _err(r, lane, ins, f"unknown opcode 0x{ins.opcode:02x}") from None
            if not info.supported or info.kind == "legacy_ld":
                raise _err(r, lane, ins, "unsupported instruction")
            k = info.kind
            if k == "lddw":
                if lane + 1 >= rom.lanes:
                    raise _err(r, lane, ins, "lddw in the last lane has no room for its high half")
                hi = row[lane + 1]
                if hi.opcode != 0 or hi.dst or hi.src or hi.off:
                    raise _err(r, lane + 1, hi, "lddw high half must have an all-zero opcode and fields")
                if ins.src != 0:
                    raise _err(r, lane, ins, f"unresolved lddw pseudo source {ins.src}")
            if k == "alu" and info.op == "mul":
                muls += 1
                if muls > params.MUL_UNITS:
                    raise _err(r, lane, ins, f"a multiplication past the row's {params.MUL_UNITS} (the core's "
                                             f"multipliers)")
            if k == "call":
                calls += 1
                if calls > 1:
                    raise _err(r, lane, ins, "more than one helper call in a row")
                if ins.src != T.CALL_HELPER or ins.imm not in params.HELPERS:
                    raise _err(r, lane, ins, f"helper {ins.imm} is not implemented in hardware")
                called = params.HELPERS[ins.imm]
            for reg in _writes(ins):
                if reg == params.FP_REG:
                    raise _err(r, lane, ins, "writes the read-only frame pointer r10")
                if reg in written:
                    raise _err(r, lane, ins, f"r{reg} is also written by lane {written[reg]} of this row")
                written[reg] = lane
            if k in T.MEM_KINDS:
                mem += 1
                n_ld, n_st = T.memory_ports(k)
                base = ins.src if k in T.LOAD_KINDS else ins.dst
                # r10 is read-only and points at the stack's top: an access through it stays in the stack region
                where = placed.get((r, lane), "stack" if base == params.FP_REG else None)
                if n_st:
                    stores_where.append((lane, ins, where))
                if n_ld:
                    loads_where.append((lane, ins, where))
                for region, (name, _, load_ports, store_ports) in params.PORT_RULES.items():
                    if where is not None and where != region:
                        continue
                    loads_in[region] = loads_in.get(region, 0) + n_ld
                    stores_in[region] = stores_in.get(region, 0) + n_st
                    why = "" if where is not None else " (not proved off it)"
                    if n_ld and loads_in[region] > load_ports:
                        raise _err(r, lane, ins, f"may read the {name}{why}, and a row has only {load_ports} "
                                                 f"{name} load port(s)")
                    if n_st and stores_in[region] > store_ports:
                        raise _err(r, lane, ins, f"may write the {name}{why}, and a row has only {store_ports} "
                                                 f"{name} store port(s)")
            if k == "atomic":
                atomics += 1
            if k in ("st", "stx", "st6", "stx6"):
                stores.append((lane, ins))
            if k in ("jmp", "ja"):
                off = ins.off if info.op != "gotol" else ins.imm
                tgt = r + 1 + off
                if not 0 <= tgt < n:
                    raise _err(r, lane, ins, f"branch target row {tgt} is outside the program (0..{n - 1})")
            if k in ("ja", "exit", "exit_action"):
                unconditional = True
            lane += 2 if k == "lddw" else 1
        hregion = params.HELPER_WRITE_REGIONS.get(called or "")
        for region, allowed in params.CALL_ROW_LOADS.items() if called is not None else ():
            there = [(l_lane, l_ins, where) for l_lane, l_ins, where in loads_where if where in (region, None)]
            if len(there) > allowed:
                l_lane, l_ins, where = there[allowed]
                name = params.PORT_RULES[region][0]
                why = "" if where is not None else " (not proved off it)"
                raise _err(r, l_lane, l_ins, f"may read the {name}{why} in the row of a {called} call, which has "
                                             f"{allowed} {name} load(s) at most (the helper reads through the "
                                             f"lanes' load port)")
        for s_lane, s_ins, where in stores_where:
            if hregion is not None and where in (hregion, None):
                name = params.PORT_RULES[hregion][0]
                why = "" if where is not None else " (not proved off it)"
                raise _err(r, s_lane, s_ins, f"may write the {name}{why} in the row of a {called} call, which "
                                             f"writes it itself")
        if atomics > 1 or (atomics and mem > 1):
            lane = next(i for i, x in enumerate(row) if not x.is_nop and x.info.kind == "atomic")
            raise _err(r, lane, row[lane], "an atomic must be the only memory access of its row")
        for a in range(len(stores)):
            for b in range(a + 1, len(stores)):
                la, sa = stores[a]
                lb, sb = stores[b]
                if (r, la, lb) in proven:
                    continue
                if sa.dst == sb.dst:
                    wa, wb = sa.info.width, sb.info.width
                    if sa.off + wa <= sb.off or sb.off + wb <= sa.off:
                        continue
                    raise _err(r, lb, sb, f"store overlaps the store in lane {la} of the same row")
                raise _err(r, lb, sb, f"store may overlap the store in lane {la} (different base, not proven disjoint)")
        if r == n - 1 and not unconditional:
            raise _err(r, 0, None, "control falls off the end of the program")
