"""ISA extensions (paper 3.2): three-operand ALU, 6-byte load/store, exit with action."""

from __future__ import annotations

from dataclasses import replace

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import State, access_of, live_after, liveness, provenance
from hxdp.compiler.ir import Op
from hxdp.isa import table as T

ALU3_64 = {op: code for code, op in T.EXT_ALU3_64.items()}
ALU3_32 = {op: code for code, op in T.EXT_ALU3_32.items()}


# --- exit with action ------------------------------------------------------------------------------------
def _exit_only(cfg: Cfg, bid: int) -> bool:
    ops = cfg.blocks[bid].ops
    return len(ops) == 1 and ops[0].kind == "exit"


def exit_actions(cfg: Cfg) -> int:
    """`exit` where r0 is a known constant on every path -> `exit K`; branches to a shared `exit` whose r0 is a
    known constant at the branch are given their own `exit K` block."""
    states = provenance(cfg)
    n = 0
    made: dict[int, int] = {}
    for bid in list(cfg.order):
        b = cfg.blocks[bid]
        t = b.term
        if t is None or not t.is_cond or id(t) not in states:
            continue
        r0 = states[id(t)].regs.get(0)
        k = _action_of(cfg, r0)
        if k is None:
            continue
        if t.target is not None and _exit_only(cfg, t.target):
            if k not in made:
                nb = cfg.new_block()
                nb.ops = [Op(T.EXT_EXIT_ACTION, imm=_s32(k), slot=t.slot, text=f"exit {k}")]
                cfg.order.append(nb.id)
                made[k] = nb.id
            t.target = made[k]
            n += 1
    for bid in cfg.order:
        b = cfg.blocks[bid]
        t = b.term
        if t is None or t.kind != "exit" or id(t) not in states:
            continue
        r0 = states[id(t)].regs.get(0)
        k = _action_of(cfg, r0)
        if k is None:
            continue
        b.ops[-1] = Op(T.EXT_EXIT_ACTION, imm=_s32(k), slot=t.slot, text=t.text)
        n += 1
    if n:
        cfg.simplify()
    return n


def _action_of(cfg: Cfg, r0: object) -> int | None:
    """The `exit K` immediate equivalent to `exit` with this known r0, or None. `exit K` yields the u32 K; on
    XDP only the low 32 bits of r0 are the result, but in raw mode (`hxdp exec`) all 64 bits are observable."""
    if not isinstance(r0, tuple) or r0[0] != "scalar" or r0[1] is None:
        return None
    v = r0[1] & 0xFFFFFFFFFFFFFFFF
    if cfg.raw and v > 0xFFFFFFFF:
        return None
    return v & 0xFFFFFFFF


