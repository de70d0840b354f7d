"""Map layout and MapState semantics per map type, and a random-sequence differential test against kernel maps."""

from __future__ import annotations

import ctypes
import json
import random
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import requires_kernel

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.frontend.program import MapDef
from hxdp.models.maps import (
    BPF_ANY,
    BPF_EXIST,
    BPF_NOEXIST,
    E2BIG,
    EEXIST,
    EINVAL,
    ENOENT,
    ENOSPC,
    LAYOUT_VERSION,
    MapLayout,
    MapState,
    key_hash,
)

T = params.MAP_TYPE_IDS
MAPS_ALL = Path(__file__).parent / "data" / "models" / "maps_all.c"


def u32(x: int) -> bytes:
    return x.to_bytes(4, "little")


def u64(x: int) -> bytes:
    return x.to_bytes(8, "little")


def state(*maps: MapDef) -> MapState:
    return MapState.from_maps(list(maps))


def test_layout_placement_alignment_and_json() -> None:
    maps = [MapDef("a", T["array"], 4, 12, 3), MapDef("h", T["hash"], 6, 4, 5), MapDef("l", T["lpm_trie"], 8, 4, 4),
            MapDef(".rodata", T["array"], 4, 5, 1, initial=b"hello", section=".rodata")]
    lay = MapLayout.from_maps(maps)
    a, h, lpm, ro = lay.regions
    assert (a.offset, a.slot_size, a.size) == (0, 16, 48)
    assert h.offset == 64 and h.slots == 16 and h.slot_size == 8 + 8 + 8 and h.data_offset == 16
    assert lpm.offset % 64 == 0 and lpm.slot_size == 8 + 8 + 8
    assert lay.handle(2) == params.MAP_HANDLE_BASE + 2
    assert lay.value_addr(3, 2) == params.map_tag(ro.offset, 5, bool(ro.flags & params.BPF_F_RDONLY_PROG)) << 32 \
        | params.MAP_BASE + ro.offset + 2
    doc = json.loads(lay.to_json())
    assert doc["version"] == LAYOUT_VERSION and doc["maps"][1]["name"] == "h"
    assert MapLayout.from_json(lay.to_json()).regions == lay.regions
    s = MapState(lay)
    assert s.lookup(3, u32(0)) == b"hello"


def test_layout_errors() -> None:
    with pytest.raises(HxdpError, match="map q: map type 22 is not supported"):
        MapLayout.from_maps([MapDef("q", 22, 0, 4, 4)])
    with pytest.raises(HxdpError, match="map jt: prog_array needs 4-byte keys and values, not 4/8"):
        MapLayout.from_maps([MapDef("jt", 3, 4, 8, 4)])
    with pytest.raises(HxdpError, match="map big: needs"):  # placed on chip by the user (else: in QDR)
        MapLayout.from_maps([MapDef("big", T["hash"], 8, 64, 100_000, tier="bram")])
    with pytest.raises(HxdpError, match="format"):
        MapLayout.from_json('{"format": "x", "version": 1}')


def test_key_hash_documented_values() -> None:
    # docs/maps.md gives these values so that the host and the RTL can check their hash
    def mix(x: int) -> int:
        h = (x * 0x9E3779B1) & 0xFFFFFFFF
        return h ^ (h >> 16)

    assert key_hash(b"") == 0
    assert key_hash(u32(1)) == mix(4 ^ 1)
    assert key_hash(b"\x01\x02") == mix(2 ^ 0x0201)  # zero-padded to a word
    # 16 bytes: words rotated left by 0, 7, 14, 21 bits
    w = [0x03020100, 0x07060504, 0x0B0A0908, 0x0F0E0D0C]
    rot = [w[0], ((w[1] << 7) | (w[1] >> 25)) & 0xFFFFFFFF, ((w[2] << 14) | (w[2] >> 18)) & 0xFFFFFFFF,
           ((w[3] << 21) | (w[3] >> 11)) & 0xFFFFFFFF]
    assert key_hash(bytes(range(16))) == mix(16 ^ rot[0] ^ rot[1] ^ rot[2] ^ rot[3])


def test_array_semantics() -> None:
    s = state(MapDef("a", T["array"], 4, 8, 2))
    assert s.dump()["a"] == {u32(0): u64(0), u32(1): u64(0)}
    assert s.update(0, u32(1), u64(5), BPF_EXIST) == 0
    assert s.update(0, u32(1), u64(5), BPF_NOEXIST) == -EEXIST
    assert s.update(0, u32(2), u64(5)) == -E2BIG
    assert s.update(0, u32(0), u64(5), 7) == -EINVAL
    assert s.delete(0, u32(0)) == -EINVAL
    assert s.lookup(0, u32(1)) == u64(5) and s.lookup(0, u32(2)) is None


