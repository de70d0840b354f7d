"""The generated Verilog headers of Sephirot match isa_table.py and params.py (fails when stale)."""

from __future__ import annotations

import re

from hxdp import params as P
from hxdp.isa import table as T
from hxdp.rtl import headers as gen_rtl


def test_generated_headers_are_fresh() -> None:
    bad = gen_rtl.stale()
    assert not bad, f"stale generated files {[str(p) for p in bad]}: run python -m hxdp.rtl.headers"


def test_check_flag_detects_staleness(tmp_path, monkeypatch) -> None:
    fake = tmp_path / "sephirot_isa.vh"
    fake.write_text("// old\n")
    monkeypatch.setattr(gen_rtl, "ISA_FILE", fake)
    monkeypatch.setattr(gen_rtl, "PARAMS_FILE", tmp_path / "missing.vh")
    assert gen_rtl.main(["--check"]) == 1


def test_every_opcode_is_defined() -> None:
    text = gen_rtl.gen_isa()
    for opcode, info in T.OPCODES.items():
        m = re.search(rf"`define SEPH_OP_{info.name.upper()}\s+8'h([0-9a-f]+)", text)
        assert m, info.name
        assert int(m.group(1), 16) == opcode
    mask = int(re.search(r"SEPH_OP_SUPPORTED_MASK\s+256'h([0-9a-f]+)", text).group(1), 16)
    assert all(bool(mask >> o & 1) == i.supported for o, i in T.OPCODES.items())


def test_params_are_defined() -> None:
    text = gen_rtl.gen_params()
    assert re.search(rf"`define SEPH_LANES\s+{P.LANES}\b", text)
    assert re.search(rf"`define SEPH_CYCLE_LIMIT\s+{P.CYCLE_LIMIT}\b", text)
    assert re.search(rf"`define SEPH_PKT_BASE\s+32'h{P.PKT_BASE:08x}", text)
