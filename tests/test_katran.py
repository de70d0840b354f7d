"""Katran-scale programs: upstream Katran when KATRAN_SRC names a checkout, else xdp_balancer, ours of that shape."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kernel_fixtures import requires_kernel

from hxdp import params
from hxdp.eval import katran

KATRAN_SRC = os.environ.get("KATRAN_SRC")
VIPS = ["10.100.0.1:80:tcp", "10.100.0.2:443:udp"]
REALS = ["172.16.0.1", "172.16.0.2", "fc00:1::3"]


def _compile(obj: Path, cfg: dict):
    from hxdp.compiler import compile_program
    from hxdp.frontend.elf import load_program
    from hxdp.frontend.sizing import config_inner, config_sizes

    program = load_program(obj, sizes=config_sizes(cfg, "cfg"), inner=config_inner(cfg, "cfg"))
    return program, compile_program(program)


def test_balancer_has_katrans_shape() -> None:
    """xdp_balancer: over 1,000 rows, a map of maps of each kind with inner maps, a ring of over a million slots
    placed off chip; it fits the instruction memory."""
    from hxdp.suite import program

    prog = program("xdp_balancer")
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (make -C xdp_progs)")
    _, cr = _compile(prog.obj, prog.map_config())
    assert 1000 < len(cr.rom) <= params.IMEM_ROWS
    by = cr.layout.by_name
    assert {by["lru_mapping"].kind, by["down_reals"].kind} == {"array_of_maps", "hash_of_maps"}
    assert by["lru_mapping"].inner_entries and by["down_reals"].inner_entries
    assert by["ch_rings"].max_entries > 1_000_000 and by["ch_rings"].tier != "bram"


def test_katran_traffic_and_configuration() -> None:
    """The frames of every path are valid Ethernet frames of 64 bytes or more, each its own flow; the configuration
    holds the VIPs, their rings (Maglev, every slot a real) and the per-core LRUs as KatranLb sizes them."""
    frames = katran.traffic(VIPS, 4)
    assert {p for p, _ in frames} >= {"new", "reuse", "lru-miss", "reset", "miss", "drop"}
    assert all(len(f) >= 64 for _, f in frames)
    new = katran.path_frames(VIPS[0], "lru-miss", 8)
    assert len(set(new)) == 8
    cfg = katran.config(VIPS, REALS, "02:00:00:00:03:01", 257, 1000, 2)
    assert len(cfg["maps"]["vip_map"]) == 2 and len(cfg["maps"]["ch_rings"]) == 2 * 257
    assert {int(e["value"][:2], 16) for e in cfg["maps"]["ch_rings"]} == {1, 2, 3}
    assert cfg["inner_maps"]["lru_mapping"] == {"00000000": "katran_lru0", "01000000": "katran_lru1"}
    assert cfg["max_entries"] == {"katran_lru0": 500, "katran_lru1": 500}
    with pytest.raises(katran.KatranError, match="ADDRESS:PORT"):
        katran.config(["10.0.0.1:80"], REALS, "02:00:00:00:03:01", 257, 1000, 1)
    with pytest.raises(katran.KatranError, match="no katran/lib/bpf/balancer.bpf.c"):
        katran.build(Path("/nonexistent"), Path("/tmp"), [])


@pytest.mark.skipif(not KATRAN_SRC, reason="KATRAN_SRC (a clone of facebookincubator/katran) not given")
@requires_kernel
@pytest.mark.parametrize("engine", ["vliw-model", "rtl"])
def test_upstream_katran_equals_the_kernel(engine: str, tmp_path: Path) -> None:
    from hxdp.diff import run_diff
    from hxdp.mapdump import SkipBytes

    obj = katran.build(Path(KATRAN_SRC or ""), tmp_path, [])
    cfg = katran.config(VIPS, REALS, "02:00:00:00:03:01", katran.RING_SIZE, 4096, 1)
    _, cr = _compile(obj, cfg)
    assert len(cr.rom) <= params.IMEM_ROWS
    frames = [f for _, f in katran.traffic(VIPS, 4)]
    rep = run_diff(obj, frames, cfg, engine=engine, skip=[SkipBytes.parse(s) for s in katran.skip_bytes(1)],
                   maps_at_end=True)
    assert rep.ok, rep.divergence.render()