def _s32(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def exit_truncations(cfg: Cfg) -> int:
    """`w0 = w0` before `exit` is dropped on XDP: the result is the low 32 bits of r0 anyway (contract 3). Not in
    raw mode, where all of r0 is observable."""
    if cfg.raw:
        return 0
    n = 0
    for bid in cfg.order:
        ops = cfg.blocks[bid].ops
        if not ops or ops[-1].kind != "exit":
            continue
        for j in range(len(ops) - 2, -1, -1):
            op = ops[j]
            if op.info.name == "mov32_x" and op.dst == 0 and op.src == 0 and op.off == 0:
                del ops[j]
                n += 1
                break
            if 0 in op.uses() or 0 in op.defs():
                break
    return n


# --- three-operand ALU -----------------------------------------------------------------------------------
def alu3(cfg: Cfg, table64: dict[str, int] = ALU3_64, table32: dict[str, int] = ALU3_32) -> int:
    """`dst = src; dst OP= imm` -> `dst = src OP imm` when dst is not read in between and src is unchanged (the
    tables: operation -> opcode of the target's three-operand set)."""
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        ops = b.ops
        dead: set[int] = set()
        for j, op in enumerate(ops):
            info = op.info
            if op.kind != "alu" or info.src_reg or info.op not in ("add", "sub", "and", "or", "xor", "lsh", "rsh"):
                continue
            table = table64 if info.width == 64 else table32
            name, imm = info.op, op.imm
            if name == "sub":
                if imm == -(1 << 31):
                    continue
                name, imm = "add", -imm
            if name not in table:
                continue
            if name in ("lsh", "rsh") and not 0 <= imm < info.width:
                continue
            for i in range(j - 1, -1, -1):
                if i in dead:
                    continue
                prev = ops[i]
                if op.dst in prev.defs():
                    # a 32-bit op reads only the low half, so a 64-bit copy before it fuses as well
                    movnames = ("mov64_x",) if info.width == 64 else ("mov32_x", "mov64_x")
                    if prev.info.name in movnames and prev.off == 0 and prev.src != op.dst \
                            and not any(prev.src in ops[m].defs() for m in range(i + 1, j) if m not in dead):
                        ops[j] = op.copy(opcode=table[name], src=prev.src, imm=imm)
                        dead.add(i)
                        n += 1
                    break
                if op.dst in prev.uses():
                    break
        b.ops = [op for i, op in enumerate(ops) if i not in dead]
    return n


# --- 6-byte load/store ------------------------------------------------------------------------------------
def _versions(ops: list[Op]) -> list[dict[int, int]]:
    """For each op, the index of the last def of every register before it (absent: block entry)."""
    cur: dict[int, int] = {}
    out = []
    for i, op in enumerate(ops):
        out.append(dict(cur))
        for d in op.defs():
            cur[d] = i
    return out


def ld6(cfg: Cfg) -> int:
    """Copies of 6 contiguous bytes done as 4+2 / 2+2+2 / ... byte loads and stores -> one ldx6 + one stx6."""
    states = provenance(cfg)
    _, live_out = liveness(cfg)
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        changed = True
        while changed:
            changed = False
            ops = b.ops
            after = live_after(ops, live_out[bid])
            ver = _versions(ops)
            pairs = []
            for i, ld in enumerate(ops):
                if ld.kind != "ldx" or ld.size not in (1, 2, 4) or ld.dst == ld.src:
                    continue
                r = ld.dst
                for j in range(i + 1, len(ops)):
                    o = ops[j]
                    if r in o.uses():
                        if o.kind == "stx" and o.size == ld.size and o.src == r and o.dst != r \
                                and r not in after[j]:
                            pairs.append((i, j))
                        break
                    if r in o.defs():
                        break
            groups: dict[tuple, list[tuple[int, int]]] = {}
            for i, j in pairs:
                ld, stx = ops[i], ops[j]
                key = (ld.src, ver[i].get(ld.src, -1), stx.dst, ver[j].get(stx.dst, -1), stx.off - ld.off)
                groups.setdefault(key, []).append((i, j))
            for members in groups.values():
                members.sort(key=lambda p: ops[p[0]].off)
                for start in range(len(members)):
                    got = _run6(ops, members, start)
                    if got and _combine(ops, got, states):
                        n += 1
                        changed = True
                        break
                if changed:
                    break
    return n


def _run6(ops: list[Op], members: list[tuple[int, int]], start: int) -> list[tuple[int, int]] | None:
    a0 = ops[members[start][0]].off
    pos = a0
    run = []
    for i, j in members[start:]:
        if ops[i].off != pos:
            return None
        run.append((i, j))
        pos += ops[i].size
        if pos - a0 == 6:
            return run if len(run) > 1 else None
        if pos - a0 > 6:
            return None
    return None


def _combine(ops: list[Op], run: list[tuple[int, int]], states: dict[int, State]) -> bool:
    loads = sorted(i for i, _ in run)
    stores = sorted(j for _, j in run)
    first, last = loads[0], stores[-1]
    members = set(loads) | set(stores)
    # moving loads up to `first`: no store that may alias in between
    for i in loads[1:]:
        acc = access_of(ops[i], states.get(id(ops[i])))
        for m in range(first, i):
            o = ops[m]
            if m in members:
                continue
            if o.is_call or o.is_atomic or (o.is_store and not acc.disjoint(access_of(o, states.get(id(o))))):
                return False
    for j in stores[:-1]:
        acc = access_of(ops[j], states.get(id(ops[j])))
        for m in range(j + 1, last + 1):
            o = ops[m]
            if m in members:
                continue
            if o.is_call or o.is_atomic or (o.is_mem and not acc.disjoint(access_of(o, states.get(id(o))))):
                return False
    lo_ld = min(loads, key=lambda i: ops[i].off)
    base_ld, base_st = ops[lo_ld], ops[min(stores, key=lambda j: ops[j].off)]
    # the group's own loads move up past its own stores (and stores down past loads): only when the copied
    # ranges do not overlap (same base register, so offsets compare)
    if max(loads) > min(stores):
        src6 = replace(access_of(base_ld, states.get(id(base_ld))), size=6)
        dst6 = replace(access_of(base_st, states.get(id(base_st))), size=6)
        same_base = base_ld.src == base_st.dst and abs(base_st.off - base_ld.off) >= 6 and \
            not any(base_ld.src in ops[m].defs() for m in range(first, last + 1))
        if not same_base and not src6.disjoint(dst6):
            return False
    src_base, dst_base = base_ld.src, base_st.dst
    for cand in [ops[i].dst for i in loads]:
        if cand in (src_base, dst_base):
            continue
        ok = True
        for m in range(first, last + 1):
            if m in members:
                continue
            o = ops[m]
            if cand in o.uses() or cand in o.defs():
                ok = False
                break
        if not ok:
            continue
        # the base registers must hold the same value at the combined positions
        if any(src_base in ops[m].defs() for m in range(first, max(loads))) or \
                any(dst_base in ops[m].defs() for m in range(min(stores), last)):
            return False
        new_ld = base_ld.copy(opcode=T.EXT_LDX6, dst=cand)
        new_st = base_st.copy(opcode=T.EXT_STX6, src=cand)
        new_ld.tags.add("ld6")
        states[id(new_ld)] = states.get(id(ops[first]))
        states[id(new_st)] = states.get(id(ops[last]))
        repl = {first: new_ld, last: new_st}
        rebuilt = []
        for m, o in enumerate(ops):
            if m in repl:
                rebuilt.append(repl[m])
            elif m not in members:
                rebuilt.append(o)
        ops[:] = rebuilt
        return True
    return False
