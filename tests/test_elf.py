"""ELF loader: programs, maps (BTF and legacy), global data, relocations, bpf-to-bpf calls, malformed inputs."""

from __future__ import annotations

import os
import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import clang
from elftools.elf.elffile import ELFFile

from hxdp.errors import ElfError, HxdpError
from hxdp.frontend.elf import R_BPF_64_64, libbpf_data_map_name, list_programs, load_maps, load_program
from hxdp.frontend.program import Program
from hxdp.isa import table as T


def _maps(prog: Program) -> dict[str, tuple[int, int, int, int, int]]:
    return {m.name: (m.type, m.key_size, m.value_size, m.max_entries, m.flags) for m in prog.maps}


def _map_refs(prog: Program) -> list[tuple[int, str, int]]:
    """(slot, map name, offset) of each resolved lddw map reference."""
    out = []
    for i, ins in enumerate(prog.insns):
        if ins.opcode == 0x18 and ins.src in (T.PSEUDO_MAP_FD, T.PSEUDO_MAP_VALUE):
            off = prog.insns[i + 1].imm if ins.src == T.PSEUDO_MAP_VALUE else -1
            out.append((i, prog.maps[ins.imm].name, off))
    return out


def _relocated_symbols(obj: Path, section: str) -> list[str]:
    with open(obj, "rb") as fh:
        elf = ELFFile(fh)
        rel = elf.get_section_by_name(".rel" + section)
        symtab = elf.get_section_by_name(".symtab")
        return [symtab.get_symbol(r["r_info_sym"]).name for r in rel.iter_relocations()]


def test_btf_maps(elf_objects: dict[str, Path]) -> None:
    prog = load_program(elf_objects["maps_btf"])
    assert prog.name == "use_maps" and prog.section == "xdp" and prog.license == "GPL"
    assert _maps(prog) == {
        "flows": (1, 16, 8, 1024, 0),  # struct flow_key is 16 bytes with padding
        "counters": (2, 4, 24, 16, 0),  # key_size/value_size form
        "percpu": (6, 4, 8, 4, 0),
        "routes": (11, 8, 4, 256, 1),  # BPF_F_NO_PREALLOC
        "ports": (14, 4, 4, 8, 0),
        "macs": (9, 8, 6, 128, 0),  # __u8[6] value
    }
    assert all(m.section == ".maps" and m.initial is None for m in prog.maps)
    # every map reference in the code points at the map named by its relocation, in order
    refs = [name for _slot, name, _off in _map_refs(prog)]
    assert refs == _relocated_symbols(elf_objects["maps_btf"], "xdp")
    assert set(refs) == {"flows", "counters", "percpu", "routes", "ports", "macs"}


def test_legacy_maps(elf_objects: dict[str, Path]) -> None:
    prog = load_program(elf_objects["maps_legacy"])
    assert _maps(prog) == {"rxcnt": (6, 4, 8, 256, 0), "blacklist": (1, 4, 8, 10000, 1)}
    assert [m.section for m in prog.maps] == ["maps", "maps"]
    assert prog.license == "Dual BSD/GPL"
    assert [(n, o) for _s, n, o in _map_refs(prog)] == [("rxcnt", -1), ("blacklist", -1)]
    assert load_maps(elf_objects["maps_legacy"]) == prog.maps


def test_global_data(elf_objects: dict[str, Path]) -> None:
    obj = elf_objects["globals"]
    prog = load_program(obj)
    by_name = {m.section: m for m in prog.maps}
    # named as libbpf names them (what the kernel and bpftool show)
    assert {m.name: m.section for m in prog.maps} == {"globals.data": ".data", "globals.rodata": ".rodata",
                                                     "globals.bss": ".bss"}
    with open(obj, "rb") as fh:
        elf = ELFFile(fh)
        data = elf.get_section_by_name(".data").data()
        rodata = elf.get_section_by_name(".rodata").data()
        bss_size = elf.get_section_by_name(".bss")["sh_size"]
        symtab = elf.get_section_by_name(".symtab")
        sym_off = {s.name: s["st_value"] for s in symtab.iter_symbols()}
    assert by_name[".data"].initial == data and by_name[".data"].value_size == len(data)
    assert by_name[".rodata"].initial == rodata and b"hxdp says hi\0" in rodata
    assert by_name[".bss"].initial == bytes(bss_size)
    for m in by_name.values():
        assert (m.type, m.key_size, m.max_entries) == (2, 4, 1)
    assert by_name[".rodata"].flags & 0x80  # BPF_F_RDONLY_PROG
    assert struct.unpack_from("<i", data, sym_off["packets"])[0] == 100
    assert struct.unpack_from("<I", rodata, sym_off["drop_port"])[0] == 53
    refs = {(n.removeprefix("globals"), o) for _s, n, o in _map_refs(prog)}
    assert (".data", sym_off["packets"]) in refs
    assert (".bss", sym_off["bytes_seen"]) in refs
    assert (".rodata", sym_off["drop_port"]) in refs
    # the static variable is reached through the section symbol, its offset taken from the lddw imm
    hidden = [o for n, o in refs if n == ".data" and o != sym_off["packets"]]
    assert hidden and all(0 < o < len(data) for o in hidden)
    assert struct.unpack_from("<I", data, hidden[0])[0] == 0x1234
    # strings: the format string of bpf_printk lives in read-only data at the offset the code uses
    assert any(n == ".rodata" and rodata[o:].startswith(b"len %u\0") for n, o in refs)


