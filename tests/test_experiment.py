"""The evaluation harness: checkpoint/resume, honest target checks, and a quick end-to-end run on the compiler."""

from __future__ import annotations

import argparse
import csv
import importlib
import json
from pathlib import Path

import pytest

from hxdp.cli.experiment import register
from hxdp.eval import checkpoint, output, run, synth
from hxdp.eval import harness as H
from hxdp.eval.figures import resources, throughput
from hxdp.eval.programs import QUICK_PROGRAMS, ebpf_count, rom_count


class Interrupt(KeyboardInterrupt):
    pass


def _fake_registry(calls: list[str], fail_on: set[str], na_once: set[str]) -> tuple[dict, dict]:
    """One fake experiment over five points; its measurement squares the point's number."""

    def measure(ctx: H.Context, key: str) -> H.Record:
        calls.append(key)
        if key in fail_on:
            fail_on.discard(key)
            raise Interrupt
        if key in na_once:
            na_once.discard(key)
            raise H.NotAvailable("piece missing")
        n = int(key.split(":")[1])
        return {"value": n * n}

    def points(ctx: H.Context) -> list[str]:
        return [f"fake:{i}" for i in range(5)]

    def report(ctx: H.Context, exp: H.Experiment, records: dict) -> list[H.Check]:
        rows = [{"point": k, "value": r.get("value"), "status": r["status"]} for k, r in records.items()]
        output.write_table(ctx, exp.name, exp.title, rows)
        total = sum(r.get("value") or 0 for r in records.values())
        return [H.Check("sum of squares", "pass" if total == 30 else "fail", str(total), "== 30")]

    reg = {"fake": H.Experiment("fake", "fake experiment", points, report)}
    return reg, {"fake": measure}


def test_checkpoint_resume_after_interrupt(tmp_path: Path) -> None:
    calls: list[str] = []
    reg, meas = _fake_registry(calls, fail_on={"fake:3"}, na_once={"fake:1"})
    with pytest.raises(KeyboardInterrupt):
        run.run_experiments(["fake"], tmp_path, registry=reg, measures=meas, progress=False)
    assert calls == ["fake:0", "fake:1", "fake:2", "fake:3"]
    done = checkpoint.load_checkpoint(checkpoint.checkpoint_path(tmp_path, False))
    assert set(done) == {"fake:0", "fake:1", "fake:2"}
    assert done["fake:1"]["status"] == "n/a" and done["fake:1"]["reason"] == "piece missing"
    # a torn last line (the process died while writing) is ignored
    with checkpoint.checkpoint_path(tmp_path, False).open("a") as f:
        f.write('{"point": "fake:4", "rec')
    calls.clear()
    s = run.run_experiments(["fake"], tmp_path, resume=True, registry=reg, measures=meas, progress=False)
    # finished points are reused; the 'not available' one and the unfinished ones are measured
    assert calls == ["fake:1", "fake:3", "fake:4"]
    assert s.reused == 2 and s.points == 3
    assert [c.status for c in s.checks] == ["pass"]
    rows = list(csv.DictReader((tmp_path / "fake.csv").open()))
    assert [int(r["value"]) for r in rows] == [0, 1, 4, 9, 16]
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["checks"][0]["status"] == "pass"


def test_without_resume_starts_over(tmp_path: Path) -> None:
    calls: list[str] = []
    reg, meas = _fake_registry(calls, set(), set())
    run.run_experiments([], tmp_path, registry=reg, measures=meas, progress=False)
    run.run_experiments([], tmp_path, registry=reg, measures=meas, progress=False)
    assert len(calls) == 10


def test_error_point_is_reported_not_invented(tmp_path: Path) -> None:
    def measure(ctx: H.Context, key: str) -> H.Record:
        raise ValueError("boom")

    reg = {"x": H.Experiment("x", "x", lambda ctx: ["bad:1"], lambda ctx, exp, rec: [])}
    s = run.run_experiments(["x"], tmp_path, registry=reg, measures={"bad": measure}, progress=False)
    assert s.failed_points == ["bad:1"]
    rec = checkpoint.load_checkpoint(checkpoint.checkpoint_path(tmp_path, False))["bad:1"]
    assert rec["status"] == "error" and "ValueError: boom" in rec["reason"]
    with pytest.raises(H.ExperimentError, match="unknown experiment"):
        run.run_experiments(["nope"], tmp_path, registry=reg, measures={}, progress=False)


