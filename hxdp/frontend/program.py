"""What the ELF loader hands to the models and the compiler: instructions, maps, and where they came from."""

from __future__ import annotations

from dataclasses import dataclass, field

from hxdp.isa.insn import Insn


@dataclass
class MapDef:
    """One map of the object. Global data sections (.data/.rodata/.bss) are single-entry array maps."""

    name: str
    type: int  # Linux enum bpf_map_type
    key_size: int
    value_size: int
    max_entries: int
    flags: int = 0
    initial: bytes | None = None  # initial value of a global-data map (entry 0)
    section: str = ".maps"  # ".maps", "maps", ".data", ".rodata", ".bss"
    inner: MapDef | None = None
    lock_offset: int | None = None  # byte offset of a struct bpf_spin_lock in the value (BTF), if it holds one
    prog_entries: dict[int, str] | None = None  # a PROG_ARRAY the loader fills: index -> program name
    tier: str | None = None  # the map memory the user placed it in (params.TIERS); None: the compiler chooses
    # a map of maps (ARRAY_OF_MAPS, HASH_OF_MAPS): the inner maps set in its slots at load, key -> inner map name
    # (the object's static `.values = {...}`, or the maps the loader creates from the template `inner`)
    inner_entries: dict[bytes, str] | None = None


@dataclass
class Program:
    """One XDP program, linked: bpf-to-bpf callees are appended after the entry function, as libbpf does.

    Map references are resolved to indices into `maps`:
      lddw rX, map        -> Insn(0x18, src=PSEUDO_MAP_FD,    imm=map index), next slot imm 0
      lddw rX, map + off  -> Insn(0x18, src=PSEUDO_MAP_VALUE, imm=map index), next slot imm = off
    Local calls keep src=CALL_LOCAL with imm = relative slot offset to the callee (target = pc + 1 + imm).
    """

    name: str  # function symbol
    section: str  # ELF section name, e.g. "xdp"
    insns: list[Insn]
    maps: list[MapDef] = field(default_factory=list)
    license: str = ""
    source: str = ""  # path of the object, for messages
    functions: dict[int, str] = field(default_factory=dict)  # slot index -> function name (entry at 0)
    unused_maps: list[MapDef] = field(default_factory=list)  # maps of the object the program never references
    # the object's other XDP programs, resident beside this one for its tail calls (when a program references a
    # PROG_ARRAY map): their map indices number this program's `maps` too
    resident: list[Program] = field(default_factory=list)

    def map_index(self, name: str) -> int:
        for i, m in enumerate(self.maps):
            if m.name == name:
                return i
        raise KeyError(name)
