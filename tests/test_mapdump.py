"""Array maps dump as one blob (hxdp.mapdump): the same entries as key by key, compared whole, differences found."""

from __future__ import annotations

import pytest
from kernel_fixtures import requires_kernel

from hxdp.diff import map_diff
from hxdp.mapdump import ArrayDump, SkipBytes, differing_keys, masked
from hxdp.traffic import maglev


def test_array_dump_reads_like_a_dict() -> None:
    d = ArrayDump(bytes(range(12)), 4)
    assert dict(d) == {b"\0\0\0\0": bytes([0, 1, 2, 3]), b"\1\0\0\0": bytes([4, 5, 6, 7]),
                       b"\2\0\0\0": bytes([8, 9, 10, 11])}
    assert d == dict(d) and d == ArrayDump(bytes(range(12)), 4) and d != ArrayDump(bytes(12), 4)
    with pytest.raises(KeyError):
        d[b"\3\0\0\0"]


def test_differences_of_a_large_array_are_found_by_index() -> None:
    n = 1 << 20
    a = ArrayDump(bytes(4 * n), 4)
    changed = bytearray(a.blob)
    changed[4 * 700_001] = 1
    changed[4 * (n - 1) + 3] = 9
    b = ArrayDump(bytes(changed), 4)
    keys = [int.from_bytes(k, "little") for k in differing_keys(a, b)]
    assert keys == [700_001, n - 1]
    lines = map_diff({"ring": a}, {"ring": b})
    assert len(lines) == 2 and "key 61ae0a00" in lines[0]
    assert map_diff({"ring": a}, {"ring": ArrayDump(a.blob, 4)}) == []


def test_array_dump_against_a_dict() -> None:
    a = ArrayDump(bytes(8), 4)
    assert list(differing_keys(a, {b"\0\0\0\0": bytes(4), b"\1\0\0\0": b"\1\0\0\0"})) == [b"\1\0\0\0"]


def test_maglev_ring_spreads_slots_evenly() -> None:
    ring = maglev.table([1, 2, 3], 65537)
    counts = [ring.count(b) for b in (1, 2, 3)]
    assert sum(counts) == 65537 and max(counts) - min(counts) <= 1
    with pytest.raises(ValueError):
        maglev.table([], 13)


@pytest.mark.kernel
@requires_kernel
def test_kernel_array_dump_equals_key_by_key() -> None:
    from hxdp.suite import program

    prog = program("l4_load_balancer")
    with prog.kernel() as k:
        k.apply_config(prog.map_config(), source=str(prog.maps))
        for name in ("ch_rings", "reals"):
            blob = k.array_dump(name)
            assert len(blob) == k.map(name).max_entries
            assert dict(blob) == {key: k.lookup(name, key) for key in k.keys(name)}


def test_skip_bytes_parse_and_mask() -> None:
    s = SkipBytes.parse("stats:8:8:02020000")
    assert (s.map, s.offset, s.size, s.key) == ("stats", 8, 8, bytes.fromhex("02020000"))
    for bad in ("stats", "stats:8", "stats:8:0", "stats:8:8:123", "9x:1:1", "a-b:1:1"):
        with pytest.raises(ValueError):
            SkipBytes.parse(bad)
    a = ArrayDump(bytes(range(16)) * 4, 16)
    assert masked({"stats": a}, [s])["stats"] == a  # key 514: beyond this array, nothing to leave out
    m = masked({"stats": a, "other": {b"k": bytes(16)}}, [SkipBytes.parse("stats:8:8:02000000"),
                                                         SkipBytes.parse("other:0:2")])
    assert m["stats"][bytes.fromhex("02000000")] == bytes(range(8)) + bytes(8)
    assert m["stats"][bytes.fromhex("01000000")] == bytes(range(16))
    assert m["other"][b"k"] == bytes(16)
    whole = masked({"stats": a}, [SkipBytes.parse("stats:12:100")])["stats"]
    assert all(v == bytes(range(12)) + bytes(4) for v in whole.values())


def test_diff_cli_refuses_a_bad_skip(tmp_path) -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "hxdp.cli", "diff", "x.o", "--pcap", "x.pcap", "--skip-bytes", "stats:1"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "--skip-bytes" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