def test_libbpf_data_map_names() -> None:
    assert libbpf_data_map_name("/x/globals.o", ".rodata") == "globals.rodata"
    assert libbpf_data_map_name("xdp_router_ipv4.bpf.o", ".data") == "xdp_rout.data"
    assert libbpf_data_map_name("a-b.o", ".bss") == "a_b.bss"
    assert libbpf_data_map_name("prog.o", ".rodata.str1.1") == ".rodata.str1.1"


def _call_targets(prog: Program) -> list[tuple[int, str]]:
    out = []
    for i, ins in enumerate(prog.insns):
        if ins.opcode == 0x85 and ins.src == T.CALL_LOCAL:
            out.append((i, prog.functions[i + 1 + ins.imm]))
    return out


def test_subprograms_linked(elf_objects: dict[str, Path]) -> None:
    obj = elf_objects["subprogs"]
    main = load_program(obj, prog="calls_main")
    assert main.functions[0] == "calls_main"
    assert sorted(main.functions.values()) == ["calls_main", "global_pick", "mix", "twice_mix"]
    targets = _call_targets(main)
    owner = {}
    starts = sorted(main.functions)
    for i in range(len(main.insns)):
        owner[i] = main.functions[max(s for s in starts if s <= i)]
    calls = sorted((owner[i], callee) for i, callee in targets)
    assert calls == [("calls_main", "global_pick"), ("calls_main", "twice_mix"), ("twice_mix", "mix"),
                     ("twice_mix", "mix")]
    # each function is copied whole and ends with exit
    for s in starts:
        end = min([t for t in starts if t > s] + [len(main.insns)])
        assert main.insns[end - 1].opcode == 0x95
    alt = load_program(obj, section="xdp/alt")
    assert alt.name == "calls_alt" and sorted(alt.functions.values()) == ["calls_alt", "global_pick", "mix"]
    assert sorted(c for _i, c in _call_targets(alt)) == ["global_pick", "mix"]


def test_program_selection(elf_objects: dict[str, Path]) -> None:
    obj = elf_objects["two_progs"]
    assert list_programs(obj) == [("xdp", "first_drop"), ("xdp", "second_pass"), ("xdp.frags", "frags_prog")]
    with pytest.raises(ElfError, match="3 programs .*choose one with --section or --prog"):
        load_program(obj)
    with pytest.raises(ElfError, match="2 programs"):
        load_program(obj, section="xdp")
    first = load_program(obj, prog="first_drop")
    assert (first.section, first.name) == ("xdp", "first_drop")
    assert [(i.opcode, i.imm) for i in first.insns] == [(0xB4, 1), (0x95, 0)]  # w0 = XDP_DROP; exit
    assert load_program(obj, section="xdp", prog="second_pass").name == "second_pass"
    assert load_program(obj, section="xdp.frags").name == "frags_prog"
    with pytest.raises(ElfError, match="no program 'nope'"):
        load_program(obj, prog="nope")
    with pytest.raises(ElfError, match="no section 'xdp/none'"):
        load_program(obj, section="xdp/none")
    with pytest.raises(ElfError, match="not executable"):
        load_program(obj, section="license")
    legacy = elf_objects["legacy_section"]
    assert list_programs(legacy) == [("prog", "legacy_name")]
    assert load_program(legacy).section == "prog"


def _assert_one_line(exc: pytest.ExceptionInfo[HxdpError], path: Path) -> None:
    msg = str(exc.value)
    assert "\n" not in msg and str(path) in msg


def test_random_bytes(tmp_path: Path) -> None:
    path = tmp_path / "random.o"
    path.write_bytes(random.Random(1).randbytes(4096))
    with pytest.raises(ElfError, match="not an ELF file") as exc:
        load_program(path)
    _assert_one_line(exc, path)


