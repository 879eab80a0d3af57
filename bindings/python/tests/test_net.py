"""The network client (issue 18): hurray.connect / hurray.Client against a real
`hurray serve` on 127.0.0.1, error mapping, KeyboardInterrupt mid-transfer through a
stalling proxy, and timeouts. Every test ends with the live-handle count back at its
baseline (conftest) and the server still serving."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

import hurray

ROOT = pathlib.Path(__file__).resolve().parents[3]


def hurray_bin() -> str | None:
    """The `hurray` CLI: $HURRAY_BIN, else target/{release,debug}/hurray, else PATH."""
    env = os.environ.get("HURRAY_BIN")
    if env:
        return env
    for profile in ("release", "debug"):
        p = ROOT / "target" / profile / "hurray"
        if p.exists():
            return str(p)
    return shutil.which("hurray")


BIN = hurray_bin()
pytestmark = pytest.mark.skipif(
    BIN is None, reason="no hurray CLI (cargo build -p hurray-cli, or set HURRAY_BIN)"
)

BIG = 64 << 20  # bytes of the tensor the interrupt and timeout tests stop midway


class Server:
    """`hurray serve FILE --listen 127.0.0.1:0`, stopped with SIGTERM."""

    def __init__(self, path: pathlib.Path):
        self.proc = subprocess.Popen(
            [BIN, "serve", str(path), "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        assert " on " in line, f"unexpected first line of hurray serve: {line!r}"
        self.addr = line.rsplit(" on ", 1)[1].strip()
        self.port = int(self.addr.rsplit(":", 1)[1])

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class StallingProxy:
    """Forwards client -> server freely and only the first `allow` bytes of
    server -> client, then holds the rest (a transfer that stalls midway)."""

    def __init__(self, port: int, allow: int):
        self.lsock = socket.create_server(("127.0.0.1", 0))
        self.addr = "127.0.0.1:%d" % self.lsock.getsockname()[1]
        self.port, self.allow = port, allow
        self.forwarded = 0
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.socks: list[socket.socket] = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self.threads.append(t)

    def _accept(self) -> None:
        self.lsock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                c, _ = self.lsock.accept()
            except (socket.timeout, OSError):
                continue
            s = socket.create_connection(("127.0.0.1", self.port))
            self.socks += [c, s]
            for src, dst, limited in ((c, s, False), (s, c, True)):
                t = threading.Thread(target=self._pump, args=(src, dst, limited), daemon=True)
                t.start()
                self.threads.append(t)

    def _pump(self, src: socket.socket, dst: socket.socket, limited: bool) -> None:
        src.settimeout(0.1)
        while not self.stop.is_set():
            if limited and self.forwarded >= self.allow:
                time.sleep(0.02)  # stalled: read nothing more
                continue
            try:
                data = src.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            if limited:
                data = data[: self.allow - self.forwarded]
                self.forwarded += len(data)
            try:
                dst.sendall(data)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=2)
        for s in self.socks + [self.lsock]:
            s.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("net")
    path = d / "served.hrry"
    big = np.arange(BIG // 4, dtype=np.uint32)
    hurray.save(
        path,
        {
            "w": hurray.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4)),
            "b": hurray.from_numpy(np.array([1, -2, 3], dtype=np.int64)),
            "big": hurray.from_numpy(big),
        },
    )
    del big
    server = Server(path)
    yield server
    server.stop()


def check_healthy(addr: str) -> None:
    """A fresh client still gets a real value from the server."""
    with hurray.connect(addr) as c:
        assert np.asarray(c.get("w")).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def test_get_returns_the_stored_tensor(served):
    with hurray.connect(served.addr) as c:
        w = c.get("w")
        assert w.dtype == hurray.float32 and w.shape == (3, 4)
        assert np.asarray(w).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
        b = c.get("b", layouts=["row_major"], alignment=128)
        assert np.asarray(b).tolist() == [1, -2, 3]
        assert np.asarray(b).ctypes.data % 64 == 0  # received into aligned memory
        info = c.server_info
        assert info["protocol_version"] >= 1
        assert info["max_message_size"] >= 4096
        assert isinstance(info["parallel_streams"], bool)
        assert not c.closed
    assert c.closed


def test_big_get_is_exact_and_parallel_ok(served):
    with hurray.connect(served.addr) as c:
        t = c.get("big", parallel=True)
        a = np.asarray(t)
        assert a.nbytes == BIG
        assert int(a[0]) == 0 and int(a[-1]) == BIG // 4 - 1 and int(a[12345]) == 12345
        del a, t


def test_put_then_get_round_trips(served):
    x = hurray.from_numpy(np.array([[1.5, -2.0], [0.25, 8.0]], dtype=np.float64))
    with hurray.connect(served.addr) as c:
        c.put("fresh", x)
        got = c.get("fresh")
        assert got.dtype == hurray.float64 and got.shape == (2, 2)
        assert np.asarray(got).tolist() == [[1.5, -2.0], [0.25, 8.0]]
    with hurray.connect(served.addr) as c2:  # another connection sees it too
        assert np.asarray(c2.get("fresh")).tolist() == [[1.5, -2.0], [0.25, 8.0]]


def test_unknown_key_is_not_found_with_net_code_2(served):
    with hurray.connect(served.addr) as c:
        with pytest.raises(hurray.NotFoundError) as e:
            c.get("no-such-key")
        assert isinstance(e.value, KeyError)
        assert e.value.net_code == 2
        assert "UNKNOWN_TENSOR" in str(e.value)
        assert np.asarray(c.get("b")).tolist() == [1, -2, 3]  # still usable


def test_connection_refused_is_an_oserror():
    s = socket.create_server(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(hurray.FileError) as e:
        hurray.connect(f"127.0.0.1:{port}")
    assert isinstance(e.value, OSError)
    assert e.value.net_code is None


def test_bad_address_and_options():
    with pytest.raises(ValueError, match="host:port"):
        hurray.connect("localhost")
    with pytest.raises(ValueError, match="timeout"):
        hurray.connect("127.0.0.1:1", timeout=-1)


def test_keyboard_interrupt_mid_transfer_releases_everything(served):
    proxy = StallingProxy(served.port, allow=4 << 20)
    try:
        c = hurray.connect(proxy.addr)
        # A real SIGINT to the main thread once the transfer stalls, repeated every
        # 0.5 s while the get is still running: one CI run on a loaded machine saw a
        # single signal have no effect (the get ran into its 60 s stall timeout), so
        # the test bounds the time from the first signal, not the number of signals.
        # The handler raises KeyboardInterrupt once (as Python's default handler
        # does) and ignores later signals, so a late one cannot hit pytest itself.
        returned = threading.Event()
        sent: list[float] = []
        raised: list[float] = []

        def handler(signum, frame):
            if not raised:
                raised.append(time.monotonic())
                raise KeyboardInterrupt

        def interrupt() -> None:
            while not returned.wait(0.5 if sent else 0.3) and len(sent) < 20:
                sent.append(time.monotonic())
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

        previous = signal.signal(signal.SIGINT, handler)
        sender = threading.Thread(target=interrupt, daemon=True)
        try:
            sender.start()
            try:
                with pytest.raises(KeyboardInterrupt):
                    c.get("big")
                done = time.monotonic()
            finally:
                returned.set()
                sender.join()
                time.sleep(0.05)  # lets a late signal reach the handler (ignored)
        finally:
            signal.signal(signal.SIGINT, previous)
        assert sent and raised, "no signal was sent or none took effect"
        assert 0 < proxy.forwarded <= 4 << 20 < BIG  # stopped midway
        elapsed = done - sent[0]
        assert elapsed < 3.0, f"the interrupt took {elapsed:.2f} s ({len(sent)} signals sent) to take effect"
        assert c.closed
        with pytest.raises(hurray.StreamError, match="closed"):
            c.get("w")
        del c
    finally:
        proxy.close()
    check_healthy(served.addr)


def test_timeout_mid_transfer_raises_and_releases(served):
    proxy = StallingProxy(served.port, allow=2 << 20)
    try:
        with hurray.connect(proxy.addr, timeout=0.4) as c:
            t0 = time.monotonic()
            with pytest.raises(hurray.FileError, match="timed out") as e:
                c.get("big")
            assert time.monotonic() - t0 < 3.0
            assert e.value.net_code is None
            with pytest.raises(hurray.StreamError, match="not connected"):
                c.get("w")
    finally:
        proxy.close()
    check_healthy(served.addr)


def test_close_from_another_thread_cancels_a_call(served):
    proxy = StallingProxy(served.port, allow=1 << 20)
    try:
        c = hurray.connect(proxy.addr)
        threading.Timer(0.3, c.close).start()
        with pytest.raises(hurray.StreamError, match="cancelled"):
            c.get("big")
        assert c.closed
        del c
    finally:
        proxy.close()
    check_healthy(served.addr)


def test_a_composite_round_trips_and_its_members_are_served(tmp_path):
    path = tmp_path / "part.hrry"
    halves = [hurray.from_numpy(np.array([1, 2], dtype=np.int32)),
              hurray.from_numpy(np.array([3, 4], dtype=np.int32))]
    hurray.save(path, {"p": hurray.Composite("partition", shape=[4], dtype=hurray.int32,
                                             members=halves, offsets=[[0], [2]])})
    del halves
    server = Server(path)
    try:
        with hurray.connect(server.addr) as c:
            p = c.get("p")
            assert isinstance(p, hurray.Composite)
            assert (p.composition_rule, p.shape, len(p)) == ("partition", (4,), 2)
            assert [np.asarray(m).tolist() for m in p] == [[1, 2], [3, 4]]
            assert [tuple(m.shard.shard_offset) for m in p] == [(0,), (2,)]
            assert np.asarray(c.get("p/1")).tolist() == [3, 4]  # a member by its own key
            # Put it back under another key (a composite whose members are the
            # received buffers) and a new overlay; both come back field for field.
            c.put("q", p)
            base = hurray.from_numpy(np.zeros((2, 2), dtype=np.float32))
            fix = hurray.from_numpy(np.array([[5.0]], dtype=np.float32))
            o = hurray.Composite("overlay", shape=(2, 2), dtype=hurray.float32,
                                 members=[base, fix], combine_op="add",
                                 offsets=[(0, 0), (1, 1)], roles=["base", "correction"])
            c.put("o", o)
            q = c.get("q")
            assert [np.asarray(m).tolist() for m in q] == [[1, 2], [3, 4]]
            back = c.get("o")
            assert (back.composition_rule, back.combine_op) == ("overlay", "add")
            assert [m.role for m in back] == ["base", "correction"]
            assert np.asarray(back[1]).tolist() == [[5.0]]
            with pytest.raises(TypeError, match="hurray.Tensor or hurray.Composite"):
                c.put("x", np.zeros(3))
            del p, q, o, back, base, fix
    finally:
        server.stop()
