"""Load clang-compiled XDP objects (pyelftools): programs, maps, global data, relocations, bpf-to-bpf calls."""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass, field

from elftools.common.exceptions import ELFError as _PyElfError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from hxdp import params
from hxdp.errors import ElfError
from hxdp.frontend.btf import KIND_ARRAY, KIND_PTR, KIND_STRUCT, KIND_UNION, Btf
from hxdp.frontend.program import MapDef, Program
from hxdp.frontend.sizing import add_inner_maps, apply_sizes, check_inner, drop_unused
from hxdp.isa import table as T
from hxdp.isa.insn import Insn

EM_BPF = 247
SHF_EXECINSTR = 0x4
SHN_UNDEF = 0

# Relocation types of the BPF ELF ABI (llvm/BinaryFormat/ELFRelocs/BPF.def).
R_BPF_NONE, R_BPF_64_64, R_BPF_64_ABS64, R_BPF_64_ABS32, R_BPF_64_NODYLD32, R_BPF_64_32 = 0, 1, 2, 3, 4, 10
RELOC_NAMES = {0: "R_BPF_NONE", 1: "R_BPF_64_64", 2: "R_BPF_64_ABS64", 3: "R_BPF_64_ABS32", 4: "R_BPF_64_NODYLD32",
               10: "R_BPF_64_32"}

# map types are Linux enum bpf_map_type (params.LINUX_MAP_TYPES); the hardware implements params.MAP_TYPES
MAP_TYPE_ARRAY = params.LINUX_MAP_TYPE_IDS["array"]
BPF_F_RDONLY_PROG = 0x80
BPF_F_MMAPABLE = 0x400
GLOBAL_DATA_PREFIXES = (".data", ".rodata", ".bss")
MAX_GLOBAL_DATA = 1 << 26  # bytes of one global data section (the kernel's array value limit is lower still)
LEGACY_MAP_DEF_SIZE = 20  # struct bpf_map_def: type, key_size, value_size, max_entries, map_flags (u32 each)
_BTF_MAP_INT_FIELDS = ("type", "max_entries", "map_flags", "key_size", "value_size", "numa_node", "pinning",
                       "map_extra")


@dataclass
class _Sym:
    name: str
    value: int
    size: int
    type: str  # STT_FUNC, STT_OBJECT, STT_SECTION, STT_NOTYPE, ...
    bind: str
    shndx: int


@dataclass
class _Section:
    index: int
    name: str
    type: str
    flags: int
    data: bytes
    size: int
    relocs: dict[int, tuple[int, _Sym]] = field(default_factory=dict)  # offset -> (type, symbol)

    @property
    def is_code(self) -> bool:
        return bool(self.flags & SHF_EXECINSTR) and self.type == "SHT_PROGBITS" and self.size > 0


@dataclass
class _Func:
    section: _Section
    name: str
    start: int  # byte offset in the section
    size: int  # bytes

    @property
    def key(self) -> tuple[int, int]:
        return (self.section.index, self.start)


def _is_global_data(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in GLOBAL_DATA_PREFIXES)


def libbpf_data_map_name(obj_path: str, section: str) -> str:
    """The name libbpf (and so the kernel, bpftool) gives the map of a global data section: "prog.rodata"."""
    obj_name = os.path.basename(obj_path).split(".", 1)[0]
    obj_len = 16  # BPF_OBJ_NAME_LEN
    sfx_len = min(max(7, len(section)), obj_len - 1)
    pfx_len = 0 if "." in section[1:] else min(obj_len - sfx_len - 1, len(obj_name))
    name = obj_name[:pfx_len] + section[:sfx_len]
    return "".join(c if c.isalnum() or c in "_." else "_" for c in name)


def _is_xdp_section(name: str) -> bool:
    return name.startswith("xdp")