def test_cycle_targets_fail_when_missed() -> None:
    rows = [{"program": "xdp_drop", "rtl_cycles": 4.0, "rtl_mpps": H.CLOCK_MHZ / 4, "model_cycles": 1.0},
            {"program": "xdp_tx", "rtl_cycles": 7.0, "rtl_mpps": H.CLOCK_MHZ / 7, "model_cycles": 5.0},
            {"program": "xdp_redirect", "rtl_cycles": None, "rtl_mpps": None, "model_cycles": 3.0},
            {"program": "simple_firewall", "rtl_cycles": 8.0, "rtl_mpps": H.CLOCK_MHZ / 8, "model_cycles": 8.0,
             "rtl_model_mismatches": 3}]
    checks = {c.name.split()[2]: c for c in throughput.cycle_checks(rows, {"rtl:xdp_redirect": {"status": "n/a",
                                                                                         "reason": "no RTL"}})}
    assert checks["xdp_drop"].status == "fail"
    assert checks["xdp_tx"].status == "pass"
    assert checks["xdp_redirect"].status == "n/a" and "no RTL" in checks["xdp_redirect"].detail
    assert checks["simple_firewall"].status == "fail" and "differ" in checks["simple_firewall"].detail


def test_line_rate_targets() -> None:
    """Issue 26: 4x10G of 64-byte frames is 59.52 Mpps, 2.625 cycles at 156.25 MHz; 3 cycles (52 Mpps) misses it,
    a fast result that differs from the model fails, a program not measured is n/a."""
    assert abs(H.CLOCK_MHZ / throughput.LINE_RATE_MPPS - 2.625) < 1e-9
    rows = [{"program": "xdp_drop", "path": "DROP", "rtl_cycles": 2.0, "rtl_mpps": H.CLOCK_MHZ / 2},
            {"program": "xdp_tx", "path": "TX", "rtl_cycles": 3.0, "rtl_mpps": H.CLOCK_MHZ / 3}]
    checks = {c.name.split()[4]: c for c in throughput.line_rate_checks(rows)}
    assert checks["xdp_drop"].status == "pass" and checks["xdp_tx"].status == "fail"
    rows[1].update(rtl_cycles=2.0, rtl_mpps=H.CLOCK_MHZ / 2, rtl_model_mismatches=1)
    rows[0].update(rtl_cycles=None, rtl_mpps=None, rtl_method="no RTL")
    checks = {c.name.split()[4]: c for c in throughput.line_rate_checks(rows)}
    assert checks["xdp_tx"].status == "fail" and "differ" in checks["xdp_tx"].detail
    assert checks["xdp_drop"].status == "n/a" and "no RTL" in checks["xdp_drop"].detail


def test_synth_stats_counts_cells() -> None:
    doc = {"modules": {"\\core": {"num_cells_by_type": {"LUT6": 10, "LUT2": 5, "FDRE": 7, "RAMB18E1": 3,
                                                           "RAMB36E1": 1, "RAM64M": 2, "MUXF7": 4, "DSP48E1": 1}}}}
    st = synth.synth_stats(doc)["core"]
    # two RAM64M cells are 8 LUTs of distributed RAM (4 each)
    assert (st["LUT"], st["FF"], st["BRAM"], st["LUTRAM"], st["DSP"]) == (15, 7, 2.5, 8, 1)