def test_truncated(elf_objects: dict[str, Path], tmp_path: Path) -> None:
    data = elf_objects["maps_btf"].read_bytes()
    for cut in (10, 63, 200, len(data) // 2, len(data) - 1):
        path = tmp_path / f"cut{cut}.o"
        path.write_bytes(data[:cut])
        with pytest.raises(ElfError, match="truncated") as exc:
            load_program(path)
        _assert_one_line(exc, path)


def test_x86_object(tmp_path: Path) -> None:
    cc = clang()
    if cc is None:
        pytest.skip("clang is not installed")
    src = tmp_path / "x86.c"
    src.write_text("int f(int x) { return x + 1; }\n")
    obj = tmp_path / "x86.o"
    subprocess.run([cc, "-O2", "-target", "x86_64-linux-gnu", "-c", str(src), "-o", str(obj)], check=True)
    with pytest.raises(ElfError, match=r"not a BPF object \(e_machine 62") as exc:
        load_program(obj)
    _assert_one_line(exc, obj)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ElfError, match="cannot read"):
        load_program(tmp_path / "absent.o")


def _patch_reloc_type(src: Path, dst: Path, section: str, new_type: int) -> int:
    """Copy src to dst with the first relocation of .rel<section> changed to new_type; returns its offset."""
    data = bytearray(src.read_bytes())
    with open(src, "rb") as fh:
        elf = ELFFile(fh)
        rel = elf.get_section_by_name(".rel" + section)
        first = next(rel.iter_relocations())
        assert first["r_info_type"] == R_BPF_64_64
        entry = rel["sh_offset"]
    struct.pack_into("<I", data, entry + 8, new_type)  # r_info low word = type (little-endian ELF64)
    dst.write_bytes(bytes(data))
    return first["r_offset"]


