"""The data address space of docs/execution_contract.md section 4: stack, xdp_md, packet, map memory tiers, faults.

Packet buffer geometry (the same as the kernel's BPF_PROG_TEST_RUN, so that adjust_head/tail limits agree):

    PKT_BASE (data_hard_start)                                        PKT_BASE + PKT_BUF_SIZE
    | xdp_frame (40) | headroom ... | meta | data ... data_end | tailroom ... | skb_shared_info (320) |
                                          ^ PKT_BASE + PKT_HEADROOM (256) at start

- `adjust_head`/`adjust_meta` may move `data_meta` down to PKT_BASE + XDP_FRAME_RESERVED.
- `adjust_tail` may move `data_end` up to PKT_HARD_END = PKT_BASE + PKT_BUF_SIZE - SKB_SHINFO_RESERVED.
- The whole buffer is zeroed when a packet starts, so no byte of a previous packet is ever visible.
"""

from __future__ import annotations

import struct

from hxdp import params
from hxdp.errors import HxdpError

XDP_FRAME_RESERVED = 40  # sizeof(struct xdp_frame) on x86-64: the kernel keeps it free at data_hard_start
SKB_SHINFO_RESERVED = 320  # SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) on x86-64, kept free at the end
PKT_HARD_END = params.PKT_BASE + params.PKT_BUF_SIZE - SKB_SHINFO_RESERVED
PKT_DATA_START = params.PKT_BASE + params.PKT_HEADROOM
PKT_MODEL_MAX_LEN = PKT_HARD_END - PKT_DATA_START  # 3520, the kernel's test-run limit for a 4 KiB page
ETH_HLEN = 14

REGION_STACK = params.STACK_BASE >> params.REGION_SHIFT
REGION_CTX = params.CTX_BASE >> params.REGION_SHIFT
REGION_PKT = params.PKT_BASE >> params.REGION_SHIFT
REGION_MAP = params.MAP_BASE >> params.REGION_SHIFT


SPARSE_PAGE = 4096