@pytest.mark.parametrize("kind", ["hash", "percpu_hash", "devmap_hash"])
def test_hash_semantics(kind: str) -> None:
    vs = 4
    s = state(MapDef("h", T[kind], 4, vs, 3))
    v = u32(1)
    assert s.update(0, u32(1), v, BPF_EXIST) == (0 if kind == "devmap_hash" else -ENOENT)
    assert s.update(0, u32(1), v, BPF_NOEXIST) == (-EEXIST if kind == "devmap_hash" else 0)
    assert s.update(0, u32(1), v, BPF_NOEXIST) == -EEXIST
    assert s.update(0, u32(2), v) == 0 and s.update(0, u32(3), v) == 0
    assert s.update(0, u32(4), v) == -E2BIG
    assert s.update(0, u32(3), u32(9)) == 0  # replacing works when full
    assert s.delete(0, u32(2)) == 0 and s.delete(0, u32(2)) == -ENOENT
    assert s.update(0, u32(4), v) == 0
    assert s.dump()["h"] == {u32(1): v, u32(3): u32(9), u32(4): v}
    assert s.count(0) == 3


def test_hash_collisions_and_tombstones() -> None:
    s = state(MapDef("h", T["hash"], 4, 8, 64))
    rng = random.Random(5)
    ref: dict[bytes, bytes] = {}
    for _ in range(2000):
        k = u32(rng.randrange(100))
        if rng.random() < 0.4:
            assert s.delete(0, k) == (0 if k in ref else -ENOENT)
            ref.pop(k, None)
        else:
            v = u64(rng.getrandbits(64))
            ret = s.update(0, k, v)
            if k in ref or len(ref) < 64:
                assert ret == 0
                ref[k] = v
            else:
                assert ret == -E2BIG
        assert s.lookup(0, k) == ref.get(k)
    assert s.dump()["h"] == ref


def test_lru_evicts_least_recently_used() -> None:
    s = state(MapDef("l", T["lru_hash"], 4, 8, 3))
    for k in (1, 2, 3):
        assert s.update(0, u32(k), u64(k)) == 0
    assert s.lookup_offset(0, u32(1), from_program=True) is not None  # 1 becomes most recent
    assert s.lookup(0, u32(2)) == u64(2)  # host lookups do not refresh
    assert s.update(0, u32(4), u64(4)) == 0  # evicts 2
    assert set(s.dump()["l"]) == {u32(1), u32(3), u32(4)}
    assert s.update(0, u32(5), u64(5), BPF_EXIST) == -ENOENT


def lpm_key(plen: int, *octets: int) -> bytes:
    return u32(plen) + bytes(octets)


def test_lpm_longest_prefix() -> None:
    s = state(MapDef("r", T["lpm_trie"], 8, 4, 3, flags=1))
    assert s.update(0, lpm_key(8, 10, 0, 0, 0), u32(1)) == 0
    assert s.update(0, lpm_key(24, 10, 1, 2, 0), u32(2)) == 0
    assert s.update(0, lpm_key(0, 0, 0, 0, 0), u32(3)) == 0
    assert s.lookup(0, lpm_key(32, 10, 1, 2, 3)) == u32(2)
    assert s.lookup(0, lpm_key(32, 10, 1, 3, 3)) == u32(1)
    assert s.lookup(0, lpm_key(32, 11, 1, 3, 3)) == u32(3)
    assert s.lookup(0, lpm_key(16, 10, 1, 2, 3)) == u32(1)  # the key's prefixlen bounds the match
    assert s.update(0, lpm_key(16, 9, 9, 0, 0), u32(4)) == -ENOSPC
    assert s.update(0, lpm_key(24, 10, 1, 2, 99), u32(5)) == 0  # same prefix: replaced, even when full
    assert s.update(0, lpm_key(33, 10, 1, 2, 0), u32(5)) == -EINVAL
    assert s.update(0, lpm_key(8, 10, 7, 7, 7), u32(6), BPF_NOEXIST) == -EEXIST
    assert s.delete(0, lpm_key(24, 10, 1, 2, 0)) == 0
    assert s.delete(0, lpm_key(24, 10, 1, 2, 0)) == -ENOENT
    assert s.lookup(0, lpm_key(32, 10, 1, 2, 3)) == u32(1)
    assert s.update(0, lpm_key(9, 10, 0, 0, 0), u32(7), BPF_EXIST) == -ENOENT


def test_devmap() -> None:
    s = state(MapDef("d", T["devmap"], 4, 4, 4), MapDef("d8", T["devmap"], 4, 8, 2))
    assert s.dump()["d"] == {}
    assert s.update(0, u32(2), u32(7)) == 0
    assert s.dump()["d"] == {u32(2): u32(7)}
    assert s.lookup(0, u32(1)) is None
    assert s.delete(0, u32(2)) == 0 and s.dump()["d"] == {}
    assert s.delete(0, u32(9)) == -EINVAL
    assert s.update(1, u32(1), u32(3) + u32(0)) == 0
    with pytest.raises(HxdpError, match="with a program"):
        s.update(1, u32(1), u32(3) + u32(5))