def test_stat_json_of_yosys_023_with_a_deep_hierarchy() -> None:
    # yosys 0.23 prints the hierarchy listing into `stat -json` when a submodule has submodules of its own
    text = """{
   "modules": {
      "$paramod$4c4b\\\\sephirot_stack": {"num_cells_by_type": {"LUT6": 3, "RAM64M": 1}},
      "$paramod\\\\sephirot_lane\\\\AW=s32'00000000000000000000000000001000": {"num_cells_by_type": {"LUT2": 2}},
      "\\\\core": {"num_cells_by_type": {"LUT6": 1, "$paramod$4c4b\\\\sephirot_stack": 1,
                   "$paramod\\\\sephirot_lane\\\\AW=s32'00000000000000000000000000001000": 4}}
   },
       sephirot_alu                  1
         sephirot_div                1
   "design": {"num_cells": 1}
}
"""
    doc = synth.parse_stat_json(text)
    assert set(synth.synth_stats(doc)) == {"sephirot_stack", "sephirot_lane", "core"}
    total = synth.hierarchy_totals(doc)["core"]
    assert (total["LUT"], total["LUTRAM"]) == (1 + 3 + 4 * 2, 4)


def test_rom_count_counts_lddw_once() -> None:
    from hxdp.isa.insn import NOP, Insn
    from hxdp.isa.rom import Rom

    lddw = [Insn(0x18, dst=1, imm=5), Insn(0, imm=0)]
    rom = Rom([[*lddw, Insn(0xB7, dst=0, imm=1), NOP], [Insn(0x95), NOP, NOP, NOP]])
    assert rom_count(rom) == 3
    assert ebpf_count([*lddw, Insn(0x95)]) == 2


def _have_compiler() -> str | None:
    try:
        mod = importlib.import_module("hxdp.compiler")
    except ImportError as exc:
        return f"compiler not importable: {exc}"
    if not hasattr(mod, "compile_program"):
        return "hxdp.compiler has no compile_program yet"
    from hxdp.suite import programs

    built = [p for p in programs() if p.name in QUICK_PROGRAMS and p.obj.exists()]
    if not built:
        return "xdp_progs/build/*.o not built (make progs)"
    return None