class SparseMemory:
    """An off-chip map memory tier's bytes (docs/maps.md "Memory tiers"): zeros until written, kept in pages
    allocated on first write, so a map of millions of entries costs what its written slots cost. Indexed like a
    bytearray by an int (one byte) or a slice with step 1 (bytes)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pages: dict[int, bytearray] = {}

    def __len__(self) -> int:
        return self.size

    def _span(self, key: slice) -> tuple[int, int]:
        start, stop, step = key.indices(self.size)
        if step != 1:
            raise ValueError("SparseMemory slices have step 1")
        return start, max(start, stop)

    def __getitem__(self, key: int | slice) -> int | bytes:
        if isinstance(key, int):
            if not 0 <= key < self.size:
                raise IndexError(f"byte {key} outside {self.size}")
            page = self.pages.get(key // SPARSE_PAGE)
            return page[key % SPARSE_PAGE] if page is not None else 0
        start, stop = self._span(key)
        out = bytearray()
        while start < stop:
            n, off = divmod(start, SPARSE_PAGE)
            end = min(stop, (n + 1) * SPARSE_PAGE)
            page = self.pages.get(n)
            out += page[off : off + end - start] if page is not None else bytes(end - start)
            start = end
        return bytes(out)

    def __setitem__(self, key: int | slice, value: int | bytes | bytearray) -> None:
        if isinstance(key, int):
            key, value = slice(key, key + 1), bytes([value])  # type: ignore[list-item]
        start, stop = self._span(key)
        data = bytes(value)  # type: ignore[arg-type]
        if len(data) != stop - start:
            raise ValueError(f"{len(data)} bytes for a span of {stop - start} (SparseMemory does not resize)")
        pos = 0
        while start < stop:
            n, off = divmod(start, SPARSE_PAGE)
            end = min(stop, (n + 1) * SPARSE_PAGE)
            chunk = data[pos : pos + end - start]
            page = self.pages.get(n)
            if page is None and any(chunk):
                page = self.pages[n] = bytearray(SPARSE_PAGE)
            if page is not None:
                page[off : off + len(chunk)] = chunk
            pos += end - start
            start = end

    def touched(self, first: int, stride: int, count: int) -> list[int]:
        """Indices i < count of the items at first + i * stride whose first byte lies in a written page, in order
        (the only ones that can hold anything but zeros)."""
        out: set[int] = set()
        for n in self.pages:
            lo, hi = n * SPARSE_PAGE - first, (n + 1) * SPARSE_PAGE - first  # [lo, hi) relative to item 0
            i0, i1 = max(0, -(-lo // stride)), min(count, -(-hi // stride))
            out.update(range(i0, i1))
        return sorted(out)

    def copy(self) -> SparseMemory:
        other = SparseMemory(self.size)
        other.pages = {n: bytearray(p) for n, p in self.pages.items()}
        return other


class AccessFault(HxdpError):
    """A load or store outside the accessible part of the data address space (the packet ends ABORTED)."""


class DataMemory:
    """Stack frames, the xdp_md context, the packet buffer and map memory, decoded by address.

    `stack_frames` > 1 is used by the sequential model for bpf-to-bpf calls: frame k occupies
    [STACK_BASE + 512 k, STACK_BASE + 512 (k + 1)); only frames of active calls are accessible.
    """

    def __init__(self, map_mem: bytearray | None = None, stack_frames: int = 1,
                 tiers: dict[str, SparseMemory] | None = None) -> None:
        self.map_mem = map_mem if map_mem is not None else bytearray(0)
        self.tiers = tiers or {}  # the off-chip map memory tiers a layout uses (MapState.tiers)
        self.max_frames = stack_frames
        self.stack = bytearray(params.STACK_SIZE * stack_frames)
        self.stack_limit = params.STACK_SIZE  # accessible bytes of the stack (active frames)
        self.pkt = bytearray(params.PKT_BUF_SIZE)
        self.data = PKT_DATA_START
        self.data_end = PKT_DATA_START
        self.data_meta = PKT_DATA_START
        self.ingress_ifindex = 1
        self.rx_queue_index = 0
        self.read_log: list[tuple[int, int]] | None = None  # (addr, size) of reads while logging
        self.helper_port = False  # a helper reads (HelperEnv.call): its port reaches the on-chip map memory only

    # --- per-packet set-up and results -------------------------------------------------------------------------
    def reset(self, packet: bytes, ingress_ifindex: int = 1, rx_queue_index: int = 0) -> None:
        if len(packet) > PKT_MODEL_MAX_LEN:
            raise HxdpError(f"packet of {len(packet)} bytes is longer than the buffer allows ({PKT_MODEL_MAX_LEN})")
        self.stack[:] = bytes(len(self.stack))
        self.stack_limit = params.STACK_SIZE
        self.pkt[:] = bytes(len(self.pkt))
        start = PKT_DATA_START - params.PKT_BASE
        self.pkt[start : start + len(packet)] = packet
        self.data = self.data_meta = PKT_DATA_START
        self.data_end = PKT_DATA_START + len(packet)
        self.ingress_ifindex = ingress_ifindex & 0xFFFFFFFF
        self.rx_queue_index = rx_queue_index & 0xFFFFFFFF

    def fresh_stack(self) -> None:
        """The stack as at packet start (a tail call's target program starts with it): every byte zero."""
        self.stack[:] = bytes(len(self.stack))
        self.stack_limit = params.STACK_SIZE

    def packet_bytes(self) -> bytes:
        return bytes(self.pkt[self.data - params.PKT_BASE : self.data_end - params.PKT_BASE])

    def meta_bytes(self) -> bytes:
        return bytes(self.pkt[self.data_meta - params.PKT_BASE : self.data - params.PKT_BASE])

    def ctx_bytes(self) -> bytes:
        return struct.pack("<6I", self.data, self.data_end, self.data_meta, self.ingress_ifindex,
                           self.rx_queue_index, 0)

    # --- address decode ---------------------------------------------------------------------------------------
    @staticmethod
    def _map_value(tag: int, addr: int, size: int, write: bool, tier: str = "bram") -> int:
        """The offset in its tier's memory of a tagged access, or AccessFault: [addr, addr + size) must lie in the
        value the tag names (its words of the tier's grain), and a store needs a writable value (execution contract
        section 4)."""
        what = "store" if write else "load"
        split = params.split_map_tag(tag, tier)
        if split is None:
            raise AccessFault(f"{what} of {size} bytes at 0x{addr:08x}: not a map-value pointer (tag 0x{tag:08x})")
        start, length, rdonly = split
        base = params.TIER_BASE[tier]
        off = addr - base
        if not (start <= off and off + size <= start + length):
            raise AccessFault(f"{what} of {size} bytes at 0x{addr:08x} is outside its map value (0x"
                              f"{base + start:08x}, {length} bytes)")
        if write and rdonly:
            raise AccessFault(f"store of {size} bytes at 0x{addr:08x}: the map value is read-only")
        return off

    def _locate(self, addr: int, size: int, write: bool) -> tuple[bytearray | SparseMemory, int]:
        """The backing buffer and offset of [addr, addr + size), or AccessFault."""
        tag, addr = addr >> params.MAP_TAG_SHIFT, addr & 0xFFFFFFFF
        if addr < 0 or addr + size > 0xFFFFFFFF or tag >> 32:
            raise AccessFault(f"access of {size} bytes at 0x{addr:x}: not a 32-bit address")
        region = addr >> params.REGION_SHIFT
        tier = params.tier_of(addr)
        if tier in self.tiers:  # an off-chip tier of the layout (the others hold no map: every access faults)
            off = self._map_value(tag, addr, size, write, tier)
            if off + size <= params.TIER_BYTES[tier]:
                return self.tiers[tier], off
        if tag and region != REGION_MAP:
            raise AccessFault(f"access of {size} bytes at 0x{addr:08x} with bits 63:32 0x{tag:08x}: only "
                              f"map-value pointers carry a tag")
        if region == REGION_PKT:
            if self.data_meta <= addr and addr + size <= self.data_end:
                return self.pkt, addr - params.PKT_BASE
        elif region == REGION_STACK:
            off = addr - params.STACK_BASE
            if off + size <= self.stack_limit:
                return self.stack, off
        elif region == REGION_MAP:
            off = self._map_value(tag, addr, size, write)
            if off + size <= len(self.map_mem):
                return self.map_mem, off
        elif region == REGION_CTX and not write:
            off = addr - params.CTX_BASE
            if params.ctx_field(off, size):
                return bytearray(self.ctx_bytes()), off
        what = "store" if write else "load"
        raise AccessFault(f"{what} of {size} bytes at 0x{addr:08x} is outside the accessible memory")

    def check(self, addr: int, size: int, write: bool = False) -> None:
        """Raise AccessFault unless [addr, addr + size) is accessible."""
        if size:
            self._locate(addr, size, write)

    def read(self, addr: int, size: int) -> bytes:
        if size == 0:
            return b""
        buf, off = self._locate(addr, size, False)
        if self.helper_port and params.tier_of(addr) not in (None, "bram"):
            # (sephirot_core.v: the helper unit's reads go to the stack, the packet and the on-chip map memory)
            raise AccessFault(f"a helper reads 0x{addr & 0xFFFFFFFF:08x} in {params.tier_of(addr)}: not supported, "
                              "because the helper unit's read port reaches the on-chip map memory only (copy the "
                              "key or value to the stack first; docs/maps.md \"Memory tiers\")")
        if self.read_log is not None:
            self.read_log.append((addr & 0xFFFFFFFF, size))
        return bytes(buf[off : off + size])

    def write(self, addr: int, data: bytes) -> None:
        if not data:
            return
        buf, off = self._locate(addr, len(data), True)
        buf[off : off + len(data)] = data

    def load(self, addr: int, size: int) -> int:
        return int.from_bytes(self.read(addr, size), "little")

    def store(self, addr: int, size: int, value: int) -> None:
        self.write(addr, (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little"))