def attach_kind(section: str) -> str | None:
    """`cpumap` or `devmap` for the sections libbpf attaches behind a map entry (SEC("xdp/cpumap"),
    SEC("xdp.frags/devmap"), ...), None for a program of the NIC's own input."""
    for kind in ("cpumap", "devmap"):
        if section in (f"xdp/{kind}", f"xdp.frags/{kind}") or section.startswith((f"xdp/{kind}/",
                                                                                  f"xdp.frags/{kind}/")):
            return kind
    return None


def not_on_nic(section: str, name: str) -> str | None:
    """Why a program of this section does not run on the NIC, one line (None when it does)."""
    kind = attach_kind(section)
    if kind == "cpumap":
        return (f"program {name} (SEC(\"{section}\")) runs on the host after the cpumap hand-over, not on the NIC: "
                "load it on the host with the cpumap entry")
    if kind == "devmap":
        return (f"not supported yet: devmap egress programs (program {name}, SEC(\"{section}\")), because the NIC "
                "runs the one program of its instruction memory and has no second program for the frames leaving "
                "through a devmap entry")
    return None


class BpfObject:
    """A parsed BPF ELF object: sections, symbols, functions and maps (programs are linked on demand)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise ElfError(f"{path}: cannot read: {exc.strerror}") from None
        self._check_header(data)
        try:
            self._load(ELFFile(io.BytesIO(data)), len(data))
        except ElfError:
            raise
        except (_PyElfError, struct.error, ValueError, KeyError, IndexError, ArithmeticError, AttributeError,
                TypeError) as exc:
            raise ElfError(f"{self.path}: malformed ELF: {exc}") from None

    # --- parsing -------------------------------------------------------------------------------------------
    def _err(self, msg: str) -> ElfError:
        return ElfError(f"{self.path}: {msg}")

    def _check_header(self, data: bytes) -> None:
        if len(data) < 4 or data[:4] != b"\x7fELF":
            raise self._err("not an ELF file")
        if len(data) < 64:
            raise self._err(f"truncated ELF header ({len(data)} bytes)")
        if data[4] != 2:
            raise self._err("not a 64-bit ELF (BPF objects are ELF64)")
        if data[5] != 1:
            raise self._err("big-endian ELF (bpfeb) is not supported, compile with -target bpf or bpfel")
        machine = struct.unpack_from("<H", data, 18)[0]
        if machine != EM_BPF:
            raise self._err(f"not a BPF object (e_machine {machine}, expected EM_BPF {EM_BPF})")
        shoff = struct.unpack_from("<Q", data, 40)[0]
        shentsize, shnum = struct.unpack_from("<HH", data, 58)
        if shoff + shentsize * shnum > len(data):
            raise self._err(f"truncated file: section headers end at byte {shoff + shentsize * shnum}, "
                            f"file has {len(data)}")

    def _load(self, elf: ELFFile, file_size: int) -> None:
        self.sections: list[_Section] = []
        for idx, sec in enumerate(elf.iter_sections()):
            stype = sec["sh_type"]
            if stype != "SHT_NOBITS" and sec["sh_offset"] + sec["sh_size"] > file_size:
                raise self._err(f"truncated file: section {sec.name} ends at byte {sec['sh_offset'] + sec['sh_size']}, "
                                f"file has {file_size}")
            data = b"" if stype == "SHT_NOBITS" else sec.data()
            self.sections.append(_Section(idx, sec.name, stype, sec["sh_flags"], data, sec["sh_size"]))
        self.by_name = {s.name: s for s in self.sections}
        self.symbols: list[_Sym] = []
        symtab = elf.get_section_by_name(".symtab")
        if symtab is not None:
            if not isinstance(symtab, SymbolTableSection):
                raise self._err("section .symtab is not a symbol table")
            for s in symtab.iter_symbols():
                shndx = s["st_shndx"]
                self.symbols.append(_Sym(s.name, s["st_value"], s["st_size"], s["st_info"]["type"],
                                         s["st_info"]["bind"], shndx if isinstance(shndx, int) else -1))
        for sec in elf.iter_sections():
            if sec["sh_type"] == "SHT_RELA" and self.sections[sec["sh_info"]].is_code:
                raise self._err(f"unsupported RELA relocation section {sec.name} (BPF objects use REL)")
            if sec["sh_type"] != "SHT_REL":
                continue
            target = self.sections[sec["sh_info"]]
            for rel in sec.iter_relocations():
                sym = self.symbols[rel["r_info_sym"]] if self.symbols else None
                rtype = rel["r_info_type"]
                if target.is_code:
                    off = rel["r_offset"]
                    if sym is None:
                        raise self._err(f"relocation in {target.name} without a symbol table")
                    if off % 8 or off >= target.size:
                        raise self._err(f"relocation {RELOC_NAMES.get(rtype, str(rtype))} at {target.name}+0x{off:x} "
                                        "is not on an instruction of the section")
                    target.relocs[off] = (rtype, sym)
                elif _is_global_data(target.name) and rtype != R_BPF_NONE:
                    raise self._err(f"unsupported relocation {RELOC_NAMES.get(rtype, rtype)} in "
                                    f"{target.name}+0x{rel['r_offset']:x} (pointer initialisers in global data)")
                elif target.name == ".maps" and rtype != R_BPF_NONE and sym is not None:
                    target.relocs[rel["r_offset"]] = (rtype, sym)  # a map of maps' `.values = {...}`
                # relocations in .BTF, .BTF.ext and debug sections are ignored
        self.license = ""
        if "license" in self.by_name:
            self.license = self.by_name["license"].data.split(b"\0", 1)[0].decode("latin-1")
        self._btf: Btf | None = None
        self.functions = self._find_functions()
        self.maps: list[MapDef] = []
        self._map_at: dict[tuple[int, int], int] = {}  # (section index, offset) -> map index
        self._data_map: dict[int, int] = {}  # global data section index -> map index
        self._values_off: dict[str, int] = {}  # map of maps -> byte offset of its `values` member
        self._load_maps()

    def _find_functions(self) -> dict[int, list[_Func]]:
        funcs: dict[int, list[_Func]] = {}
        for sec in self.sections:
            if not sec.is_code:
                continue
            syms = sorted({(s.value, s.name): s for s in self.symbols
                           if s.shndx == sec.index and s.type == "STT_FUNC"}.values(), key=lambda s: s.value)
            if not syms:  # hand-assembled code without symbols: the whole section is one function
                funcs[sec.index] = [_Func(sec, sec.name, 0, sec.size)]
                continue
            out = []
            for i, s in enumerate(syms):
                end = syms[i + 1].value if i + 1 < len(syms) else sec.size
                size = s.size or (end - s.value)
                if s.value % 8 or size % 8 or s.value + size > sec.size:
                    raise self._err(f"function {s.name} in {sec.name} is not made of whole instructions")
                out.append(_Func(sec, s.name, s.value, size))
            funcs[sec.index] = out
        return funcs

    @property
    def btf(self) -> Btf:
        if self._btf is None:
            if ".BTF" not in self.by_name:
                raise self._err("BTF-defined maps (.maps) need the .BTF section: compile with -g")
            self._btf = Btf(self.by_name[".BTF"].data, f"{self.path}: .BTF")
        return self._btf

    def _map_symbols(self, sec: _Section) -> list[_Sym]:
        syms = [s for s in self.symbols if s.shndx == sec.index and s.type in ("STT_OBJECT", "STT_NOTYPE") and s.name]
        return sorted(syms, key=lambda s: s.value)

    def _add_map(self, m: MapDef, sec: _Section | None, offset: int = 0) -> None:
        if m.type not in params.LINUX_MAP_TYPES:
            raise self._err(f"map '{m.name}': unknown map type {m.type}")
        if sec is not None:
            self._map_at[(sec.index, offset)] = len(self.maps)
        self.maps.append(m)

    def _load_maps(self) -> None:
        legacy = self.by_name.get("maps")
        if legacy is not None and legacy.size:
            syms = self._map_symbols(legacy)
            if not syms:
                raise self._err("section maps has no map symbols")
            def_size = legacy.size // len(syms)
            if def_size < LEGACY_MAP_DEF_SIZE:
                raise self._err(f"section maps: map definitions of {def_size} bytes, need at least "
                                f"{LEGACY_MAP_DEF_SIZE} (struct bpf_map_def)")
            for s in syms:
                if s.value + LEGACY_MAP_DEF_SIZE > len(legacy.data):
                    raise self._err(f"section maps: map '{s.name}' runs past the end of the section")
                mtype, ksz, vsz, maxe, flags = struct.unpack_from("<5I", legacy.data, s.value)
                self._add_map(MapDef(s.name, mtype, ksz, vsz, maxe, flags, section="maps"), legacy, s.value)
        btf_maps = self.by_name.get(".maps")
        if btf_maps is not None and btf_maps.size:
            for s in self._map_symbols(btf_maps):
                var = self.btf.vars.get(s.name)
                if var is None:
                    raise self._err(f"map '{s.name}' in .maps has no BTF variable")
                self._add_map(self._btf_map_def(s.name, var.size_or_type), btf_maps, s.value)
            self._static_slots(btf_maps)
        for sec in self.sections:
            if _is_global_data(sec.name) and sec.size > 0 and sec.flags & 0x2:  # SHF_ALLOC
                if sec.size > MAX_GLOBAL_DATA:
                    raise self._err(f"section {sec.name} is {sec.size} bytes, more than {MAX_GLOBAL_DATA}")
                flags = BPF_F_MMAPABLE | (BPF_F_RDONLY_PROG if sec.name.startswith(".rodata") else 0)
                initial = sec.data if sec.type != "SHT_NOBITS" else bytes(sec.size)
                self._data_map[sec.index] = len(self.maps)
                name = libbpf_data_map_name(self.path, sec.name)
                self._add_map(MapDef(name, MAP_TYPE_ARRAY, 4, sec.size, 1, flags, initial=bytes(initial),
                                     section=sec.name), None)

    def _btf_map_def(self, name: str, type_id: int, depth: int = 0) -> MapDef:
        if depth > 1:
            raise self._err(f"map '{name}': maps nested more than one level (map-in-map of map-in-map)")
        btf = self.btf
        st = btf.skip_mods(type_id)
        if st.kind not in (KIND_STRUCT, KIND_UNION):
            raise self._err(f"map '{name}': BTF definition is not a struct")
        vals: dict[str, int] = {}
        key_type = value_type = None
        lock_offset: int | None = None
        inner: MapDef | None = None
        for mname, mtype, bit_off in st.members:
            t = btf.skip_mods(mtype)
            if mname in _BTF_MAP_INT_FIELDS:
                arr = btf.skip_mods(t.size_or_type) if t.kind == KIND_PTR else None
                if arr is None or arr.kind != KIND_ARRAY:
                    raise self._err(f"map '{name}': field {mname} is not an __uint() (pointer to array)")
                vals[mname] = arr.nelems
            elif mname in ("key", "value"):
                if t.kind != KIND_PTR:
                    raise self._err(f"map '{name}': field {mname} is not a __type() (pointer)")
                size = btf.size_of(t.size_or_type)
                if mname == "key":
                    key_type = size
                else:
                    value_type = size
                    lock_offset = self._spin_lock_offset(t.size_or_type)
            elif mname == "values":
                if depth == 0:
                    self._values_off[name] = bit_off // 8
                arr = t
                if arr.kind != KIND_ARRAY:
                    raise self._err(f"map '{name}': field values is not an __array()")
                elem = btf.skip_mods(arr.elem_type)
                if elem.kind == KIND_PTR:
                    target = btf.skip_mods(elem.size_or_type)
                    if target.kind in (KIND_STRUCT, KIND_UNION):
                        inner = self._btf_map_def(f"{name}.inner", target.id, depth + 1)
            else:
                raise self._err(f"map '{name}': unknown BTF map field '{mname}'")
        for what, from_type in (("key", key_type), ("value", value_type)):
            given = vals.get(f"{what}_size")
            if from_type is not None and given is not None and from_type != given:
                raise self._err(f"map '{name}': {what}_size {given} disagrees with __type({what}) size {from_type}")
            vals[f"{what}_size"] = from_type if from_type is not None else (given or 0)
        if inner is not None and vals["value_size"] == 0:
            vals["value_size"] = 4  # map-in-map values are map ids
        if "type" not in vals:
            raise self._err(f"map '{name}': no map type")
        return MapDef(name, vals["type"], vals["key_size"], vals["value_size"], vals.get("max_entries", 0),
                      vals.get("map_flags", 0), section=".maps", inner=inner, lock_offset=lock_offset)

    def _static_slots(self, sec: _Section) -> None:
        """The inner maps a map of maps' `.values = { [i] = &inner }` sets (a relocation per slot, as libbpf reads
        them): MapDef.inner_entries of the outer map, key i."""
        syms = self._map_symbols(sec)
        for off, (_rtype, target) in sorted(sec.relocs.items()):
            outer = next((s for s in reversed(syms) if s.value <= off), None)
            if outer is None or outer.name not in self._values_off:
                raise self._err(f".maps+0x{off:x}: a relocation outside the `values` of a map of maps")
            m = self.maps[self._map_at[(sec.index, outer.value)]]
            if m.inner is None:  # a PROG_ARRAY's `.values` (programs): its loader's business, as before
                continue
            slot, rest = divmod(off - outer.value - self._values_off[outer.name], 8)
            if m.inner is None or rest or slot < 0:
                raise self._err(f"map '{m.name}': `.values` initialiser at .maps+0x{off:x} is not a slot of a map of "
                                "maps")
            idx = self._map_at.get((target.shndx, target.value))
            if idx is None:
                raise self._err(f"map '{m.name}': slot {slot} names '{target.name}', which is not a map in .maps")
            if m.key_size != 4:
                raise self._err(f"map '{m.name}': `.values` initialises a map with {m.key_size}-byte keys (libbpf "
                                "needs 4-byte keys, the slot index)")
            if slot >= m.max_entries:
                raise self._err(f"map '{m.name}': `.values` sets slot {slot}, max_entries is {m.max_entries}")
            check_inner(m, self.maps[idx], self._err)
            m.inner_entries = {**(m.inner_entries or {}), slot.to_bytes(4, "little"): self.maps[idx].name}

    def _spin_lock_offset(self, type_id: int) -> int | None:
        """Byte offset of a top-level `struct bpf_spin_lock` member of a map value (the kernel allows no deeper)."""
        st = self.btf.skip_mods(type_id)
        if st.kind not in (KIND_STRUCT, KIND_UNION):
            return None
        for _name, mtype, bit_off in st.members:
            m = self.btf.skip_mods(mtype)
            if m.kind == KIND_STRUCT and m.name == "bpf_spin_lock":
                return bit_off // 8
        return None

    # --- programs ------------------------------------------------------------------------------------------
    def all_programs(self) -> list[_Func]:
        """Entry points: the functions of every executable section except .text (subprograms live there)."""
        return [f for idx, fs in self.functions.items() if self.sections[idx].name != ".text" for f in fs]

    def xdp_programs(self) -> list[_Func]:
        """The NIC's candidate programs: xdp* sections but those run behind a cpumap or devmap entry."""
        progs = [f for f in self.all_programs() if attach_kind(f.section.name) is None]
        xdp = [f for f in progs if _is_xdp_section(f.section.name)]
        return xdp or progs  # no xdp* section: legacy names such as "prog"

    def behind_maps(self) -> list[_Func]:
        """Programs of the object that run behind a cpumap or devmap entry (attach_kind), not as the NIC's."""
        return [f for f in self.all_programs() if attach_kind(f.section.name) is not None]

    def select(self, section: str | None, prog: str | None) -> _Func:
        if section is not None:
            sec = self.by_name.get(section)
            if sec is None:
                names = ", ".join(sorted({f.section.name for f in self.all_programs()})) or "none"
                raise self._err(f"no section '{section}' (program sections: {names})")
            if not sec.is_code:
                raise self._err(f"section '{section}' is not executable code")
            cands = list(self.functions[sec.index])
        else:
            cands = self.all_programs() if prog is not None else self.xdp_programs()
        if prog is not None:
            named = [f for f in cands if f.name == prog]
            if not named:
                names = ", ".join(f.name for f in cands) or "none"
                where = f" in section '{section}'" if section else ""
                raise self._err(f"no program '{prog}'{where} (programs: {names})")
            cands = named
        if not cands:
            behind = self.behind_maps()
            if behind:  # only programs for map entries
                raise self._err(not_on_nic(behind[0].section.name, behind[0].name) or "")
            raise self._err("no XDP program (no executable section other than .text)")
        if len(cands) > 1:
            names = ", ".join(f"{f.section.name}:{f.name}" for f in cands)
            raise self._err(f"{len(cands)} programs ({names}): choose one with --section or --prog")
        why = not_on_nic(cands[0].section.name, cands[0].name)
        if why is not None:
            raise self._err(why)
        return cands[0]

    def _func_at(self, sec: _Section, offset: int, where: str) -> _Func:
        for f in self.functions.get(sec.index, []):
            if f.start == offset:
                return f
        raise self._err(f"{where}: call target {sec.name}+0x{offset:x} is not the start of a function")

    def link(self, entry: _Func) -> Program:
        """The entry function followed by every function it calls (transitively), calls fixed up like libbpf."""
        order: list[_Func] = [entry]
        base: dict[tuple[int, int], int] = {entry.key: 0}
        insns: list[Insn] = []
        fixups: list[tuple[int, tuple[int, int]]] = []  # (slot, callee key)
        i = 0
        while i < len(order):
            func = order[i]
            i += 1
            start_slot = len(insns)
            body = func.section.data[func.start : func.start + func.size]
            code = [Insn.from_bytes(body[j : j + 8]) for j in range(0, len(body), 8)]
            for j, ins in enumerate(code):
                off = func.start + 8 * j
                where = f"{func.section.name}+0x{off:x}"
                rel = func.section.relocs.get(off)
                callee: _Func | None = None
                if rel is not None and rel[0] != R_BPF_NONE:
                    rtype, sym = rel
                    if rtype == R_BPF_64_64:
                        if ins.opcode != 0x18 or j + 1 >= len(code):
                            raise self._err(f"R_BPF_64_64 at {where} does not apply to an lddw instruction")
                        ins, code[j + 1], callee = self._reloc_lddw(ins, code[j + 1], sym, where)
                    elif rtype == R_BPF_64_32:
                        if ins.opcode != 0x85 or ins.src != T.CALL_LOCAL:
                            raise self._err(f"R_BPF_64_32 at {where} does not apply to a bpf-to-bpf call")
                        tsec = self._sym_section(sym, where, call=True)
                        callee = self._func_at(tsec, sym.value + (ins.imm + 1) * 8, where)
                    else:
                        raise self._err(f"unsupported relocation {RELOC_NAMES.get(rtype, str(rtype))} at {where} "
                                        f"(symbol {sym.name or '?'})")
                elif ins.opcode == 0x85 and ins.src == T.CALL_LOCAL:  # call within the same section
                    callee = self._func_at(func.section, off + (ins.imm + 1) * 8, where)
                if callee is not None:
                    if callee.key not in base:
                        base[callee.key] = sum(f.size for f in order) // 8
                        order.append(callee)
                    fixups.append((start_slot + j, callee.key))
                insns.append(ins)
        for at, key in fixups:
            insns[at] = insns[at].with_(imm=base[key] - (at + 1))
        functions = {base[f.key]: f.name for f in order}
        return Program(name=entry.name, section=entry.section.name, insns=insns, maps=list(self.maps),
                       license=self.license, source=self.path, functions=functions)

    def _sym_section(self, sym: _Sym, where: str, call: bool = False) -> _Section:
        if sym.shndx <= SHN_UNDEF or sym.shndx >= len(self.sections):
            if call:  # a kfunc (conntrack, the netfilter flowtable, ...): the kernel's own functions and state
                raise self._err(f"{where}: kfunc '{sym.name}' is not supported: it reads or changes state of the "
                                "host kernel (connection tracking, flowtables, sockets), which a NIC does not have")
            raise self._err(f"{where}: extern symbol '{sym.name}' is not supported: kernel symbols (ksym) and "
                            ".kconfig values describe the host kernel, which the NIC is not")
        return self.sections[sym.shndx]

    def _reloc_lddw(self, lo: Insn, hi: Insn, sym: _Sym, where: str) -> tuple[Insn, Insn, _Func | None]:
        sec = self._sym_section(sym, where)
        if sec.index in self._data_map:
            offset = (lo.imm + sym.value) & 0xFFFFFFFF
            return (lo.with_(src=T.PSEUDO_MAP_VALUE, imm=self._data_map[sec.index]), hi.with_(imm=offset), None)
        if sec.name in ("maps", ".maps"):
            idx = self._map_at.get((sec.index, sym.value))
            if idx is None:
                raise self._err(f"{where}: symbol '{sym.name}' is not the start of a map in {sec.name}")
            return lo.with_(src=T.PSEUDO_MAP_FD, imm=idx), hi.with_(imm=0), None
        if sec.is_code:  # address of a function (callback): ld_imm64 src=PSEUDO_FUNC, imm fixed up by the linker
            callee = self._func_at(sec, sym.value + lo.imm, where)
            return lo.with_(src=T.PSEUDO_FUNC), hi, callee
        raise self._err(f"{where}: R_BPF_64_64 against '{sym.name}' in unsupported section {sec.name}")