def test_unsupported_relocation(elf_objects: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "badrel.o"
    offset = _patch_reloc_type(elf_objects["maps_legacy"], bad, "xdp", 2)
    with pytest.raises(ElfError, match=f"unsupported relocation R_BPF_64_ABS64 at xdp\\+0x{offset:x}") as exc:
        load_program(bad)
    _assert_one_line(exc, bad)


def test_unknown_map_type(elf_objects: dict[str, Path], tmp_path: Path) -> None:
    src = elf_objects["maps_legacy"]
    data = bytearray(src.read_bytes())
    with open(src, "rb") as fh:
        maps = ELFFile(fh).get_section_by_name("maps")
        struct.pack_into("<I", data, maps["sh_offset"], 999)  # first map's type
    bad = tmp_path / "badmap.o"
    bad.write_bytes(bytes(data))
    with pytest.raises(ElfError, match="map 'rxcnt': unknown map type 999") as exc:
        load_program(bad)
    _assert_one_line(exc, bad)


def test_extern_refused(elf_objects: dict[str, Path]) -> None:
    with pytest.raises(ElfError, match="extern symbol 'LINUX_KERNEL_VERSION' is not supported: .* host kernel"):
        load_program(elf_objects["extern_ksym"])


def test_kfunc_refused_saying_why(elf_objects: dict[str, Path]) -> None:
    """kfuncs read the host kernel's state (conntrack here): refused, naming the kfunc and why a NIC lacks it."""
    with pytest.raises(ElfError, match="kfunc 'bpf_xdp_ct_lookup' is not supported: .*which a NIC does not have"):
        load_program(elf_objects["extern_kfunc"])


def test_btf_maps_need_btf(tmp_path: Path) -> None:
    cc = clang()
    if cc is None or shutil.which("llvm-objcopy") is None:
        pytest.skip("clang/llvm-objcopy not installed")
    src = Path(__file__).parent / "data" / "elf" / "maps_btf.c"
    obj = tmp_path / "nobtf.o"
    flags = ["-O2", "-target", "bpf", "-mcpu=v3", f"-I/usr/include/{os.uname().machine}-linux-gnu"]
    subprocess.run([cc, *flags, "-g", "-c", str(src), "-o", str(obj)], check=True)
    subprocess.run(["llvm-objcopy", "--remove-section=.BTF", "--remove-section=.rel.BTF", str(obj)], check=True)
    with pytest.raises(ElfError, match=r"need the \.BTF section"):
        load_program(obj)


@pytest.mark.kernel
@pytest.mark.parametrize("name", ["maps_btf", "globals", "atomics", "subprogs", "map_in_map", "callback", "strings"])
def test_maps_agree_with_libbpf(elf_objects: dict[str, Path], name: str) -> None:
    """The loader's map list (names, types, sizes, entries) is what libbpf creates in the kernel."""
    from hxdp.linux import kernel

    ok, reason = kernel.available()
    if not ok:
        pytest.skip(f"kernel oracle unavailable: {reason}")
    obj = elf_objects[name]
    prog = next(p for _s, p in list_programs(obj))
    ours = {m.name: (m.type, m.key_size, m.value_size, m.max_entries) for m in load_maps(obj)}
    with kernel.KernelProgram(obj, prog=prog) as kp:
        theirs = {m.name: (m.type, m.key_size, m.value_size, m.max_entries) for m in kp.maps.values()}
        dump = kp.dump()
    assert ours == theirs
    for m in load_maps(obj):  # global data starts with the object's initial bytes
        if m.initial is not None:
            assert dump[m.name] == {bytes(4): m.initial}


def test_every_xdp_prog_loads(xdp_prog_objects: dict[str, Path]) -> None:
    """The project's own programs load; every map reference and call lands on a map or a function start."""
    for name, obj in xdp_prog_objects.items():
        for section, fn in list_programs(obj):
            prog = load_program(obj, section=section, prog=fn)
            assert prog.insns and prog.insns[-1].opcode in (0x95, 0x05), name  # ends with exit or a jump back
            for i, ins in enumerate(prog.insns):
                if ins.opcode == 0x18 and ins.src in (T.PSEUDO_MAP_FD, T.PSEUDO_MAP_VALUE):
                    assert 0 <= ins.imm < len(prog.maps), (name, i)
                    if ins.src == T.PSEUDO_MAP_VALUE:
                        assert 0 <= prog.insns[i + 1].imm < prog.maps[ins.imm].value_size, (name, i)
                if ins.opcode == 0x85 and ins.src == T.CALL_LOCAL:
                    assert i + 1 + ins.imm in prog.functions, (name, i)


def test_corrupted_objects_give_one_line_errors(elf_objects: dict[str, Path], tmp_path: Path) -> None:
    """Random byte corruptions either still load or raise a one-line ElfError, never another exception."""
    rng = random.Random(2024)
    path = tmp_path / "fuzz.o"
    errors = 0
    for name in ("globals", "subprogs", "maps_btf", "maps_legacy"):
        base = elf_objects[name].read_bytes()
        for _ in range(30):
            data = bytearray(base)
            for _ in range(rng.randint(1, 6)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            path.write_bytes(bytes(data))
            try:
                for section, fn in list_programs(path):
                    load_program(path, section, fn)
            except ElfError as exc:
                assert "\n" not in str(exc)
                errors += 1
    assert errors > 0


def test_callback_address(elf_objects: dict[str, Path]) -> None:
    """lddw of a function (bpf_loop callback) becomes src=PSEUDO_FUNC with the callee's relative slot."""
    prog = load_program(elf_objects["callback"])
    refs = [(i, ins) for i, ins in enumerate(prog.insns) if ins.opcode == 0x18]
    assert len(refs) == 1
    slot, ins = refs[0]
    assert ins.src == T.PSEUDO_FUNC and prog.functions[slot + 1 + ins.imm] == "add_index"
    assert prog.insns[slot + 1 + ins.imm - 1].opcode == 0x95  # the callee follows the entry's exit


def test_map_in_map(elf_objects: dict[str, Path]) -> None:
    maps = {m.name: m for m in load_maps(elf_objects["map_in_map"])}
    outer = maps["outer"]
    assert (outer.type, outer.key_size, outer.value_size, outer.max_entries) == (12, 4, 4, 2)
    assert outer.inner is not None
    assert (outer.inner.type, outer.inner.key_size, outer.inner.value_size, outer.inner.max_entries) == (1, 4, 2, 32)
    assert (maps["inner_a"].type, maps["inner_a"].value_size) == (1, 2)


def test_string_section(elf_objects: dict[str, Path]) -> None:
    prog = load_program(elf_objects["strings"])
    (m,) = prog.maps
    assert (m.name, m.section, m.type, m.max_entries) == (".rodata.str1.1", ".rodata.str1.1", 2, 1)
    assert m.initial is not None and m.value_size == len(m.initial)
    offsets = sorted(o for _s, n, o in _map_refs(prog) if n == ".rodata.str1.1")
    assert [m.initial[o:].split(b"\0", 1)[0] for o in offsets] == sorted(
        [b"queue one", b"queue zero"], key=lambda t: m.initial.index(t + b"\0"))


def test_misplaced_relocation(elf_objects: dict[str, Path], tmp_path: Path) -> None:
    src = elf_objects["maps_legacy"]
    data = bytearray(src.read_bytes())
    with open(src, "rb") as fh:
        rel = ELFFile(fh).get_section_by_name(".relxdp")
        first = next(rel.iter_relocations())
        struct.pack_into("<Q", data, rel["sh_offset"], first["r_offset"] + 3)  # r_offset inside an instruction
    bad = tmp_path / "misplaced.o"
    bad.write_bytes(bytes(data))
    with pytest.raises(ElfError, match=f"R_BPF_64_64 at xdp\\+0x{first['r_offset'] + 3:x} is not on an instruction"):
        load_program(bad)
