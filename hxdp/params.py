"""Hardware parameters of Sephirot and its board: the one place they are defined (see docs/execution_contract.md)."""

from __future__ import annotations

# --- core shape -------------------------------------------------------------------------------------------
LANES = 4
IMEM_ROWS = 4096  # block RAM (64 x 4 bits per row: 32 BRAM36 for the core's copy, as many for the host's read-back)
ORIGINAL_IMEM_ROWS = 256  # the original hXDP bitstream's instruction memory (and its loader's ROM files)
NUM_REGS = 16  # r0-r10 as in eBPF, r11-r15 extra physical registers for renaming
FP_REG = 10  # read-only frame pointer
STACK_SIZE = 512
STACK_LOAD_PORTS = 1  # lane loads from the stack in one row (an atomic counts as a load and a store)
STACK_STORE_PORTS = 2  # lane stores to the stack in one row (one more stack access of either kind: access fault)
# lane loads and stores of the packet (and its headroom) and of the map memory in one row, as for the stack (none
# of the bundled programs loses a cycle to them; they bound the ports of the packet buffer and the map memory)
PKT_LOAD_PORTS = 2
PKT_STORE_PORTS = 2
MAP_LOAD_PORTS = 2
MAP_STORE_PORTS = 1
# multiplying lanes (mul, 32 or 64 bit) in one row: the core has one 64-bit multiplier, shared by the lanes as the
# divider is (a row with more is an illegal instruction; the compiler never builds one, and none of the bundled
# programs has two multiplications that could share a row)
MUL_UNITS = 1
CYCLE_LIMIT = 100_000  # a packet still running after this many cycles ends with XDP_ABORTED
CLOCK_MHZ = 156.25

# --- data address space (32-bit addresses in 64-bit registers; bits 63:32 are zero but a map-value tag) -----
REGION_SHIFT = 28  # the region is addr[31:28]
STACK_BASE = 0x1000_0000
STACK_TOP = STACK_BASE + STACK_SIZE  # initial r10
CTX_BASE = 0x2000_0000  # xdp_md, initial r1
CTX_SIZE = 24
PKT_BASE = 0x3000_0000  # start of the packet buffer (headroom first)
PKT_BUF_SIZE = 4096
PKT_HEADROOM = 256  # initial data = PKT_BASE + PKT_HEADROOM
PKT_MAX_LEN = 2048  # longest frame the input queue accepts
PKT_MIN_LEN = 60  # shorter frames are dropped by the MAC (runts) before the core sees them
MAP_BASE = 0x4000_0000  # on-chip map memory (block RAM; values are dereferenceable here)
MAP_MEM_BYTES = 1 << 20
MAP_HANDLE_BASE = 0x5000_0000  # lddw map references: MAP_HANDLE_BASE + map id (not dereferenceable)

