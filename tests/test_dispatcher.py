"""The dispatcher of multi-program loaders: programs chained in one ROM (hxdp.frontend.chain), the next one running
after an action of the previous one's chain-call set, against the kernel running them one by one with the packet
and its metadata passed on (hxdp.linux.dispatcher)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import requires_kernel

from hxdp import params
from hxdp.diff import Chain, run_diff
from hxdp.frontend.chain import CHAIN_MAP, ChainError, chain_programs, load_chain, parse_actions
from hxdp.frontend.elf import load_program

DATA = Path(__file__).parent / "data" / "chain"
PASS, DROP = frozenset({params.XDP_PASS}), frozenset({params.XDP_PASS, params.XDP_DROP})


@pytest.fixture(scope="module")
def objs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("chain")
    return {src.stem: compile_bpf(src, out) for src in sorted(DATA.glob("*.c"))}


def _packets() -> list[bytes]:
    """UDP, TCP, ICMP (chain_filter drops them), IPv6 and ARP (chain_tag drops them: no tag)."""
    from scapy.layers.inet import ICMP, IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import ARP, Ether

    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    pkts = [eth / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2),
            eth / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(),
            eth / IP(src="10.0.0.3", dst="10.0.0.4") / TCP(sport=5, dport=80),
            eth / IPv6(src="fd00::1", dst="fd00::2") / UDP(sport=1, dport=2),
            Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="10.0.0.1", pdst="10.0.0.2")]
    return [bytes(p).ljust(64 + 8 * i, b"\x5a") for i, p in enumerate(pkts)] * 2


def test_chain_is_one_program_of_resident_programs(objs) -> None:  # noqa: ANN001
    p = load_chain([(str(objs["chain_tag"]), None), (str(objs["chain_filter"]), None)], [PASS, PASS])
    assert [q.name for q in (p, *p.resident)] == ["chain_tag", "chain_filter"]
    assert [m.name for m in p.maps] == ["tagged", "verdicts", CHAIN_MAP]
    assert p.maps[-1].prog_entries == {1: "chain_filter"}
    # the first program's exits go through the trampoline; the last one's stay
    assert not any(ins.opcode == 0x95 for ins in p.insns[:10]) and sum(ins.opcode == 0x95 for ins in p.insns) == 2
    assert any(ins.opcode == 0x95 for ins in p.resident[0].insns)


def test_chain_refusals(objs, tmp_path: Path) -> None:  # noqa: ANN001
    tag = load_program(objs["chain_tag"])
    with pytest.raises(ChainError, match="two programs named chain_tag"):
        chain_programs([tag, tag], [PASS, PASS])
    src = tmp_path / "tag2.c"
    src.write_text((DATA / "chain_tag.c").read_text().replace("int chain_tag(", "int chain_tag2("))
    with pytest.raises(ChainError, match="map tagged in both .*chain_tag.o and .*tag2.o.*one namespace"):
        chain_programs([tag, load_program(compile_bpf(src, tmp_path))], [PASS, PASS])
    with pytest.raises(ChainError, match="unknown action 'pas'"):
        parse_actions("pas")
    assert parse_actions("PASS,xdp_drop") == DROP


@requires_kernel
@pytest.mark.kernel
@pytest.mark.parametrize("engine", ["seq-model", "vliw-model", pytest.param("rtl", marks=pytest.mark.rtl)])
@pytest.mark.parametrize("actions", [[PASS, PASS], [DROP, PASS]], ids=["pass", "pass,drop"])
def test_chain_matches_the_kernel(objs, engine: str, actions) -> None:  # noqa: ANN001
    if engine == "rtl":
        from rtl_support import require_rtl

        require_rtl()
    chain = Chain([(str(objs["chain_filter"]), None)], actions)
    report = run_diff(objs["chain_tag"], _packets(), engine=engine, chain=chain)
    assert report.ok, report.divergence.render()
    # chain_filter ran: its metadata verdicts (DROP for ICMP) and, with drop in the set, its XDP_TX for untagged
    assert report.actions.get(params.XDP_DROP, 0) > 0 and report.actions.get(params.XDP_PASS, 0) > 0
    assert (report.actions.get(params.XDP_TX, 0) > 0) == (actions[0] == DROP)


def _hxdp(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hxdp.cli", *args], capture_output=True, text=True)


def test_compile_chain_rom_carries_its_entries(objs, tmp_path: Path) -> None:  # noqa: ANN001
    rom = tmp_path / "chain.rom"
    r = _hxdp("compile", str(objs["chain_tag"]), "--chain", str(objs["chain_filter"]), "--chain-actions",
              "pass,drop", "--no-kernel-verify", "-o", str(rom))
    assert r.returncode == 0, r.stderr
    assert "entry rows): chain_tag 0, chain_filter " in r.stdout
    layout = json.loads(rom.with_suffix(".maps.json").read_text())
    assert [p["name"] for p in layout["programs"]] == ["chain_tag", "chain_filter"]
    assert layout["maps"][-1]["name"] == CHAIN_MAP and layout["maps"][-1]["prog_entries"] == {"1": "chain_filter"}
    from hxdp.isa.rom import Rom
    from hxdp.models.maps import MapLayout, MapState
    from hxdp.models.vliw import VliwModel

    # the layout alone fills the chain's PROG_ARRAY (no map configuration)
    lay = MapLayout.from_json(rom.with_suffix(".maps.json").read_text())
    state = MapState(lay)
    assert state.dump()[CHAIN_MAP] == {(1).to_bytes(4, "little"): lay.prog_value("chain_filter")}
    vm = VliwModel(Rom.load(rom), state)
    assert {vm.run(p).action for p in _packets()} >= {params.XDP_TX, params.XDP_DROP, params.XDP_PASS}
    bad = _hxdp("compile", str(objs["chain_tag"]), "--chain", str(objs["chain_filter"]), "--chain-actions", "pass",
                "--chain-actions", "pass", "--chain-actions", "pass", "--no-kernel-verify", "-o", str(rom))
    assert bad.returncode == 1 and "3 --chain-actions for 2 programs" in bad.stderr


@requires_kernel
@pytest.mark.kernel
@pytest.mark.rtl
def test_board_loads_a_chain(objs, tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    """hxdp prog load A.o --chain B.o: the board runs the chain as the kernel does, program by program."""
    from rtl_support import require_rtl

    from hxdp.board import tools as H
    from hxdp.board.sim import BoardServer
    from hxdp.cli import main as cli_main
    from hxdp.linux.dispatcher import KernelChain

    require_rtl()
    monkeypatch.setenv(H.STATE_ENV, str(tmp_path / "state"))
    packets = _packets()
    links = [(str(objs["chain_tag"]), None), (str(objs["chain_filter"]), None)]
    with KernelChain(links, [DROP, PASS]) as kc:
        want = [kc.run(p) for p in packets]
    with BoardServer(ports=1) as srv:
        assert cli_main(["prog", "load", str(objs["chain_tag"]), "--chain", str(objs["chain_filter"]),
                         "--chain-actions", "pass,drop", "--chain-actions", "pass", "--board", srv.spec]) == 0
        assert "loaded chain_tag.o" in capsys.readouterr().out
        board = srv.board()
        board.inject(packets)
        board.wait()
        got = board.outputs()
        board.close()
    assert [o.action for o in got] == [w.action for w in want]
    assert [o.data for o in got if o.action == params.XDP_TX] == [w.packet for w in want if w.action == params.XDP_TX]
