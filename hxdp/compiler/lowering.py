"""Helpers lowered into lane code: bpf_xdp_load_bytes/store_bytes -> the kernel's checks and a copy of loads/stores."""

from __future__ import annotations

from hxdp import params
from hxdp.compiler.cfg import Block, Cfg
from hxdp.compiler.dataflow import State, provenance
from hxdp.compiler.ir import HELPER_RESULT, Op, mov_k
from hxdp.errors import CompileError
from hxdp.isa import table as T

M32 = 0xFFFFFFFF
EFAULT, EINVAL = 14, 22
BYTES_MAX = 0xFFFF  # bpf_xdp_pointer: an offset or a length above it is -EFAULT
OFF_MAX = 0x7FFF  # the largest byte a copy may reach through the s16 offset field of one base register
LOAD_BYTES = params.LOWERED_HELPER_IDS["xdp_load_bytes"]  # (the other one, xdp_store_bytes, copies the other way)
_WIDTHS = ((8, "dw"), (4, "w"), (2, "h"), (1, "b"))


def _op(name: str, call: Op, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> Op:
    return Op(T.BY_NAME[name].opcode, dst, src, off, imm, slot=call.slot, text=call.text)


def _const(st: State, reg: int) -> int | None:
    """The u32 a helper sees in `reg` (the kernel's BPF_CALL casts u64 arguments to u32), when known."""
    v = st.regs.get(reg)
    return v[1] & M32 if v is not None and v[0] == "scalar" and v[1] is not None else None


def _copy(call: Op, cfg: Cfg, src: int, src_off: int, dst: int, dst_off: int, length: int) -> list[Op]:
    """`length` bytes from src + src_off to dst + dst_off, widest accesses first (misaligned ones are legal)."""
    ops: list[Op] = []
    i = 0
    for width, size in _WIDTHS:
        while length - i >= width:
            v = cfg.new_vreg()
            ops.append(_op(f"ldx{size}", call, v, src, src_off + i))
            ops.append(_op(f"stx{size}", call, dst, v, dst_off + i))
            i += width
    return ops


def _lower(cfg: Cfg, b: Block, call: Op, st: State) -> None:
    """Replace `call` (an op of b) by the checks of bpf_xdp_pointer for a linear frame and the copy."""
    name = params.LOWERED_HELPERS[call.imm]
    length = _const(st, 4)
    if length is None:
        raise CompileError(f"{call.where()}: not supported: bpf_{name} with a length not known at compile time, "
                           "because the compiler lowers it into a copy of that many bytes")
    if length > OFF_MAX and length <= BYTES_MAX:
        raise CompileError(f"{call.where()}: not supported: bpf_{name} of {length} bytes, because a copy "
                           f"reaches at most {OFF_MAX + 1} bytes from its buffer")
    offset = _const(st, 2)
    i = b.ops.index(call)
    head, tail = b.ops[:i], b.ops[i + 1:]
    if length > BYTES_MAX or (offset is not None and offset > BYTES_MAX):
        b.ops = head + [mov_k(0, -EFAULT, call.slot)] + tail
        return
    join = cfg.new_block()
    join.ops, join.fall = tail, b.fall
    copy = cfg.new_block()
    copy.fall = join.id
    where = cfg.order.index(b.id)
    data, end = cfg.new_vreg(), cfg.new_vreg()
    # end - data: the frame's length, a scalar (no packet pointer is compared: this is no bounds check)
    loads = [_op("ldxw", call, data, 1, params.CTX_FIELDS["data"]),
             _op("ldxw", call, end, 1, params.CTX_FIELDS["data_end"]), _op("sub64_x", call, end, data)]
    if offset is not None and offset + length <= OFF_MAX:
        b.ops = head + [*loads, mov_k(0, -EINVAL, call.slot), _op("jlt64_k", call, end, imm=offset + length)]
        pkt, pkt_off, checks = data, offset, [b]
    else:
        off, last, pkt, pkt_off = cfg.new_vreg(), cfg.new_vreg(), cfg.new_vreg(), 0
        if offset is None:  # the u32 the helper sees, then bpf_xdp_pointer's -EFAULT
            b.ops = head + [_op("mov32_x", call, off, 2), mov_k(0, -EFAULT, call.slot),
                            _op("jgt64_k", call, off, imm=BYTES_MAX)]
            mid = cfg.new_block()
            b.fall = mid.id
            cfg.order.insert(where + 1, mid.id)
            where += 1
            checks = [b, mid]
        else:
            b.ops = head + [mov_k(off, offset, call.slot)]
            mid, checks = b, [b]
        mid.ops += [*loads, _op("mov64_x", call, last, off), _op("add64_k", call, last, imm=length),
                    mov_k(0, -EINVAL, call.slot), _op("jgt64_x", call, last, end)]
        copy.ops = [_op("mov64_x", call, pkt, data), _op("add64_x", call, pkt, off)]
    for blk in checks:
        blk.ops[-1].target = join.id
        blk.ops[-1].tags.add(HELPER_RESULT)
    checks[-1].fall = copy.id
    if call.imm == LOAD_BYTES:
        copy.ops += _copy(call, cfg, pkt, pkt_off, 3, 0, length)
    else:
        copy.ops += _copy(call, cfg, 3, 0, pkt, pkt_off, length)
    copy.ops.append(mov_k(0, 0, call.slot))
    cfg.order[where + 1:where + 1] = [copy.id, join.id]


def lower_helpers(cfg: Cfg) -> int:
    """Every call of a params.LOWERED_HELPERS helper -> its checks and copy; returns how many were lowered.

    bpf_xdp_pointer on a linear frame: offset or len above 0xffff -> -EFAULT, offset + len past data_end ->
    -EINVAL (nothing copied), else the copy and 0. r1-r5 are dead after a call, so the copy may leave them."""
    calls = [(bid, op) for bid in cfg.order for op in cfg.blocks[bid].ops
             if op.is_call and op.src == T.CALL_HELPER and op.imm in params.LOWERED_HELPERS]
    if not calls:
        return 0
    states = provenance(cfg)
    for _, call in calls:
        st = states.get(id(call))
        if st is None:  # unreachable: dead code removes it
            continue
        b = next(cfg.blocks[bid] for bid in cfg.order if call in cfg.blocks[bid].ops)
        _lower(cfg, b, call, st)
    cfg.simplify()
    cfg.check()
    return len(calls)