@pytest.mark.skipif(_have_compiler() is not None, reason=str(_have_compiler()))
def test_quick_end_to_end_compiler_experiments(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser(prog="hxdp")
    register(parser.add_subparsers())
    out = tmp_path / "eval"
    args = parser.parse_args(["experiment", "fig7", "fig8", "table3", "--quick", "--out", str(out),
                              "--no-progress"])
    assert args.func(args) == 0
    for name in ("fig7", "fig8", "table3"):
        for ext in ("csv", "json", "png", "pdf"):
            assert (out / f"{name}.{ext}").stat().st_size > 0, (name, ext)
    from hxdp.compiler import compile_program
    from hxdp.suite import programs

    table = {r["program"]: r for r in json.loads((out / "table3.json").read_text())["rows"]}
    fig8 = {r["program"]: r for r in csv.DictReader((out / "fig8.csv").open())}
    assert table
    for prog in programs():
        if prog.name not in table:
            continue
        program = prog.load()
        rows = len(compile_program(program).rom)
        row = table[prog.name]
        assert row["rows"] == rows
        assert row["static_ipc"] == pytest.approx(ebpf_count(program.insns) / rows)
        assert row["dynamic_ipc"] > 0 and row["model_mismatches"] == 0
        assert int(fig8[prog.name]["rows_4"]) == rows
    # a second run with --resume measures nothing again
    args = parser.parse_args(["experiment", "fig8", "--quick", "--resume", "--out", str(out), "--no-progress"])
    assert args.func(args) == 0
    s = run.run_experiments(["fig8"], out, quick=True, resume=True, progress=False)
    assert s.points == 0 and s.reused > 0


def test_hierarchy_totals_include_submodules() -> None:
    doc = {"modules": {
        "\\top": {"num_cells_by_type": {"LUT6": 1, "\\core": 1, "FDRE": 2}},
        "\\core": {"num_cells_by_type": {"LUT2": 3, "\\lane": 4}},
        "\\lane": {"num_cells_by_type": {"LUT4": 5, "FDRE": 1}}}}
    h = synth.hierarchy_totals(doc)
    assert (h["top"]["LUT"], h["top"]["FF"]) == (24, 6)
    assert (h["core"]["LUT"], h["core"]["FF"]) == (23, 4)


def test_hierarchy_totals_keep_the_variants_of_a_module_apart() -> None:
    """Two parameter variants of one module (a narrow and a wide port selector) are each counted at their own size
    in their parents and in the top (taking one variant's size for both over-counted the whole IP by 1K LUTs)."""
    narrow, wide = "$paramod$aaaa\\sephirot_portsel", "$paramod$bbbb\\sephirot_portsel"
    doc = {"modules": {
        "\\top": {"num_cells_by_type": {"LUT6": 1, "stack": 1, "pktbuf": 1}},   # (yosys: "\\stack", but cell "stack")
        "\\stack": {"num_cells_by_type": {"LUT2": 10, narrow: 1}},
        "\\pktbuf": {"num_cells_by_type": {"LUT2": 20, wide: 2}},
        narrow: {"num_cells_by_type": {"LUT3": 3}},
        wide: {"num_cells_by_type": {"LUT6": 100}}}}
    h = synth.hierarchy_totals(doc)
    assert h["stack"]["LUT"] == 13 and h["pktbuf"]["LUT"] == 220
    assert h["top"]["LUT"] == 1 + 13 + 220
    assert h["sephirot_portsel"]["LUT"] == 103   # the variants, one of each
    assert synth.synth_stats(doc)["sephirot_portsel"]["LUT"] == 103


def test_partial_runs_accumulate_in_summary(tmp_path: Path) -> None:
    def report(ctx: H.Context, exp: H.Experiment, records: dict) -> list[H.Check]:
        output.write_table(ctx, exp.name, exp.title, [{"n": len(records)}])
        return [H.Check(f"{exp.name} ran", "pass", "1", "1")]

    reg = {n: H.Experiment(n, n, lambda ctx, n=n: [f"m:{n}"], report) for n in ("a", "b")}
    meas = {"m": lambda ctx, key: {"v": 1}}
    run.run_experiments(["a"], tmp_path, registry=reg, measures=meas, progress=False)
    run.run_experiments(["b"], tmp_path, registry=reg, measures=meas, progress=False)
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert [c["name"] for c in doc["checks"]] == ["a ran", "b ran"]
    assert "## a: a" in (tmp_path / "results.md").read_text()


def test_resume_starts_over_when_the_sources_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    reg, meas = _fake_registry(calls, set(), set())
    run.run_experiments([], tmp_path, registry=reg, measures=meas, progress=False)
    run.run_experiments([], tmp_path, resume=True, registry=reg, measures=meas, progress=False)
    assert len(calls) == 5  # same sources: everything reused
    monkeypatch.setattr(run, "code_fingerprint", lambda: "changed")
    run.run_experiments([], tmp_path, resume=True, registry=reg, measures=meas, progress=False)
    assert len(calls) == 10  # other sources: measured again


def test_component_rows_follow_the_papers_table1() -> None:
    st = {"LUT": 0.0, "LUTRAM": 0.0, "FF": 0.0, "BRAM": 0.0, "DSP": 0.0}
    modules = {"sephirot_top": {**st, "LUT": 100.0, "LUTRAM": 20.0, "FF": 50.0},
               "sephirot_core": {**st, "LUT": 60.0, "LUTRAM": 12.0, "FF": 30.0, "BRAM": 4.0},
               "sephirot_stack": {**st, "LUT": 10.0, "LUTRAM": 12.0, "FF": 5.0},
               "sephirot_pktbuf": {**st, "LUT": 15.0, "LUTRAM": 8.0}}
    rows = {r["component"]: r for r in resources.component_rows(modules)}
    # the core's row is the paper's "Sephirot" row: without the stack, which Table 1 lists on its own
    core = rows["Sephirot core (without stack)"]
    assert (core["LUT (incl. LUTRAM)"], core["FF"], core["BRAM36"]) == (50.0, 25.0, 4.0)
    assert core["paper LUT"] == 27_000
    assert rows["Stack"]["LUT (incl. LUTRAM)"] == 22.0 and rows["Stack"]["paper BRAM36"] == 16
    assert rows["Packet buffers (PIQ + APS)"]["paper LUT"] == 9_215
    assert rows["Whole IP (sephirot_top)"]["LUT (incl. LUTRAM)"] == 120.0
    # the helpers were not synthesised: their row is left out, not shown as zero
    assert "Helpers and maps (HF + maps)" not in rows


def test_synth_key_sets_the_reference_map_size() -> None:
    assert resources.TOP_SYNTH_KEY.startswith("synth:sephirot_top:MAP_BYTES=8192,")


def test_whole_ip_without_a_number_reports_the_sum_of_its_synthesised_parts(tmp_path: Path) -> None:
    st = {"LUT": 0.0, "LUTRAM": 0.0, "FF": 0.0, "BRAM": 0.0, "DSP": 0.0}
    core = {"status": "ok", "top": "sephirot_core", "modules": {
        "sephirot_core": {**st, "LUT": 30_000.0, "LUTRAM": 2_000.0}, "sephirot_stack": {**st, "LUT": 9_000.0}}}
    helpers = {"status": "ok", "top": "sephirot_helpers", "modules": {"sephirot_helpers": {**st, "LUT": 15_000.0}}}
    top = {"status": "ok", "top": "sephirot_top", "synth_failed": "yosys synth_xilinx did not finish within 9 s"}
    exp = run.EXPERIMENTS["resources"]
    checks = {c.name.split()[0]: c for c in resources.report_resources(
        H.Context(out=tmp_path), exp, {resources.TOP_SYNTH_KEY: top, "synth:sephirot_core": core,
                                       "synth:sephirot_helpers": helpers})}
    whole = checks["Whole"]
    # a lower bound, never a pass: the packet buffer and the map memory have no number
    assert whole.status == "fail" and whole.value == ">= 47,000 LUT"
    assert "sephirot_core + sephirot_helpers" in whole.detail and "did not finish" in whole.detail
    assert checks["Sephirot"].status == "pass"  # its own row: 30K + 2K of LUTRAM - the stack's 9K
    rows = {r["component"] for r in json.loads((tmp_path / "resources.json").read_text())["rows"]}
    assert "Helper unit with the map FSM (sephirot_helpers)" in rows
    # without the parts, there is no bound to give
    checks = {c.name.split()[0]: c for c in resources.report_resources(H.Context(out=tmp_path), exp,
                                                                       {resources.TOP_SYNTH_KEY: top})}
    assert checks["Whole"].status == "fail" and checks["Whole"].value == "-"


def test_synthesis_with_a_relative_output_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # yosys runs in a temporary folder: its log path must not be relative to the caller's folder
    import shutil

    if shutil.which("yosys") is None:
        pytest.skip("yosys is not installed (scripts/setup.sh installs it)")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    rec = synth.m_synth(H.Context(out=Path("out")), "synth:sephirot_tracefifo")
    assert "synth_failed" not in rec, rec
    assert rec["total"]["FF"] > 0 and (tmp_path / "out" / "work" / "yosys-sephirot_tracefifo.log").exists()


def test_replot_draws_from_the_rows_of_name_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hxdp.eval.docs import DOCS_EVAL

    for name in ("fig14", "table3"):
        (tmp_path / f"{name}.json").write_text((DOCS_EVAL / f"{name}.json").read_text())
    assert run.replot(tmp_path, ["fig14", "table3"]) == [tmp_path / "fig14.png", tmp_path / "table3.png"]
    assert (tmp_path / "fig14.png").stat().st_size > 0 and not (tmp_path / "fig15.png").exists()
    with pytest.raises(H.ExperimentError, match="no NAME.json of fig15"):
        run.replot(tmp_path, ["fig15"])
    with pytest.raises(H.ExperimentError, match="unknown experiment"):
        run.replot(tmp_path, ["nope"])
    # the command line: --replot measures nothing and needs no --out for docs/eval, only for another folder
    parser = argparse.ArgumentParser(prog="hxdp")
    register(parser.add_subparsers())
    args = parser.parse_args(["experiment", "fig14", "--replot", "--out", str(tmp_path)])
    assert args.func(args) == 0 and "fig14.png" in capsys.readouterr().out
