"""The helper functions of params.HELPERS with the kernel's semantics, and their hardware latency (one place).

Each helper takes r1-r5 (u64) and returns r0. Memory effects go through DataMemory (packet, stack) and
MapState (map memory). docs/helpers.md documents semantics, deviations and latencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.events import Event
from hxdp.models.eventring import EventFault, EventUnit
from hxdp.models.maplayout import MapRegion
from hxdp.models.maps import HASH_KINDS, OUTER_KINDS, SLOT_HEADER, MapState, windows
from hxdp.models.memory import ETH_HLEN, PKT_HARD_END, XDP_FRAME_RESERVED, DataMemory

M64 = (1 << 64) - 1
M32 = 0xFFFFFFFF
EINVAL, EACCES, EFAULT = 22, 13, 14
XDP_BYTES_MAX = 0xFFFF  # bpf_xdp_pointer: an offset or a length above it is -EFAULT
META_MAX = 255  # type_max(skb_shared_info.meta_len): metadata up to 252 bytes (multiple of 4)
BPF_F_BROADCAST, BPF_F_EXCLUDE_INGRESS = 1 << 3, 1 << 4
XDP_ACTION_MASK = 0x3
PRANDOM_SEED = 0x2545F491
KTIME_NS_PER_CYCLE_X5 = 32  # 6.4 ns per 156.25 MHz cycle = 32/5

# Latencies in extra cycles (the row itself costs 1): docs/helpers.md.
KEY_READ_BYTES = 8  # the helper memory port: one 8-byte word per cycle (as csum_diff reads)
MAP_ACCESS_BASE = 2  # decode handle, hash the key (one cycle for keys up to 16 bytes), issue the first read
LINE_BYTES = 16  # map memory line: one key compare or one value copy per line per cycle
CSUM_BYTES_PER_CYCLE = 8
PRINTK_BYTES_PER_CYCLE = 8  # trace_printk reads its format through the helper memory port like csum_diff
# The array-indexed kinds: an entry is at the region's data + key * slot size, so the map FSM neither hashes nor
# probes (sephirot_mapfsm.v, "the array kinds"); a plain array's lookup is that address alone, nothing read
INDEXED_KINDS = frozenset({"array", "percpu_array", "devmap", "cpumap", "xskmap", "array_of_maps"})
ADDRESS_KINDS = frozenset({"array", "percpu_array"})


class HelperFault(HxdpError):
    """A helper call the hardware cannot complete (bad map handle, unsupported flags): XDP_ABORTED."""


def s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def helper_latency(helper_id: int, probes: int = 1, key_size: int = 0, value_size: int = 0,
                   size: int = 0, writes: int = 0, kind: str = "") -> int:
    """Extra cycles a row with this helper call stalls (the row's own cycle not included).

    probes: slots the map FSM visited (array 1; hash: probed slots incl. the hit; LRU eviction adds the
    bucket count; LPM: the table's high-water mark). size: csum_diff from_size + to_size, adjust_head
    metadata bytes moved, trace_printk format bytes read (min(size, PRINTK_FMT_MAX)). writes: the map windows
    the call writes (MapState.last_writes), one a cycle from the cycle the map access alone would end in.
    kind: the map's kind for a map helper (an array kind's access is indexed: indexed_latency); a broadcast
    scan passes none.
    """
    name = params.HELPERS.get(helper_id)
    if kind in INDEXED_KINDS:
        return indexed_latency(name, kind, key_size, value_size, writes)
    lines_key = max(1, (key_size + LINE_BYTES - 1) // LINE_BYTES)
    # the key comes in through the helper's memory port, KEY_READ_BYTES per cycle, before its slots are
    # compared; a probe then reads the slot's header and key through the map window, MAP_WINDOW_BYTES per cycle:
    # keys above 24 bytes take longer than the fixed part covers
    slot_lines = windows(SLOT_HEADER + key_size)
    keyed = max(MAP_ACCESS_BASE + probes * lines_key,
                (key_size + KEY_READ_BYTES - 1) // KEY_READ_BYTES + probes * slot_lines)
    more = max(0, writes - 1)
    if name in ("map_lookup_elem", "map_delete_elem"):
        return keyed + more
    if name == "map_update_elem":
        # the value comes in through the same port after the key: for large values that is the longer term
        words = (key_size + KEY_READ_BYTES - 1) // KEY_READ_BYTES + (value_size + KEY_READ_BYTES - 1) // KEY_READ_BYTES
        return max(keyed + (value_size + LINE_BYTES - 1) // LINE_BYTES, words) + more
    if name == "redirect_map":
        return MAP_ACCESS_BASE + probes
    if name == "csum_diff":
        return 1 + (size + CSUM_BYTES_PER_CYCLE - 1) // CSUM_BYTES_PER_CYCLE
    if name == "xdp_adjust_head":
        return 1 + (size + LINE_BYTES - 1) // LINE_BYTES
    if name == "trace_printk":
        return 1 + (size + PRINTK_BYTES_PER_CYCLE - 1) // PRINTK_BYTES_PER_CYCLE
    if name in ("redirect", "xdp_adjust_tail", "xdp_adjust_meta", "tail_call"):
        return 1
    if name in ("ktime_get_ns", "ktime_get_coarse_ns", "get_prandom_u32", "get_smp_processor_id", "spin_lock",
                "spin_unlock"):
        return 0
    if name == "fib_lookup":
        raise HelperFault("fib_lookup: its latency depends on the FIB walk (hxdp.fib.lookup.FibOutcome.cycles)")
    raise HelperFault(f"helper {helper_id} is not implemented in hardware")


def indexed_latency(name: str | None, kind: str, key_size: int, value_size: int, writes: int) -> int:
    """Extra cycles of a map helper on an array kind (INDEXED_KINDS), as sephirot_mapfsm.v's array path: the key
    comes in through the helper's port, KEY_READ_BYTES a cycle; in the cycle after it the index is checked and the
    entry's address computed, and a plain array's lookup ends there (its pointer is that address). A lookup that
    reads the entry (devmap, cpumap, xskmap: empty or not; array_of_maps: the inner id) reads its window then and
    ends in the next cycle, as a delete ends (its writes from there). An update's value comes in after the key and
    its write follows it. redirect_map has its key in r2: the entry is read in the call's first cycle and the call
    ends in the second, as tail_call. Each written window past the first costs a cycle."""
    key_words = (key_size + KEY_READ_BYTES - 1) // KEY_READ_BYTES
    more = max(0, writes - 1)
    if name == "redirect_map":
        return 1
    if name == "map_lookup_elem":
        return key_words + (0 if kind in ADDRESS_KINDS else 1) + more
    if name == "map_delete_elem":
        return key_words + 1 + more
    if name == "map_update_elem":
        return key_words + (value_size + KEY_READ_BYTES - 1) // KEY_READ_BYTES + more
    raise HelperFault(f"{name}: not a map helper of an array kind")


def off_chip_probe_cycles(r: MapRegion, probes: int) -> int:
    """Cycles the map FSM waits for its reads in an off-chip region (docs/maps.md "Memory tiers"): the region header,
    then each slot it visits, each one read of the slot's header and key windows that it waits for
    (params.tier_read_cycles); the writes of an update or a delete are posted, so they cost what they cost on chip."""
    if r.tier == "bram" or r.kind not in params.OFF_CHIP_SLOT_KINDS:
        return 0
    return (1 + probes) * params.tier_read_cycles(r.tier, windows(SLOT_HEADER + r.key_size) * params.MAP_WINDOW_BYTES)


def _check_map_unit_sizes(name: str, r: MapRegion) -> None:
    """The map unit's limits (sephirot_mapfsm.v): keys it compares, and the slots an update or a delete writes whole
    (params.MAP_SLOT_WRITE_MAX; a DDR slot's value starts on 16 bytes, so a long key reaches it sooner)."""
    if r.key_size > params.MAP_KEY_MAX_HW:
        raise HelperFault(f"{name}: map {r.name} has {r.key_size}-byte keys, the map unit compares at most "
                          f"{params.MAP_KEY_MAX_HW}")
    slot_kind = r.kind in HASH_KINDS or r.kind == "lpm_trie"
    if name == "map_update_elem" and (r.value_size > params.MAP_KEY_MAX_HW or (
            slot_kind and r.value_offset + r.value_size > params.MAP_SLOT_WRITE_MAX)):
        raise HelperFault(f"map_update_elem: map {r.name}'s slots (value of {r.value_size} bytes at {r.value_offset}) "
                          f"are longer than the {params.MAP_SLOT_WRITE_MAX} bytes the map unit writes")
    if name == "map_delete_elem" and r.slot_size > params.MAP_SLOT_WRITE_MAX:
        raise HelperFault(f"map_delete_elem: map {r.name}'s slots of {r.slot_size} bytes are longer than the "
                          f"{params.MAP_SLOT_WRITE_MAX} bytes the map unit writes")


# --- checksums (x86-64 csum_partial, exact 32-bit result) --------------------------------------------------------
def csum_partial(data: bytes, seed: int) -> int:
    """The kernel's csum_partial: 32-bit end-around-carry sum of little-endian words, seed included.

    The result is 0 only when the seed and the data are all zero; otherwise it is the unique value in
    [1, 2^32 - 1] congruent to the sum modulo 2^32 - 1 (what every carry-folding order produces).
    """
    total = seed & M32
    padded = data + bytes(-len(data) % 4)
    for i in range(0, len(padded), 4):
        total += int.from_bytes(padded[i : i + 4], "little")
    if total == 0:
        return 0
    return (total - 1) % M32 + 1


def csum_add(a: int, b: int) -> int:
    r = (a & M32) + (b & M32)
    return (r & M32) + (r >> 32)


def csum_sub(a: int, b: int) -> int:
    return csum_add(a, ~b & M32)


def csum_from32to16(s: int) -> int:
    s &= M32
    s = (s + (((s >> 16) | (s << 16)) & M32)) & M32
    return s >> 16


def csum_diff(frm: bytes, to: bytes, seed: int) -> int:
    """bpf_csum_diff since Linux 6.13: the result is always folded to 16 bits (csum_from32to16)."""
    seed &= M32
    if frm and to:
        return csum_from32to16(csum_sub(csum_partial(to, seed), csum_partial(frm, 0)))
    if to:
        return csum_from32to16(csum_partial(to, seed))
    if frm:
        return csum_from32to16(~csum_partial(frm, ~seed & M32) & M32)
    return csum_from32to16(seed)


def xorshift32(x: int) -> int:
    x ^= (x << 13) & M32
    x ^= x >> 17
    x ^= (x << 5) & M32
    return x & M32


def xdp_bytes_status(offset: int, length: int, size: int) -> int:
    """The kernel's bpf_xdp_pointer checks for a linear frame of `size` bytes (u32 offset and length): 0, -EFAULT
    or -EINVAL (then nothing is copied)."""
    if offset > XDP_BYTES_MAX or length > XDP_BYTES_MAX:
        return -EFAULT
    if offset + length > size:
        return -EINVAL
    return 0


@dataclass
class HelperEnv:
    """The state helpers act on: memory, maps, the redirect target, the trace FIFO and the counters."""

    mem: DataMemory
    state: MapState
    redirect: int | None = None
    host: tuple[str, int] | None = None  # a redirect into a host queue (RunResult.host)
    broadcast: int | None = None  # a broadcast's port mask (RunResult.broadcast_ports)
    printk: list[tuple[bytes, tuple[int, ...]]] = field(default_factory=list)
    prandom: int = PRANDOM_SEED
    cycles: int = 0  # board cycles so far (ktime_get_ns = cycles * 6.4 ns)
    events: EventUnit = field(init=False)  # perf_event_output and the ring buffer helpers
    tail_calls: int = 0  # tail calls of the packet so far (at most MAX_TAIL_CALL_CNT)
    tail_row: int | None = None  # the entry row the last tail_call jumps to (None: it fell through)
    cpu: int = 0  # the core's number (get_smp_processor_id; execution contract section 8)

    def __post_init__(self) -> None:
        self.events = EventUnit(self.mem, self.state, self.cpu)

    def new_packet(self) -> None:
        self.redirect = None
        self.host = None
        self.broadcast = None
        self.printk = []
        self.events.new_packet()
        self.tail_calls = 0

    def packet_events(self) -> list[Event]:
        """The records the running packet sent to the host."""
        return list(self.events.records)

    def _map(self, handle: int, helper: str) -> int:
        map_id = self.state.layout.map_of_handle(handle)
        if map_id is None:
            raise HelperFault(f"{helper}: r1 = 0x{handle:x} is not a map handle")
        return map_id

    def _redirect_map(self, r1: int, r2: int, r3: int) -> tuple[int, int]:
        """bpf_redirect_map (kernel __bpf_xdp_redirect_map): a devmap entry names a port, a cpumap entry the host
        queue of its CPU, an xskmap entry the host queue its AF_XDP socket is bound to. Broadcast and
        exclude-ingress are devmap flags only; an empty entry returns the flags' action bits."""
        helper_id = params.HELPER_IDS["redirect_map"]
        map_id = self._map(r1, "redirect_map")
        state = self.state
        r = state.layout.region(map_id)
        if r.kind not in ("devmap", "devmap_hash", "cpumap", "xskmap"):
            raise HelperFault(f"redirect_map: map {r.name} is a {r.kind}, not a devmap, cpumap or xskmap")
        allowed = XDP_ACTION_MASK | (BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS if r.kind.startswith("devmap") else 0)
        if r3 & ~allowed:
            return params.XDP_ABORTED, helper_latency(helper_id, kind=r.kind)
        self.redirect = self.host = self.broadcast = None
        if r3 & BPF_F_BROADCAST:
            self.broadcast = broadcast_mask(state, map_id) | (params.BCAST_EXCLUDE_INGRESS
                                                              if r3 & BPF_F_EXCLUDE_INGRESS else 0)
            return params.XDP_REDIRECT, helper_latency(helper_id, r.slots)
        index = r2 & M32
        off = state.lookup_offset(map_id, index.to_bytes(4, "little"), from_program=False)
        lat = helper_latency(helper_id, state.last_probes, kind=r.kind)
        if off is None:
            return r3 & XDP_ACTION_MASK, lat
        word = int.from_bytes(state.region_mem(r)[off : off + 4], "little")
        if r.kind == "cpumap":
            self.host = ("cpu", index)
        elif r.kind == "xskmap":
            self.host = ("xsk", word)
        else:
            self.redirect = word
        return params.XDP_REDIRECT, lat

    def _map_latency(self, helper_id: int, r: MapRegion, value_size: int = 0) -> int:
        """The latency of the map call just made on region r (its probes and writes are in MapState), its off-chip
        waits included."""
        probes = self.state.last_probes
        return (helper_latency(helper_id, probes, r.key_size, value_size, writes=self.state.last_writes, kind=r.kind)
                + off_chip_probe_cycles(r, probes))

    def call_lowered(self, helper_id: int, r2: int, r3: int, r4: int) -> int:
        """A helper of params.LOWERED_HELPERS (the sequential model runs them as calls; the compiler lowers them
        into lane loads and stores): bpf_xdp_load_bytes/store_bytes(ctx, offset, buf, len) on a linear frame."""
        status = xdp_bytes_status(r2 & M32, r4 & M32, self.mem.data_end - self.mem.data)
        if status:
            return status & M64
        pkt, length = self.mem.data + (r2 & M32), r4 & M32
        if params.LOWERED_HELPERS[helper_id] == "xdp_load_bytes":
            self.mem.write(r3, self.mem.read(pkt, length))
        else:
            self.mem.write(pkt, self.mem.read(r3, length))
        return 0

    def call(self, helper_id: int, r1: int, r2: int, r3: int, r4: int, r5: int) -> tuple[int, int]:
        """Run a helper; returns (r0, latency in extra cycles). Raises HelperFault or AccessFault."""
        self.mem.helper_port = True  # its reads go through the helper unit's port (DataMemory.read)
        try:
            return self._call(helper_id, r1, r2, r3, r4, r5)
        finally:
            self.mem.helper_port = False

    def _call(self, helper_id: int, r1: int, r2: int, r3: int, r4: int, r5: int) -> tuple[int, int]:
        name = params.HELPERS.get(helper_id)
        mem, state = self.mem, self.state
        if name in ("map_lookup_elem", "map_update_elem", "map_delete_elem"):
            map_id = self._map(r1, name)
            r = state.layout.region(map_id)
            if name != "map_lookup_elem" and r.kind in ("cpumap", "xskmap", *OUTER_KINDS):  # as sephirot_mapfsm.v
                raise HelperFault(f"{name}: map {r.name} is a {r.kind}, written by the host only")
            _check_map_unit_sizes(name, r)
            key = mem.read(r2, r.key_size)
            if name == "map_lookup_elem" and r.kind in OUTER_KINDS:  # the inner map's handle, not a pointer
                r0 = state.inner_handle(map_id, key)
                return r0, self._map_latency(helper_id, r)
            if name == "map_lookup_elem":
                off = state.lookup_offset(map_id, key, from_program=True)
                r0 = 0 if off is None else state.layout.value_pointer(map_id, off)
                return r0, self._map_latency(helper_id, r)
            if name == "map_update_elem":
                value = mem.read(r3, r.value_size)
                ret = state.update(map_id, key, value, r4 & M64)
                return ret & M64, self._map_latency(helper_id, r, r.value_size)
            ret = state.delete(map_id, key)
            return ret & M64, self._map_latency(helper_id, r)
        if name == "tail_call":
            return self._tail_call(r2, r3), helper_latency(helper_id)
        if name == "redirect":
            if r2:
                return params.XDP_ABORTED, helper_latency(helper_id)
            self.host = self.broadcast = None
            self.redirect = r1 & M32
            return params.XDP_REDIRECT, helper_latency(helper_id)
        if name == "redirect_map":
            return self._redirect_map(r1, r2, r3)
        if name == "csum_diff":
            fsz, tsz = r2 & M32, r4 & M32
            lat = helper_latency(helper_id, size=fsz + tsz)
            return csum_diff(mem.read(r1, fsz), mem.read(r3, tsz), r5), lat
        if name == "xdp_adjust_head":
            offset = s32(r2)
            metalen = mem.data - mem.data_meta
            data = mem.data + offset
            if data < params.PKT_BASE + XDP_FRAME_RESERVED + metalen or data > mem.data_end - ETH_HLEN:
                return (-EINVAL) & M64, helper_latency(helper_id)
            if metalen:
                # read like any helper input (memory before the row: a same-row store into it is a contract
                # violation), written after the row's stores
                meta = mem.read(mem.data_meta, metalen)
                base = params.PKT_BASE
                mem.pkt[mem.data_meta + offset - base : mem.data_meta + offset - base + metalen] = meta
            mem.data_meta += offset
            mem.data = data
            return 0, helper_latency(helper_id, size=metalen)
        if name == "xdp_adjust_meta":
            meta = mem.data_meta + s32(r2)
            metalen = mem.data - meta
            if meta < params.PKT_BASE + XDP_FRAME_RESERVED or meta > mem.data:
                return (-EINVAL) & M64, helper_latency(helper_id)
            if metalen & 3 or metalen > META_MAX:
                return (-EACCES) & M64, helper_latency(helper_id)
            mem.data_meta = meta
            return 0, helper_latency(helper_id)
        if name == "xdp_adjust_tail":
            offset = s32(r2)
            end = mem.data_end + offset
            if end > PKT_HARD_END or end < mem.data + ETH_HLEN:
                return (-EINVAL) & M64, helper_latency(helper_id)
            if offset > 0:
                base = params.PKT_BASE
                mem.pkt[mem.data_end - base : end - base] = bytes(offset)
            mem.data_end = end
            return 0, helper_latency(helper_id)
        if name in ("spin_lock", "spin_unlock"):
            # one packet runs at a time: the lock is never held by anyone else (docs/helpers.md)
            return 0, helper_latency(helper_id)
        if name in ("ktime_get_ns", "ktime_get_coarse_ns"):  # one clock, finer than the kernel's coarse one
            return (self.cycles * KTIME_NS_PER_CYCLE_X5 // 5) & M64, helper_latency(helper_id)
        if name == "get_prandom_u32":
            self.prandom = xorshift32(self.prandom)
            return self.prandom, helper_latency(helper_id)
        if name == "get_smp_processor_id":
            return self.cpu, helper_latency(helper_id)
        if name in EVENT_HELPERS:
            try:
                return self._event(name, r1, r2, r3, r4, r5)
            except EventFault as exc:
                raise HelperFault(str(exc)) from None
        if name == "fib_lookup":
            return self._fib_lookup(r2, r3, r4)
        if name == "trace_printk":
            size = min(r2 & M32, params.PRINTK_FMT_MAX)
            fmt = mem.read(r1, size)
            self.printk.append((fmt.split(b"\0", 1)[0], (r3, r4, r5)))
            return 0, helper_latency(helper_id, size=size)
        raise HelperFault(f"helper {helper_id} is not implemented in hardware")

    def _event(self, name: str, r1: int, r2: int, r3: int, r4: int, r5: int) -> tuple[int, int]:
        unit = self.events
        if name == "perf_event_output":  # (ctx, map, flags, data, size): a u32 size, as the hardware reads it
            return unit.perf_event_output(self._map(r2, name), r3 & M64, r4, r5 & M32)
        if name == "ringbuf_output":  # (map, data, size, flags)
            return unit.ringbuf_output(self._map(r1, name), r2, r3 & M64, r4 & M64)
        if name == "ringbuf_reserve":  # (map, size, flags)
            return unit.ringbuf_reserve(self._map(r1, name), r2 & M64, r3 & M64)
        return unit.ringbuf_commit(r1, discard=name == "ringbuf_discard")  # (data, flags)

    def _tail_call(self, r2: int, r3: int) -> int:
        """bpf_tail_call(ctx, r2 = prog_array, r3 = index) as the kernel's JIT: an index past max_entries, or a
        chain already MAX_TAIL_CALL_CNT calls long, falls through; otherwise the call counts, and an empty entry
        falls through too. tail_row is where the core jumps (its r0 is the verifier's unreadable value: 0)."""
        self.tail_row = None
        map_id = self._map(r2, "tail_call")
        r = self.state.layout.region(map_id)
        if r.kind != "prog_array":
            raise HelperFault(f"tail_call: map {r.name} is a {r.kind}, not a prog_array")
        index = r3 & M32
        if index >= r.max_entries or self.tail_calls >= params.MAX_TAIL_CALL_CNT:
            return 0
        self.tail_calls += 1
        off = r.slot_addr(index)
        value = int.from_bytes(self.state.region_mem(r)[off : off + 4], "little")
        if value:
            self.tail_row = value - 1
        return 0

    def _fib_lookup(self, addr: int, plen: int, flags: int) -> tuple[int, int]:
        """bpf_fib_lookup on the FIB in map memory (hxdp.fib.lookup); the struct must be on the stack."""
        from hxdp.fib.lookup import PARAMS_BYTES, PARAMS_READ_WORDS, FibFault, fib_lookup

        if not params.STACK_BASE <= addr <= params.STACK_BASE + self.mem.stack_limit - PARAMS_BYTES:
            raise HelperFault(f"fib_lookup: struct bpf_fib_lookup at 0x{addr:x} is not on the stack (the hardware "
                              f"FIB writes its results through the stack's store port only)")
        try:
            out = fib_lookup(self.state.mem, lambda: self.mem.read(addr, PARAMS_READ_WORDS * 8), plen, flags & M32)
        except FibFault as exc:
            raise HelperFault(str(exc)) from None
        for off, data in out.writes:
            self.mem.write(addr + off, data)
        return out.ret, out.cycles


EVENT_HELPERS = frozenset({"perf_event_output", "ringbuf_output", "ringbuf_reserve", "ringbuf_submit",
                           "ringbuf_discard"})


def broadcast_mask(state: MapState, map_id: int) -> int:
    """The ports a broadcast through a devmap reaches: bit i for every entry naming ifindex i + 1 (i below
    params.BCAST_PORTS; another ifindex is no port of the NIC). The hardware scans every slot for it."""
    mask = 0
    for value in state.dump_map(map_id).values():
        ifindex = int.from_bytes(value[:4], "little")
        if 1 <= ifindex <= params.BCAST_PORTS:
            mask |= 1 << (ifindex - 1)
    return mask

def helper_name(helper_id: int) -> str:
    return params.HELPERS.get(helper_id, f"helper#{helper_id}")