# --- map memory tiers (docs/maps.md "Memory tiers") ----------------------------------------------------------------
# Maps live in one of three memories of the NetFPGA-SUME, each a region of the 32-bit data address space:
#   bram  on-chip block RAM, MAP_MEM_BYTES at MAP_BASE (region 0x4): small and hot maps, no latency
#   qdr   the board's three QDRII+ SRAMs (Cypress CY7C25652KV18, 72 Mbit each, 2M x 36 bits, 500 MHz, burst of 4):
#         8 MiB of data each (the ninth bit of each 9-bit byte lane is not used), 24 MiB at QDR_BASE (region 0x6)
#   ddr   a 2 GiB window of the two DDR3-1866 SO-DIMMs (2 x 4 GiB, 64 bits): regions 0x8..0xF (addr[31] set)
# A value in a tier starts on the tier's granularity (TIER_GRAIN bytes) and its pointer's tag counts start and length
# in that granularity: a 32-bit tag then bounds every access in every tier (map_tag below).
QDR_BASE = 0x6000_0000
QDR_PARTS = 3
QDR_PART_BYTES = 8 << 20
QDR_BYTES = QDR_PARTS * QDR_PART_BYTES
DDR_BASE = 0x8000_0000
DDR_BYTES = 1 << 31  # the window the 32-bit addresses reach (the SO-DIMMs hold 8 GiB)
TIERS = ("bram", "qdr", "ddr")  # fastest first: the placement's order of preference
# map kinds the engines run off chip (sephirot_mapfsm.v): the map unit reads the region header and then a slot (header
# and key) of a hash map for each slot it visits; an array's lookup is an address computation and reads nothing. An
# LPM trie stays on chip (its lookup scans every slot in use), and so do the other kinds: the placement keeps them there
OFF_CHIP_SLOT_KINDS = frozenset({"hash", "percpu_hash", "lru_hash"})
OFF_CHIP_KINDS = OFF_CHIP_SLOT_KINDS | {"array", "percpu_array"}
TIER_BASE = {"bram": MAP_BASE, "qdr": QDR_BASE, "ddr": DDR_BASE}
TIER_BYTES = {"bram": MAP_MEM_BYTES, "qdr": QDR_BYTES, "ddr": DDR_BYTES}
# start granularity of a value (and unit of its tag): 8 bytes on chip and in QDR; 16 in DDR, so that 27 start bits
# reach the 2 GiB window and 4 length bits remain (values of up to 240 bytes: Katran's are at most 64)
TIER_GRAIN = {"bram": 8, "qdr": 8, "ddr": 16}
# Cycles of the 156.25 MHz core clock, as seen through each part's Xilinx controller (docs/maps.md cites the figures):
# the first data of a read comes TIER_READ_CYCLES after the request; a read of more bytes takes one cycle more per
# TIER_READ_BYTES_PER_CYCLE; writes are posted (the controller's write FIFO takes one window a cycle, later reads see
# them). On chip a read is served in its own cycle (0 cycles more).
TIER_READ_CYCLES = {"bram": 0, "qdr": 8, "ddr": 18}
TIER_READ_BYTES_PER_CYCLE = {"bram": 32, "qdr": 16, "ddr": 64}