def test_apply_config_and_errors() -> None:
    s = state(MapDef("h", T["hash"], 4, 4, 1))
    s.apply_config({"maps": {"h": [{"key": "01000000", "value": "02000000"}]}})
    assert s.dump()["h"] == {u32(1): u32(2)}
    with pytest.raises(HxdpError, match="map h: initial entry 02000000 rejected"):
        s.apply_config({"maps": {"h": [{"key": "02000000", "value": "02000000"}]}})
    with pytest.raises(HxdpError, match="no map named 'zz'"):
        s.apply_config({"maps": {"zz": []}})
    with pytest.raises(HxdpError, match="key of 3 bytes"):
        s.lookup(0, b"abc")


# --- differential test against the kernel's maps ----------------------------------------------------------------
def _kernel_update(kp, name: str, key: bytes, value: bytes, flags: int) -> int:
    m = kp.map(name)
    if m.percpu:
        slot = (m.value_size + 7) // 8 * 8
        value = (value + bytes(slot - len(value))) * kp.ncpus
    k = ctypes.create_string_buffer(key, len(key))
    v = ctypes.create_string_buffer(value, len(value))
    return kp.lib.bpf_map_update_elem(m.fd, k, v, ctypes.c_uint64(flags))


def _kernel_delete(kp, name: str, key: bytes) -> int:
    return kp.lib.bpf_map_delete_elem(kp.map(name).fd, ctypes.create_string_buffer(key, len(key)))


def _random_key(rng: random.Random, name: str, size: int) -> bytes:
    if name == "m_lpm":
        plen = rng.choice([0, 8, 16, 24, 32, 12])
        return u32(plen) + bytes([10, rng.randrange(3), rng.randrange(2), rng.randrange(256)])
    if name in ("m_array", "m_parray", "m_devmap"):
        return u32(rng.randrange(7))
    pool = 12
    return rng.randrange(pool).to_bytes(size, "little")


def _random_value(rng: random.Random, name: str, size: int) -> bytes:
    if name == "m_devmap":
        return u32(rng.choice([0, 1]))
    if name == "m_devhash":
        return u32(1)
    return rng.getrandbits(8 * size).to_bytes(size, "little")


@pytest.mark.kernel
@requires_kernel
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_maps_against_kernel(seed: int, tmp_path: Path) -> None:
    from hxdp.frontend.elf import load_maps
    from hxdp.linux import kernel

    obj = compile_bpf(MAPS_ALL, tmp_path)
    maps = load_maps(obj)  # every map of the object, referenced by its program or not (the host writes them all)
    model = MapState.from_maps(maps)
    rng = random.Random(seed)
    with kernel.KernelProgram(obj) as kp:
        for step in range(400):
            mid = rng.randrange(len(maps))
            md = maps[mid]
            if md.name == "m_lru" and model.count(mid) >= md.max_entries - 8:
                continue  # the kernel's LRU is approximate: stay below capacity
            key = _random_key(rng, md.name, md.key_size)
            what = rng.random()
            if what < 0.55:
                value = _random_value(rng, md.name, md.value_size)
                flags = rng.choice([BPF_ANY, BPF_ANY, BPF_NOEXIST, BPF_EXIST])
                if md.name == "m_devhash" and flags == BPF_EXIST:
                    flags = BPF_ANY  # the kernel does not check BPF_EXIST on devmap_hash (documented)
                got, want = model.update(mid, key, value, flags), _kernel_update(kp, md.name, key, value, flags)
                assert got == want, f"step {step}: update {md.name} {key.hex()} flags {flags}: {got} != {want}"
            elif what < 0.8:
                got, want = model.delete(mid, key), _kernel_delete(kp, md.name, key)
                assert got == want, f"step {step}: delete {md.name} {key.hex()}: {got} != {want}"
            else:
                got_v, want_v = model.lookup(mid, key), kp.lookup(md.name, key, kp._run_cpu())
                assert got_v == want_v, f"step {step}: lookup {md.name} {key.hex()}"
        assert model.dump() == kp.dump()


def test_map_access_latency_does_not_depend_on_key_size() -> None:
    from hxdp.models.helpers import helper_latency

    lookup, update = params.HELPER_IDS["map_lookup_elem"], params.HELPER_IDS["map_update_elem"]
    costs = set()
    for ks in range(1, 17):
        s = state(MapDef("h", T["hash"], ks, 8, 16))
        key = bytes(range(1, ks + 1))
        assert s.update(0, key, u64(1)) == 0
        up = helper_latency(update, s.last_probes, ks, 8)
        assert s.lookup_offset(0, key) is not None
        costs.add((up, helper_latency(lookup, s.last_probes, ks)))
    assert len(costs) == 1
    csum = params.HELPER_IDS["csum_diff"]
    assert helper_latency(csum, size=4) < helper_latency(csum, size=40) < helper_latency(csum, size=400)
