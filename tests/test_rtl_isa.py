"""ISA coverage: every case of tests/isa_cases runs on the RTL, the VLIW model and the sequential model."""

from __future__ import annotations

import pytest
from isa_case_files import all_cases
from rtl_support import require_rtl

from hxdp.errors import HxdpError
from hxdp.isa import table as T
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.raw import run_raw, sequential_rom

CASES = all_cases()
ENGINES = [pytest.param("rtl", marks=pytest.mark.rtl), "vliw-model", "seq-model"]


def test_every_supported_opcode_has_a_case() -> None:
    seen = {ins.opcode for case in CASES for ins in case.insns}
    missing = sorted(o for o, info in T.OPCODES.items() if info.supported and o not in seen)
    assert not missing, "opcodes without an ISA case: " + ", ".join(f"0x{o:02x} {T.OPCODES[o].name}" for o in missing)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_isa_case(case, engine: str) -> None:
    if engine == "rtl":
        require_rtl()
    if case.error:
        with pytest.raises(HxdpError, match=case.error):
            run_raw(case.insns, case.mem, engine, compile_=False)
        return
    r0, cycles = run_raw(case.insns, case.mem, engine, compile_=False)
    assert r0 == case.result, f"{case.name} on {engine}: r0 = 0x{r0:x}, expected 0x{case.result:x}"
    if engine == "seq-model":
        return
    if case.cycles is not None:
        assert cycles == case.cycles, f"{case.name} on {engine}: {cycles} cycles, expected {case.cycles}"
    if engine == "rtl":  # the RTL's cycles are the VLIW model's (execution contract section 6)
        vm = VliwModel(sequential_rom(case.insns), MapState(MapLayout.from_maps([])))
        vm.run_raw(case.mem)
        assert cycles == vm.last_cycles, f"{case.name}: RTL {cycles} cycles, VLIW model {vm.last_cycles}"
