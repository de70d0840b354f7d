"""The simulated board daemon under hostile clients (issue 27, reliability report D3-D9, D29-D31): it cannot be
stalled, grows no unbounded memory, opens no file for a client and lets no one in where they do not belong."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from hxdp import params
from hxdp.board.transport import BoardError, SimBoard
from hxdp.cli import main as cli_main
from hxdp.rtl.sim import available as verilator_available
from hxdp.traffic import gen as traffic
from hxdp.traffic.pcap import write_pcap

_vok, _vwhy = verilator_available()
PING_BOUND = 2.0  # seconds within which PING must answer while another client misbehaves


@pytest.fixture(scope="module")
def server():  # noqa: ANN201
    if not _vok:
        pytest.skip(_vwhy)
    from hxdp.board.sim import BoardServer

    with BoardServer(ports=2, step=True) as srv:
        yield srv


def raw(server, timeout: float = 10.0) -> socket.socket:  # noqa: ANN001
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(server.socket_path)
    return s


def ask(s: socket.socket, line: str) -> str:
    s.sendall(line.encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        got = s.recv(1 << 16)
        if not got:
            raise ConnectionError("closed")
        buf += got
    return buf.decode().strip()


def ping_time(server) -> float:  # noqa: ANN001
    t0 = time.monotonic()
    with raw(server, PING_BOUND) as s:
        assert ask(s, "PING").startswith("OK hxdp-board")
    return time.monotonic() - t0


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_d3_a_client_that_does_not_read_stalls_no_one(server) -> None:  # noqa: ANN001
    """D3: one client pipelines STAT and never reads: others are answered meanwhile, and it is disconnected."""
    s = raw(server, 60.0)
    stop = threading.Event()
    why: list[str] = []

    def flood() -> None:
        try:
            while not stop.is_set():
                s.sendall(b"STAT\n" * 5000)
        except OSError as exc:
            why.append(type(exc).__name__)

    t = threading.Thread(target=flood, daemon=True)
    t.start()
    time.sleep(1.0)
    assert max(ping_time(server) for _ in range(3)) < PING_BOUND
    deadline = time.monotonic() + 25
    closed = False
    while time.monotonic() < deadline and not closed:
        time.sleep(0.5)
        closed = not t.is_alive()
    stop.set()
    s.close()
    assert closed and why and why[0] != "TimeoutError", f"a client that never reads stays connected ({why})"
    assert ping_time(server) < PING_BOUND


def test_d4_run_and_wait_are_sliced_and_bounded(server) -> None:  # noqa: ANN001
    """D4: RUN 10000000 on one connection does not hold up PING on another; counts above the bound are refused."""
    s = raw(server, 120)
    s.sendall(b"RUN 3000000\n")
    time.sleep(0.3)
    assert ping_time(server) < PING_BOUND
    assert s.recv(100).startswith(b"OK ")
    assert ask(s, "RUN 100000001").startswith("ERR RUN 100000001: at most")
    assert ask(s, "RUN 18446744073709551615").startswith("ERR")
    assert ask(s, "WAIT 100000001").startswith("ERR WAIT")
    s.close()


def test_d4_d7_the_daemon_opens_no_file_for_a_client(server, tmp_path: Path) -> None:  # noqa: ANN001
    """D4c, D7: PCAP PATH (a FIFO would block the daemon) and OUTPCAP PATH (a root-owned file truncated on any
    client's behalf) are not requests: pcaps stream over the connection."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    secret = tmp_path / "rootfile"
    secret.write_text("secret\n")
    with raw(server) as s:
        assert ask(s, f"PCAP {fifo}").startswith("ERR unknown")
        assert ask(s, f"OUTPCAP {secret}").startswith("ERR unknown")
    assert secret.read_text() == "secret\n"
    assert ping_time(server) < PING_BOUND


def test_d5_an_endless_line_is_refused_and_memory_stays_bounded(server) -> None:  # noqa: ANN001
    """D5: 8 MiB without a newline: the daemon answers ERR after 1 MiB and closes; its RSS does not follow."""
    pid = server.proc.pid
    before = rss_kb(pid)
    s = raw(server, 10)
    sent = 0
    try:
        for _ in range(8):
            s.sendall(b"A" * (1 << 20))
            sent += 1
    except OSError:
        pass
    reply = b""
    try:
        while chunk := s.recv(4096):
            reply += chunk
    except OSError:
        pass
    s.close()
    assert reply.startswith(b"ERR request line longer than")
    assert rss_kb(pid) < before + 16 * 1024
    assert ping_time(server) < PING_BOUND


def test_d6_input_queue_is_bounded_with_a_drop_counter(server) -> None:  # noqa: ANN001
    """D6: 6000 frames into one port of a stepped board: 4096 are queued, the rest dropped and counted."""
    with SimBoard(server.socket_path) as b:
        b.request("STOPPCAP")
        b.wait()
        b.outputs()
        st0 = b.stat()
        b.inject([bytes(64)] * 6000, 1)
        st = b.stat()
        assert st["queued"] == 4096
        assert st["queue_dropped"] - st0["queue_dropped"] == 6000 - 4096
        b.wait()
        b.outputs()


def test_every_line_gets_a_reply_and_ports_are_checked(server, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """An empty line gets ERR (a pipelining client counts replies); D29: an empty frame `-` is a runt, not an
    error; D30: a port number above the board's is refused, not truncated."""
    with raw(server) as s:
        s.sendall(b"\n   \nPING\n")
        buf = b""
        while buf.count(b"\n") < 3:
            buf += s.recv(4096)
        assert buf.decode().splitlines() == ["ERR empty request", "ERR empty request", "OK hxdp-board ports=2"]
        assert ask(s, "I 4294967296 " + "00" * 64) == "ERR no port 4294967296"
        assert ask(s, "I 2 " + "00" * 64) == "ERR no port 2"
    with SimBoard(server.socket_path) as b:
        runts = b.stat()["runts"]
        b.inject([b"", bytes(64)], 0)
        assert b.stat()["runts"] == runts + 1
    spec = f"sim:{server.socket_path}"
    pcap = tmp_path / "z.pcap"
    write_pcap(pcap, [b"", bytes(64), b"", bytes(64)])
    assert cli_main(["board", "send", str(pcap), "--board", spec]) == 0
    assert cli_main(["board", "send", str(pcap), "--port", "4294967296", "--board", spec]) == 1
    assert "--port 4294967296" in capsys.readouterr().err


def test_d31_replay_streams_through_the_strict_reader(server, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D31: `board send --loop` reads the pcap on the client with the reader `run` uses: a truncated record is
    refused with the same one-line error; a good pcap replays (streamed, the daemon opens nothing)."""
    spec = f"sim:{server.socket_path}"
    good = tmp_path / "g.pcap"
    write_pcap(good, traffic.generate(8, 8, 64, "udp", 1))
    bad = tmp_path / "t.pcap"
    bad.write_bytes(good.read_bytes()[:-1])
    assert cli_main(["board", "send", str(bad), "--loop", "--board", spec]) == 1
    assert "t.pcap" in capsys.readouterr().err
    with SimBoard(server.socket_path) as b:
        b.replay(good, 0, loop=False)
        assert b.stat()["replaying"] == 1
        b.wait()
        assert b.stat()["replaying"] == 0
        b.outputs()


def test_d9_board_out_keeps_the_frames_when_the_pcap_cannot_be_written(server, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D9: `board out --pcap DIR` fails before taking the outputs off the board: a second `out` still has them."""
    spec = f"sim:{server.socket_path}"
    with SimBoard(server.socket_path) as b:
        b.inject(traffic.generate(8, 4, 64, "udp", 2), 0)
        b.wait()
        n = b.stat()["outputs"]
    assert n >= 4
    (tmp_path / "adir").mkdir()
    assert cli_main(["board", "out", "--pcap", str(tmp_path / "adir"), "--board", spec]) == 1
    capsys.readouterr()
    assert cli_main(["board", "out", "--board", spec]) == 0
    assert len(capsys.readouterr().out.splitlines()) == n


def test_d7_d8_socket_mode_and_no_unlink_of_a_file(tmp_path: Path) -> None:
    """D7: the socket is 0600 even under umask 000 (0660 with --group); D8: a regular file at the socket path is
    refused and left as it was."""
    if not _vok:
        pytest.skip(_vwhy)
    from hxdp.board.sim import BoardServer, server_args

    victim = tmp_path / "victim.txt"
    victim.write_text("precious data\n")
    proc = subprocess.run(server_args(str(victim), step=True), capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "is not a socket" in proc.stderr
    assert victim.read_text() == "precious data\n"
    old = os.umask(0)
    try:
        with BoardServer(str(tmp_path / "open.sock"), step=True) as srv:
            assert stat.S_IMODE(os.stat(srv.socket_path).st_mode) == 0o600
    finally:
        os.umask(old)
    with BoardServer(str(tmp_path / "g.sock"), step=True, group=str(os.getgid())) as srv:
        assert stat.S_IMODE(os.stat(srv.socket_path).st_mode) == 0o660


def test_d7_other_users_cannot_connect(tmp_path: Path) -> None:
    """D7: a user other than the daemon's gets EACCES on the 0600 socket."""
    if not _vok:
        pytest.skip(_vwhy)
    if os.geteuid() != 0:
        pytest.skip("needs root to act as another user")
    from hxdp.board.sim import BoardServer

    tmp_path.chmod(0o755)
    with BoardServer(str(tmp_path / "b.sock"), step=True) as srv:
        code = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1]); print('in')\n"
                "except PermissionError: print('refused')")
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.setgid(65534)
            os.setuid(65534)
            out = subprocess.run(["python3", "-c", code, srv.socket_path], capture_output=True, text=True)
            os._exit(0 if out.stdout.strip() == "refused" else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0


def test_protocol_errors_reach_the_client_as_board_errors(server) -> None:  # noqa: ANN001
    """The Python client turns the new bounds into one-line errors."""
    with SimBoard(server.socket_path) as b, pytest.raises(BoardError, match="at most"):
        b.run(params.IMEM_ROWS * 10**6)


def test_d4_wait_during_a_loop_replay_is_refused_at_once(server, tmp_path: Path) -> None:  # noqa: ANN001
    """D4b: `WAIT` (board out --wait) while a pcap loops would never drain: refused at once, others unaffected."""
    pcap = tmp_path / "l.pcap"
    write_pcap(pcap, traffic.generate(8, 4, 64, "udp", 7))
    with SimBoard(server.socket_path) as b:
        b.replay(pcap, 0, loop=True)
        t0 = time.monotonic()
        with pytest.raises(BoardError, match="loop replay"):
            b.wait()
        assert time.monotonic() - t0 < PING_BOUND
        b.stop_replay()
        b.wait()
        b.outputs()


def test_a_stale_socket_is_replaced_after_kill_9(tmp_path: Path) -> None:
    """Held up well before and must stay so: after SIGKILL the stale socket is replaced on restart (only a socket
    is ever unlinked)."""
    if not _vok:
        pytest.skip(_vwhy)
    from hxdp.board.sim import BoardServer

    path = str(tmp_path / "b.sock")
    first = BoardServer(path, step=True).start()
    assert first.proc is not None
    first.proc.kill()
    first.proc.wait()
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    with BoardServer(path, step=True) as again, again.board() as b:
        assert b.ping().startswith("hxdp-board")
    first.stop()