def tier_read_cycles(tier: str, nbytes: int) -> int:
    """Cycles a read of `nbytes` in `tier` stalls its requester beyond what the same read costs on chip: the first
    data's latency, then one cycle per further beat of TIER_READ_BYTES_PER_CYCLE (0 on chip; writes are posted)."""
    if tier == "bram" or nbytes <= 0:
        return 0
    beats = -(-nbytes // TIER_READ_BYTES_PER_CYCLE[tier])
    return TIER_READ_CYCLES[tier] + beats - 1



def _tag_fields(tier: str) -> tuple[int, int, int]:
    """(start bits, length bits, granularity) of the map-value tags of a tier."""
    grain = TIER_GRAIN[tier]
    start_bits = (TIER_BYTES[tier] - 1).bit_length() - (grain.bit_length() - 1)
    return start_bits, 31 - start_bits, grain


def tier_of(addr: int) -> str | None:
    """The tier whose region holds 32-bit address `addr` (bits 63:32 are the tag), or None outside every tier."""
    addr &= 0xFFFF_FFFF
    for tier in TIERS:
        if TIER_BASE[tier] <= addr < TIER_BASE[tier] + TIER_BYTES[tier]:
            return tier
    return None


def tier_value_max(tier: str) -> int:
    """The longest value a tag of `tier` describes."""
    _, len_bits, grain = _tag_fields(tier)
    return ((1 << len_bits) - 1) * grain


# A pointer into map memory carries a tag in bits 63:32 (execution contract section 4) that names the value it
# points into: its start and length in the tier's granularity (values are aligned and padded to it, docs/maps.md) and
# whether the program may write it. Every lane or helper access in map memory must lie in [start, start + length),
# and a store needs the write permission; an untagged pointer (length 0) reaches nothing. map_lookup_elem returns a
# tagged pointer, and so do the compiler's constants for global data and inlined array lookups; 64-bit add/sub of
# offsets keep the tag. The tag is self-contained: the check reads no table, one comparator pair per lane; the
# address's region (addr[31:28]) says which tier's field widths apply.
MAP_TAG_SHIFT = 32  # the tag is the register's high word
MAP_TAG_START_BITS = _tag_fields("bram")[0]  # on chip: tag bits [16:0], the value's offset / 8
MAP_TAG_LEN_LSB = MAP_TAG_START_BITS
# on chip: tag bits [30:17], round8(value size) / 8 (values up to 131,064 bytes: a 64 KiB value, as
# bpf_xdp_load_bytes's boundary tests use, fits)
MAP_TAG_LEN_BITS = _tag_fields("bram")[1]
MAP_TAG_RDONLY_BIT = 31  # every tier: the program may not write the value
MAP_VALUE_MAX = tier_value_max("bram")
QDR_TAG_START_BITS, QDR_TAG_LEN_BITS, _ = _tag_fields("qdr")  # 22 and 9: values up to 4,088 bytes
DDR_TAG_START_BITS, DDR_TAG_LEN_BITS, _ = _tag_fields("ddr")  # 27 and 4: values up to 240 bytes


def map_tag(value_off: int, value_size: int, rdonly: bool = False, tier: str = "bram") -> int:
    """The 32-bit tag of a pointer into a value of `value_size` bytes at byte `value_off` of a tier's memory."""
    start_bits, _, grain = _tag_fields(tier)
    if value_off % grain or not 0 <= value_off < TIER_BYTES[tier] or not 0 < value_size <= tier_value_max(tier):
        raise ValueError(f"a value of {value_size} bytes at {value_off} of {tier} does not fit a map-value pointer tag")
    units = (value_size + grain - 1) // grain
    return int(rdonly) << MAP_TAG_RDONLY_BIT | units << start_bits | value_off // grain


def map_pointer(value_off: int, value_size: int, rdonly: bool = False, off: int = 0, tier: str = "bram") -> int:
    """The 64-bit pointer to byte `off` of that value (tag and address)."""
    return map_tag(value_off, value_size, rdonly, tier) << MAP_TAG_SHIFT | (TIER_BASE[tier] + value_off + off)


def split_map_tag(tag: int, tier: str = "bram") -> tuple[int, int, bool] | None:
    """(value offset, value bytes rounded to the tier's granularity, read-only) of a 32-bit tag of a pointer into
    `tier`, or None for no value (length 0)."""
    start_bits, len_bits, grain = _tag_fields(tier)
    units = (tag >> start_bits) & ((1 << len_bits) - 1)
    if not units or tag >> (MAP_TAG_RDONLY_BIT + 1):
        return None
    return (tag & ((1 << start_bits) - 1)) * grain, units * grain, bool(tag >> MAP_TAG_RDONLY_BIT & 1)


BPF_F_RDONLY_PROG = 1 << 7  # map flag: the program may not write the map (.rodata maps have it)
# map kinds the kernel makes read-only to programs whatever their flags (it sets BPF_F_RDONLY_PROG on every devmap)
PROG_RDONLY_KINDS = frozenset({"devmap", "devmap_hash"})

# the memories with per-row port rules for the lanes (execution contract, memory), as the compiler names their
# regions: region -> (name, base address, load ports, store ports)
PORT_RULES = {
    "stack": ("stack", STACK_BASE, STACK_LOAD_PORTS, STACK_STORE_PORTS),
    "pkt": ("packet buffer", PKT_BASE, PKT_LOAD_PORTS, PKT_STORE_PORTS),
    "map": ("map memory", MAP_BASE, MAP_LOAD_PORTS, MAP_STORE_PORTS),
}
# lane loads (an atomic counts) a row calling a helper may have in each memory (PORT_RULES keys): the helper reads
# through the lanes' load ports (the stack's and the packet buffer's first, the map memory's last), so a load past
# these is an access fault. A read port of the helper's own cost LUTs and block RAM; no bundled program loses a cycle
CALL_ROW_LOADS = {"stack": 0, "pkt": 0, "map": MAP_LOAD_PORTS - 1}
# helpers that write a memory through the helper unit's own port: a row calling one stores nothing else in that
# memory (execution contract), so the unit may write it in its stall cycles with no lane store to order against
HELPER_WRITE_REGIONS = {
    "map_lookup_elem": "map",  # an lru_hash hit refreshes the slot's stamp and the region's clock
    "map_update_elem": "map",
    "map_delete_elem": "map",
    "xdp_adjust_head": "pkt",  # the metadata moves with data
    "ringbuf_reserve": "map",  # the record header in the ring's region
    "ringbuf_submit": "map",  # the record header: busy bit cleared
    "ringbuf_discard": "map",  # the record header: busy bit cleared, discard bit set
    "fib_lookup": "stack",  # writes its results into the struct bpf_fib_lookup (on the stack) it was given
}

# xdp_md field offsets (u32 each), as in linux/bpf.h.
CTX_FIELDS = {
    "data": 0,
    "data_end": 4,
    "data_meta": 8,
    "ingress_ifindex": 12,
    "rx_queue_index": 16,
    "egress_ifindex": 20,
}


def ctx_field(off: int, size: int) -> bool:
    """A ctx access at byte `off` of xdp_md is one of its 32-bit fields: the only access the kernel's verifier
    allows (4 bytes, aligned); any other is an access fault (execution contract section 4)."""
    return size == 4 and off % 4 == 0 and 0 <= off < CTX_SIZE


# --- XDP actions --------------------------------------------------------------------------------------------
XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT = 0, 1, 2, 3, 4
ACTION_NAMES = {0: "ABORTED", 1: "DROP", 2: "PASS", 3: "TX", 4: "REDIRECT"}

# Why a packet was aborted by the hardware (reported beside XDP_ABORTED; the kernel never reaches these).
FAULT_NONE, FAULT_ILLEGAL, FAULT_ACCESS, FAULT_RUNAWAY, FAULT_HELPER = 0, 1, 2, 3, 4
FAULT_NAMES = {0: "none", 1: "illegal instruction", 2: "access fault", 3: "cycle limit", 4: "helper fault"}

# --- helper functions implemented in hardware (Linux helper ids) -----------------------------------------------
HELPERS = {
    1: "map_lookup_elem",
    2: "map_update_elem",
    3: "map_delete_elem",
    5: "ktime_get_ns",
    6: "trace_printk",
    7: "get_prandom_u32",
    8: "get_smp_processor_id",
    12: "tail_call",
    23: "redirect",
    25: "perf_event_output",
    28: "csum_diff",
    44: "xdp_adjust_head",
    51: "redirect_map",
    54: "xdp_adjust_meta",
    65: "xdp_adjust_tail",
    93: "spin_lock",
    94: "spin_unlock",
    160: "ktime_get_coarse_ns",
    130: "ringbuf_output",
    131: "ringbuf_reserve",
    132: "ringbuf_submit",
    133: "ringbuf_discard",
    69: "fib_lookup",
}
HELPER_IDS = {name: num for num, name in HELPERS.items()}

# Linux helpers the compiler lowers into the lanes' own loads and stores (hxdp.compiler.lowering): they never reach
# the core (a ROM that calls one is refused like any helper outside HELPERS), the sequential model runs them as calls
LOWERED_HELPERS = {
    189: "xdp_load_bytes",
    190: "xdp_store_bytes",
}
LOWERED_HELPER_IDS = {name: num for num, name in LOWERED_HELPERS.items()}

MAX_TAIL_CALL_CNT = 33  # the kernel's limit of tail calls in one packet's chain (a call past it falls through)

# --- map types ----------------------------------------------------------------------------------------------------
# Linux enum bpf_map_type (uapi/linux/bpf.h): the one table of map type numbers; every other set derives from it.
LINUX_MAP_TYPES = {
    1: "hash", 2: "array", 3: "prog_array", 4: "perf_event_array", 5: "percpu_hash", 6: "percpu_array",
    7: "stack_trace", 8: "cgroup_array", 9: "lru_hash", 10: "lru_percpu_hash", 11: "lpm_trie", 12: "array_of_maps",
    13: "hash_of_maps", 14: "devmap", 15: "sockmap", 16: "cpumap", 17: "xskmap", 18: "sockhash", 19: "cgroup_storage",
    20: "reuseport_sockarray", 21: "percpu_cgroup_storage", 22: "queue", 23: "stack", 24: "sk_storage",
    25: "devmap_hash", 26: "struct_ops", 27: "ringbuf", 28: "inode_storage", 29: "task_storage", 30: "bloom_filter",
    31: "user_ringbuf", 32: "cgrp_storage", 33: "arena",
}
LINUX_MAP_TYPE_IDS = {name: num for num, name in LINUX_MAP_TYPES.items()}
# the subset the hardware maps module implements
MAP_TYPES = {LINUX_MAP_TYPE_IDS[name]: name for name in (
    "hash", "array", "percpu_hash", "percpu_array", "lru_hash", "lpm_trie", "devmap", "devmap_hash", "cpumap",
    "xskmap", "perf_event_array", "ringbuf", "prog_array", "array_of_maps", "hash_of_maps")}
MAP_TYPE_IDS = {name: num for num, name in MAP_TYPES.items()}
# the fields of a map configuration table entry (sephirot_mapcfg.v, 256 bits; bits 15:8 nonzero: the entry is valid):
# (name, lowest bit, bits); tier is the index in TIERS
MCFG_FIELDS = (("type", 0, 8), ("key_size", 16, 16), ("value_size", 32, 16), ("max_entries", 48, 32),
               ("offset", 80, 32), ("slots", 112, 32), ("slot_size", 144, 16), ("key_offset", 160, 16),
               ("value_offset", 176, 16), ("data_offset", 192, 16), ("rdonly", 208, 1), ("tier", 209, 2))
MAPS_MAX = 32  # maps the hardware configuration table holds (map ids 0..MAPS_MAX-1): Katran has 17 and an inner map
MAP_KEY_MAX_HW = 64  # longest key the hardware map FSM compares (bytes)
# longest slot the map FSM writes whole (bytes): an update's slot image (a hash or LPM slot's value ends by it) and a
# delete's slot; a map call beyond either limit is a helper fault on every engine
MAP_SLOT_WRITE_MAX = 80
# where redirect_map sends a frame (RunResult.host, the RTL's redirect kind): a port (devmap), the host queue of a
# CPU (cpumap) or the host queue an AF_XDP socket is bound to (xskmap); docs/helpers.md
REDIRECT_PORT, REDIRECT_CPU, REDIRECT_XSK, REDIRECT_BROADCAST = 0, 1, 2, 3
# BPF_F_BROADCAST: the devmap's ports as a mask (bit i: ifindex i + 1, the board's ports are ifindex 1..); devmap
# entries naming a higher ifindex name no port of the NIC and get no copy. Bit 31: BPF_F_EXCLUDE_INGRESS
BCAST_PORTS = 31
BCAST_EXCLUDE_INGRESS = 1 << 31
CPUMAP_QSIZE_MAX = 16384  # the kernel's sanity limit on a cpumap entry's qsize (larger: -EOVERFLOW)
MAP_WINDOW_BYTES = 32  # the map FSM reads a slot through a window this wide, one window per cycle (8-byte aligned)

# --- the FIB of bpf_fib_lookup (hxdp/fib, docs/maps.md "FIB"): a region of its own at the top of map memory, placed
# only for programs that call fib_lookup (their maps must end below it). Sections of fixed capacity, entries 8-byte
# aligned so that the helper reads one route, one neighbour or two interfaces per map window
FIB_IFACES_MAX = 32
FIB_ROUTES_MAX = 256
FIB_NEIGH_MAX = 256
FIB_HEADER_BYTES = 32  # u32 magic, u32 interfaces, u32 routes, u32 neighbours, 16 bytes 0
FIB_IFACE_BYTES = 16
FIB_ROUTE_BYTES = 32
FIB_GW_BYTES = 16  # the gateway of route i, read only for the route that wins
FIB_NEIGH_BYTES = 32
FIB_IFACES_AT = FIB_HEADER_BYTES
FIB_ROUTES_AT = FIB_IFACES_AT + FIB_IFACES_MAX * FIB_IFACE_BYTES
FIB_GWS_AT = FIB_ROUTES_AT + FIB_ROUTES_MAX * FIB_ROUTE_BYTES
FIB_NEIGH_AT = FIB_GWS_AT + FIB_ROUTES_MAX * FIB_GW_BYTES
FIB_BYTES = (FIB_NEIGH_AT + FIB_NEIGH_MAX * FIB_NEIGH_BYTES + 63) // 64 * 64
FIB_OFFSET = MAP_MEM_BYTES - FIB_BYTES
FIB_MAGIC = 0x42494678  # "xFIB"

# --- cycle model (docs/execution_contract.md, section "Cycles") --------------------------------------------------
CYCLES_PER_ROW = 1
TAKEN_BRANCH_PENALTY = 1  # the row fetched behind a taken branch is discarded (not for a jump to the next row)
CONDITIONAL_EXIT_PENALTY = 1  # an exit preceded in its row by a branch lane is not seen at fetch
DIV_BITS_PER_CYCLE = 4  # the core's divider (sephirot_div.v) finds this many quotient bits per cycle
DIV_EXTRA_CYCLES = 64 // DIV_BITS_PER_CYCLE  # a row stalls this long per div/mod lane (one divider, lane order)
INPUT_BYTES_PER_CYCLE = 32  # the input bus into the packet buffers: a 32-byte word a cycle, a frame at a time

# --- AXI-Lite register map (../shared/design.md section 6 plus extensions) -------------------------------------
AXI_IMEM_BASE = 0x8000_0000  # + (row << 8); lane k low word at +8k, high word at +8k+4; +0xFF commit
AXI_IMEM_COMMIT = 0xFF
# rows 256 and above: the original window's row field is 8 bits (row << 8 would run into AXI_MAPS_BASE), so every
# row 0..IMEM_ROWS-1 is also at AXI_IMEM_EXT_BASE + (row << 8) (same words and commit), a window of its own
AXI_IMEM_EXT_BASE = 0x8010_0000
AXI_IMEM_WINDOW_ROWS = 1 << 8  # rows the original window reaches


def imem_row_base(row: int) -> int:
    """Address of instruction memory row `row` (its lane 0 low word): the original window for rows below 256, the
    extended one above."""
    return (AXI_IMEM_BASE if row < AXI_IMEM_WINDOW_ROWS else AXI_IMEM_EXT_BASE) + (row << 8)


AXI_MAPS_BASE = 0x8001_0000
AXI_MAPS_COMMIT = 0xFF
AXI_CNT_RX = 0x8002_0002
AXI_CNT_TX = 0x8002_0003
AXI_CNT_DROP = 0x8002_0004
# extensions of the board (sephirot/rtl/sephirot_axil.v, docs/board.md); not part of the generated header
AXI_MAPS_LINE_ADDR = 0x8001_0010  # line read by AXI_MAPS_BASE + 4w; a commit sets it to the committed line
AXI_CNT_ACTION_BASE = 0x8002_0010  # + 4 * action (ABORTED..REDIRECT)
AXI_CNT_OTHER = 0x8002_0024  # actions above REDIRECT
AXI_CNT_FAULTS = 0x8002_0028  # packets that ended with a hardware fault
AXI_CNT_CYCLES_LO = 0x8002_0030  # 64-bit clock cycle counter; reading the low word latches the high word
AXI_CNT_CYCLES_HI = 0x8002_0034
AXI_CNT_CLEAR = 0x8002_0040  # write: clear every counter
AXI_CTRL = 0x8003_0000  # bit 0: hold the input at a packet boundary
AXI_CTRL_HOLD = 1
AXI_STATUS = 0x8003_0004  # bit 0: held (hold set and no packet in the core); bit 1: hold set
AXI_STATUS_HELD = 1
AXI_ROWS = 0x8003_0008  # rows of the loaded program (executing outside them is an illegal-instruction fault)
AXI_ID = 0x8003_000C  # reads AXI_ID_VALUE on this project's bitstream and simulated board
AXI_ID_VALUE = 0x6858_4450  # "hXDP"
AXI_INFLIGHT = 0x8003_0010  # packets accepted by the core and not finished
AXI_IMEM_CAPACITY = 0x8003_0014  # instruction memory rows
AXI_MAP_LINES = 0x8003_0018  # map memory lines of 16 bytes
AXI_CORES = 0x8003_001C  # Sephirot cores the board runs its program on (1..CORES_MAX; read-only)
AXI_LINE_BYTES = 16
AXI_MCFG_BASE = 0x8001_1000  # + 4w (w = 0..7): map configuration entry (256 bits, sephirot_mapcfg.v) staging words
AXI_MCFG_ADDR = 0x8001_1020  # map id whose entry AXI_MCFG_BASE reads return
AXI_MCFG_COMMIT = 0x8001_10FF  # write N: commit the staging entry as map id N's configuration
# trace_printk FIFO (sephirot_tracefifo.v): one record per call, read at the head, popped by the host
PRINTK_FMT_MAX = 64  # format bytes the helper reads (min(size, this)); the record keeps those before the first NUL
PRINTK_FIFO_DEPTH = 16  # records; a call finding the FIFO full is dropped and counted
AXI_TRACE_COUNT = 0x8004_0000  # records in the FIFO
AXI_TRACE_DROPPED = 0x8004_0004  # records dropped because the FIFO was full (cleared by AXI_CNT_CLEAR)
AXI_TRACE_POP = 0x8004_0008  # write: drop the head record (no-op when empty)
AXI_TRACE_DEPTH = 0x8004_000C  # PRINTK_FIFO_DEPTH
AXI_TRACE_FMT_MAX = 0x8004_0010  # PRINTK_FMT_MAX
AXI_TRACE_HEAD = 0x8004_0100  # + 4w: word w of the head record (docs/board.md)
AXI_TRACE_WORDS = 2 + PRINTK_FMT_MAX // 4 + 6  # length, packet number, format words, r3 r4 r5 (lo, hi)
# host queues (sephirot_hostq.v): the NIC's DMA path to the host, HOSTQ_PER_KIND queues of each kind: queue q < 8 is
# CPU q's (cpumap), queue 8 + i the AF_XDP queue i's (xskmap). A frame redirected into a queue the board lacks, or
# into a full queue (frames delivered - frames the host took >= the queue's size: a cpumap entry's qsize, an xskmap
# entry's ring size), is dropped and counted. Counters and queues are cleared by AXI_CNT_CLEAR.
HOSTQ_PER_KIND = 8
XSK_RING_FRAMES = 2048  # receive ring of an AF_XDP socket as the host tools bind it (the xskmap slot's second word)
AXI_HOSTQ_PER_KIND = 0x8005_0000  # reads HOSTQ_PER_KIND
AXI_HOSTQ_DELIVERED = 0x8005_0004  # frames delivered into a host queue (every queue)
AXI_HOSTQ_FULL = 0x8005_0008  # frames dropped because their queue was full
AXI_HOSTQ_NOQUEUE = 0x8005_000C  # frames dropped because the board has no such queue (CPU or queue id >= 8)
AXI_HOSTQ_BASE = 0x8005_0100  # + 16 q: +0 frames delivered, +4 frames the host took, +8 dropped (full), +12 size
AXI_HOSTQ_STRIDE = 16
# events to the host (sephirot_events.v in the helper unit, sephirot_eventring.v on the board, docs/helpers.md and
# docs/board.md): the records of perf_event_output, ringbuf_output and ringbuf_submit
EVENT_PACKET_MAX = 16  # records one packet may send: past them perf_event_output is -ENOSPC, ringbuf_output
# -EAGAIN (the kernel's full buffer) and a submitted record is dropped (submit cannot fail)
EVENT_DATA_MAX = PKT_MAX_LEN + 256  # sample bytes a record holds (perf: data and packet bytes; ringbuf: the record):
# a whole frame behind a header of up to 256 bytes, what packet-capture programs send
EVENT_RECORD_WORDS = EVENT_DATA_MAX // 8 + 1  # 64-bit words of a record: the program's bytes from word 0, a perf
# record's packet bytes from the next whole word (hence the one word more)
EVENT_BYTES_PER_CYCLE = 8  # the event unit copies a sample through the helper memory port, 8 bytes a cycle
EVENT_FIFO_DEPTH = 16  # records the board's event ring holds for the host; a record finding it full is dropped
RINGBUF_HEADER = 8  # bytes in front of every ring record (u32 length | busy/discard bits, u32 map id), as Linux's
RINGBUF_BUSY, RINGBUF_DISCARD = 1 << 31, 1 << 30  # the header's length bits (Linux's BPF_RINGBUF_*_BIT)
AXI_EVENT_COUNT = 0x8006_0000  # records in the event ring
AXI_EVENT_DROPPED = 0x8006_0004  # records dropped because the event ring was full (cleared by AXI_CNT_CLEAR)
AXI_EVENT_POP = 0x8006_0008  # write: drop the head record (no-op when empty)
AXI_EVENT_DEPTH = 0x8006_000C  # EVENT_FIFO_DEPTH
AXI_EVENT_DATA_MAX = 0x8006_0010  # EVENT_DATA_MAX
AXI_EVENT_HEAD = 0x8006_0100  # + 4w: word w of the head record (docs/board.md)
AXI_EVENT_WORDS = 4 + 2 * EVENT_RECORD_WORDS  # kind and map, cpu, size and ctx length, packet number, the words

# --- several cores (docs/execution_contract.md "Several cores"; the models and the RTL follow it) -----------------
CORES_MAX = 8  # Sephirot cores running one ROM, sharing the map memory (--cores N, 1..CORES_MAX)
# the NIC's possible CPUs: slots of a PERF_EVENT_ARRAY sized 0 in the object, as libbpf sizes it with the possible
# CPUs (a build of N cores writes slots 0..N-1 with BPF_F_CURRENT_CPU: core k's is slot k)
EVENT_CPUS = CORES_MAX
OUTPUT_BYTES_PER_CYCLE = 32  # the reorder stage's output: one 32-byte word a cycle, frames in arrival order
# helpers whose row does not take the map grant: they read and write only the core's own state (registers, packet,
# clock, generator); every other helper may read or write map memory or a unit the cores share, and takes it
GRANT_FREE_HELPERS = frozenset({"ktime_get_ns", "ktime_get_coarse_ns", "get_prandom_u32", "get_smp_processor_id",
                                "redirect", "xdp_adjust_head", "xdp_adjust_meta", "xdp_adjust_tail"})
# helpers that take the map grant only when a buffer they read is in GRANT_REGIONS: the registers holding the buffers
GRANT_BUFFER_HELPERS = {"csum_diff": (1, 3), "trace_printk": (1,)}
# helpers whose row takes the map grant shared (docs/execution_contract.md section 8): they only read the map memory;
# map_lookup_elem is shared too on a map in the map memory whose kind is not in LOOKUP_WRITE_KINDS
GRANT_SHARED_HELPERS = frozenset({"redirect_map", "tail_call", "fib_lookup", "csum_diff", "trace_printk"})
# the read-only bit of a map-value pointer (bit 63: the tag's MAP_TAG_RDONLY_BIT, every tier)
MAP_RDONLY_PTR_BIT = MAP_TAG_SHIFT + MAP_TAG_RDONLY_BIT
# the argument registers of the helpers of GRANT_SHARED_HELPERS (and map_lookup_elem) that point to bytes the helper
# reads over several cycles (a key, a buffer): a call with one in GRANT_REGIONS, not read-only (MAP_RDONLY_PTR_BIT),
# asks "apart", kept from a writer
GRANT_APART_ARGS = {"map_lookup_elem": (2,), "csum_diff": (1, 3), "trace_printk": (1,)}
# map kinds whose map_lookup_elem writes (an LRU hit refreshes the slot's stamp and the region's clock): exclusive
LOOKUP_WRITE_KINDS = frozenset({"lru_hash"})
# regions (addr[31:28]) whose lane accesses take the map grant: the map memory and the off-chip tiers
GRANT_REGIONS = frozenset(r for t in TIER_BASE for r in range(TIER_BASE[t] >> REGION_SHIFT,
                                                             (TIER_BASE[t] + TIER_BYTES[t] - 1 >> REGION_SHIFT) + 1))
# per-CPU arrays on several cores in the RTL (sephirot_percpu.v): core k's copy of a per-CPU byte at its address +
# k * PERCPU_STRIDE in the map memory (the maps then fit below the stride); at most PERCPU_RANGES per-CPU arrays
PERCPU_STRIDE = MAP_MEM_BYTES // CORES_MAX
PERCPU_RANGES = 4
# map kinds whose region has such a copy per core (the models swap the copies in, sephirot_percpu.v translates): a
# per-CPU array, and a ring buffer's region, where each core writes the records it reserved (its records leave
# through its event unit, in the order their rows ran); a lane's write inside one is to the core's own copy
PERCPU_COPY_KINDS = frozenset({"percpu_array", "ringbuf"})
# packet buffers of each core's packet buffer with several cores (one core: 3): a finished frame waits in its core's
# buffers for its turn at the reorder stage while the core runs the next packets (8 fill the block RAM of 3)
PKT_BUFS_SEVERAL = 8
# packet buffers of the one core's packet buffer (sephirot_pktbuf.v, used in turn): the input fills the next ones
# while the core runs a packet, and takes a frame into a buffer once the frame three before it has left the output
PKT_BUFS_ONE = 3
# block-RAM banks of a packet buffer, 8-byte words (word w in bank w % 8): a 32-byte input word takes half of them, and
# two stores of a row into one bank with different words take two cycles (contract section 6; sephirot_pktbuf.v's NB)
PKT_BANKS = 8
