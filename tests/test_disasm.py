"""`hxdp disasm` lists exactly what llvm-objdump -d lists, instruction by instruction, for every test object."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from original_roms import write_original_rom

from hxdp.cli import main
from hxdp.frontend.elf import load_program
from hxdp.isa.insn import NOP, Insn, assemble_line
from hxdp.isa.rom import Rom
from hxdp.listing import disasm_rom_lines
from hxdp.models.maps import MapLayout

LINE = re.compile(r"^\s*(\d+):\t([0-9a-f ]+)\t(.*)$")
SECTION = re.compile(r"^Disassembly of section (.*):$")
ANNOTATION = re.compile(r" <[A-Za-z_.][^ ]*>$")  # llvm's jump target labels such as <LBB0_6>


def parse_listing(text: str) -> dict[tuple[str, int], tuple[str, str]]:
    """{(section, slot): (hex bytes, assembly)}; labels, relocation lines and jump annotations are dropped."""
    out: dict[tuple[str, int], tuple[str, str]] = {}
    section = ""
    for line in text.splitlines():
        m = SECTION.match(line)
        if m:
            section = m.group(1)
            continue
        m = LINE.match(line)
        if m:
            out[(section, int(m.group(1)))] = (m.group(2).strip(), ANNOTATION.sub("", m.group(3)))
    return out


def objdump(obj: Path, *extra: str) -> str:
    tool = shutil.which("llvm-objdump") or shutil.which("llvm-objdump-14")
    if tool is None:
        pytest.skip("llvm-objdump is not installed")
    return subprocess.run([tool, "-d", *extra, str(obj)], capture_output=True, text=True, check=True).stdout


def hxdp_disasm(*args: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["disasm", *args]) == 0
    return capsys.readouterr().out


def test_disasm_matches_llvm_objdump(elf_objects: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert _compare_all(elf_objects, capsys) > 150


def test_disasm_matches_llvm_objdump_on_xdp_progs(xdp_prog_objects: dict[str, Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    if not xdp_prog_objects:
        pytest.skip("no xdp_progs/*.c in this checkout")
    assert _compare_all(xdp_prog_objects, capsys) > 10 * len(xdp_prog_objects)


def _compare_all(objects: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> int:
    checked = 0
    for name, obj in objects.items():
        ours = parse_listing(hxdp_disasm(str(obj), capsys=capsys))
        ref = parse_listing(objdump(obj))
        alu32 = None
        assert ours.keys() == ref.keys(), f"{name}: different instruction slots"
        for key, (hexbytes, text) in ours.items():
            ref_hex, ref_text = ref[key]
            assert hexbytes == ref_hex, f"{name} {key}: bytes differ"
            if hexbytes.startswith("c3 "):
                # 32-bit atomics: llvm-objdump's default decoder lacks the alu32 forms (prints <unknown> or a
                # plain add); its +alu32 decoder is the reference for these
                alu32 = alu32 or parse_listing(objdump(obj, "--mattr=+alu32"))
                ref_text = alu32[key][1]
            assert text == ref_text, f"{name} {key}: {text!r} != llvm-objdump {ref_text!r}"
            checked += 1
    return checked


def test_disasm_section_and_prog(elf_objects: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    obj = str(elf_objects["two_progs"])
    only = parse_listing(hxdp_disasm(obj, "--prog", "second_pass", capsys=capsys))
    ref = parse_listing(objdump(elf_objects["two_progs"]))
    assert only and all(key[0] == "xdp" and ref[key] == val for key, val in only.items())
    assert ("xdp", 0) not in only  # first_drop occupies slots 0-1 of the section
    frags = parse_listing(hxdp_disasm(obj, "--section", "xdp.frags", capsys=capsys))
    assert {k[0] for k in frags} == {"xdp.frags"}
    both = parse_listing(hxdp_disasm(obj, "--section", "xdp", capsys=capsys))  # two programs in one section
    assert both == {k: v for k, v in ref.items() if k[0] == "xdp"}
    assert main(["disasm", obj, "--section", "nope"]) == 1
    assert "no section 'nope'" in capsys.readouterr().err


def test_disasm_linked_names_maps(elf_objects: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    text = hxdp_disasm(str(elf_objects["globals"]), "--linked", capsys=capsys)
    assert "r1 = map[globals.data] + 0 ll" in text and "map[globals.bss]" in text and "map[globals.rodata]" in text
    calls = hxdp_disasm(str(elf_objects["subprogs"]), "--linked", "--prog", "calls_main", capsys=capsys)
    assert re.search(r"\tcall \d+ <twice_mix>$", calls, re.M) and re.search(r"\tcall \d+ <mix>$", calls, re.M)
    assert "<global_pick>:" in calls


def test_disasm_rom_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rom = Rom([[Insn(0x95), Insn(0xB7, dst=0, imm=1), Insn(0), Insn(0)],
               [Insn(0x18, dst=2, imm=5), Insn(0, imm=1), Insn(0x15, dst=1, off=-2, imm=3), Insn(0x96, imm=2)]])
    path = tmp_path / "prog.rom"
    rom.save(path)
    out = hxdp_disasm(str(path), capsys=capsys).splitlines()
    assert out[1].split(None, 1)[0] == "0" and out[2].split(None, 1)[0] == "1"
    row0 = disasm_rom_lines(rom)[1]
    assert row0.index("exit") < row0.index("r0 = 1")  # lane 0 first
    assert "r2 = 0x100000005 ll" in out[2] and "if r1 == 3 goto -2 <row 0>" in out[2] and "exit 2" in out[2]
    assert len(out) == 3  # header plus two rows (padding rows are not listed)


def test_disasm_rom_with_layout(elf_objects: dict[str, Path], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """With PROG.maps.json next to the ROM, map handles and global data addresses print by name."""
    prog = load_program(elf_objects["globals"])
    layout = MapLayout.for_program(prog)
    rodata = layout.map_id("globals.rodata")
    rom = Rom([[*assemble_line(f"r1 = {hex(layout.value_addr(rodata, 4))} ll"), Insn(0x85, imm=1), NOP],
               [Insn(0x18, dst=2, imm=layout.handle(0)), Insn(0), Insn(0x95), NOP]])
    rom.save(tmp_path / "g.rom")
    (tmp_path / "g.maps.json").write_text(layout.to_json())
    out = hxdp_disasm(str(tmp_path / "g.rom"), capsys=capsys)
    assert "r1 = map[globals.rodata] + 4 ll" in out and "call 1 <map_lookup_elem>" in out
    assert f"r2 = map[{prog.maps[0].name}] ll" in out
    (tmp_path / "g.maps.json").unlink()
    assert f"r2 = 0x{layout.handle(0):x} ll" in hxdp_disasm(str(tmp_path / "g.rom"), capsys=capsys)


def test_disasm_original_format_rom(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ROM as the original hXDP wrote it (256 upper-case rows, lane 3 first) disassembles lane 0 first."""
    ref = write_original_rom(tmp_path, "XDP_DROP.bin")
    assert ref.read_text().splitlines()[0] == "0" * 32 + "00000001000000B7" + "0000000000000095"
    out = hxdp_disasm(str(ref), capsys=capsys).splitlines()
    assert re.match(r"^\s+0\s+exit\s+r0 = 1\s+nop\s+nop$", out[1])
    assert len(out) == 2  # the 255 zero rows are padding, not nops of the program


def test_disasm_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.rom"
    bad.write_text("xyz\n")
    assert main(["disasm", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.rom:1" in err
    assert main(["disasm", str(tmp_path / "absent")]) == 1
    assert "cannot read" in capsys.readouterr().err
