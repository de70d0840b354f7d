"""Protocol fuzzer of the simulated board daemon (issue 27): thousands of random, grammar-shaped and truncated
requests; after each the daemon still answers PING within a bound, and every complete line got one reply."""

from __future__ import annotations

import socket
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hxdp.rtl.sim import available as verilator_available

_vok, _vwhy = verilator_available()
PING_BOUND = 2.0
VERBS = ["PING", "R", "W", "I", "RUN", "WAIT", "OUT", "CLEAROUT", "STAT", "RF", "RGO", "STOPPCAP", "LOCK", "UNLOCK",
         "LEASE", "TAKEHOLD", "PCAP", "OUTPCAP", "QUIT!", "r", "w"]
NUMBERS = st.one_of(st.integers(0, 2**64 + 5).map(str), st.integers(0, 2**32).map(hex),
                    st.sampled_from(["-1", "0x", "", "1e3", "0x80030000", "0x80010000", "0x800100ff", "nan", "-"]))
TOKENS = st.one_of(NUMBERS, st.text(st.characters(blacklist_characters="\n"), max_size=12),
                   st.binary(max_size=8).map(bytes.hex))
# QUIT is left out (it would stop the daemon under test); RUN/WAIT counts are kept small enough to be quick
REQUEST = st.builds(lambda v, args: " ".join([v, *args]), st.sampled_from(VERBS),
                    st.lists(TOKENS, max_size=4)).filter(lambda s: not s.upper().startswith(("QUIT", "RUN", "WAIT")))
RAW = st.binary(max_size=200).filter(lambda b: b"QUIT" not in b.upper() and b"RUN" not in b.upper()
                                     and b"WAIT" not in b.upper())


@pytest.fixture(scope="module")
def server():  # noqa: ANN201
    if not _vok:
        pytest.skip(_vwhy)
    from hxdp.board.sim import BoardServer

    with BoardServer(ports=2, step=True) as srv:
        yield srv


def _ping(path: str) -> float:
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(PING_BOUND)
    s.connect(path)
    s.sendall(b"PING\n")
    assert s.recv(100).startswith(b"OK hxdp-board")
    s.close()
    return time.monotonic() - t0


def _exchange(path: str, blob: bytes, truncate: bool) -> None:
    """Send `blob`; with `truncate`, close without reading (a half request is left behind); else count replies."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    s.sendall(blob)
    if not truncate:
        lines = blob.count(b"\n")
        got = b""
        while got.count(b"\n") < lines:
            chunk = s.recv(1 << 16)
            assert chunk, "the daemon closed the connection before replying to every line"
            got += chunk
        # a request may itself end in an ERR; every reply is one line beginning OK or ERR (OUT adds its records)
        first = got.split(b"\n")[0]
        assert first.startswith((b"OK", b"ERR"))
    s.close()


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reqs=st.lists(REQUEST, min_size=1, max_size=5), truncate=st.booleans())
def test_fuzz_grammar_requests(server, reqs: list[str], truncate: bool) -> None:  # noqa: ANN001
    """Grammar-shaped requests (verbs with random operands), whole or cut off mid-line."""
    blob = ("\n".join(r.replace("\n", " ") for r in reqs) + "\n").encode("utf-8", "surrogatepass")
    if truncate:
        blob = blob[: max(1, len(blob) // 2)]
    _exchange(server.socket_path, blob, truncate)
    assert _ping(server.socket_path) < PING_BOUND


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=RAW)
def test_fuzz_random_bytes(server, blob: bytes) -> None:  # noqa: ANN001
    """Random bytes, never read back (the connection closes with whatever half line it left)."""
    _exchange(server.socket_path, blob, truncate=True)
    assert _ping(server.socket_path) < PING_BOUND