def load_program(path: str | os.PathLike[str], section: str | None = None, prog: str | None = None,
                 sizes: dict[str, int] | None = None, inner: dict[str, dict[bytes, str]] | None = None) -> Program:
    """Load one XDP program from a BPF object, linked with its subprograms, map references resolved, the inner maps
    its loader creates added (`inner`: {map of maps: {key: new inner map}}), its maps sized as a loader sizes them
    (`sizes`: {map name: max_entries}) and the maps it never references set aside."""
    obj = BpfObject(path)
    entry = obj.select(section, prog)
    program = _link(obj, entry)
    if _uses_prog_array(program):
        # its tail calls may reach any XDP program of the object (the host fills the PROG_ARRAY): all resident
        program.resident = [_link(obj, f) for f in obj.xdp_programs() if f.key != entry.key]
    return drop_unused(apply_sizes(add_inner_maps(program, inner or {}), sizes or {}))


def host_notes(path: str | os.PathLike[str]) -> list[str]:
    """One line for each program of the object that runs behind a cpumap or devmap entry rather than on the NIC
    (compile and load print them: the object is not refused for them)."""
    return [f"note: {not_on_nic(f.section.name, f.name)}" for f in BpfObject(path).behind_maps()]
def _link(obj: BpfObject, entry: _Func) -> Program:
    try:
        return obj.link(entry)
    except (struct.error, ValueError, IndexError, ArithmeticError) as exc:
        raise ElfError(f"{obj.path}: malformed code in {entry.section.name}: {exc}") from None


def _uses_prog_array(program: Program) -> bool:
    prog_array = params.LINUX_MAP_TYPE_IDS["prog_array"]
    return any(ins.opcode == 0x18 and ins.src == T.PSEUDO_MAP_FD and program.maps[ins.imm].type == prog_array
               for ins in program.insns if 0 <= ins.imm < len(program.maps))


def list_programs(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(section, function name) of every XDP program of the object (legacy section names when no xdp* section)."""
    return [(f.section.name, f.name) for f in BpfObject(path).xdp_programs()]


def load_maps(path: str | os.PathLike[str]) -> list[MapDef]:
    """Every map of the object, in the order load_program numbers them (legacy maps, .maps, global data)."""
    return list(BpfObject(path).maps)
