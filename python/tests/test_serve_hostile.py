"""The live server (lmprof/_serve.py) against hostile clients: deep nesting, lone surrogates,
undecodable bytes, lockout by silent connections, reconnect storms and floods. Whatever a
peer sends, it loses at most its own connection; the run is served to the end and the
server holds what its bounds say (docs/WATCH.md, "Live"; docs/LIMITS.md). ctest runs this
file as `watch_live_server_hostile_clients`; the training cost of a reconnect storm is a
ratio measured in bench/watch_live_storm.py, not asserted here."""

from __future__ import annotations

import json
import select
import socket
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn

import lmprof
from conftest import TOKEN
from lmprof import _serve

HANG_GUARD_S = 60.0  # a socket read that waits longer than this is a hang, not slowness


class Client:
    """A raw protocol client that may connect from another loopback address."""

    def __init__(self, port: int, source: str = "127.0.0.1") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S,
                                             source_address=(source, 0))
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def hello(self, token: str = TOKEN) -> None:
        self.send(json.dumps({"type": "hello", "protocol": _serve.PROTOCOL, "token": token,
                              "client": "hostile-test"}).encode() + b"\n")

    def read(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("the server closed the connection without a message")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def messages_until(self, kind: str) -> Iterator[dict[str, Any]]:
        while True:
            message = self.read()
            yield message
            if message["type"] == kind:
                return

    def close(self) -> None:
        self.sock.close()


def fast_loop() -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    model = nn.Linear(8, 8)
    return model, torch.optim.SGD(model.parameters(), lr=1e-3)


def train(run: lmprof.Run, model: nn.Module, optimizer: torch.optim.Optimizer,
          steps: int) -> None:
    x = torch.randn(4, 8)
    for _ in range(steps):
        with run.step():
            loss = model(x).square().mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


def watched(token_file: Path) -> tuple[lmprof.Run, nn.Module, torch.optim.Optimizer]:
    model, optimizer = fast_loop()
    run = lmprof.watch(model, optimizer, name="hostile", listen="127.0.0.1:0",
                       token_file=str(token_file))
    assert run.port
    return run, model, optimizer


def assert_a_viewer_gets_the_run(run: lmprof.Run, model: nn.Module,
                                 optimizer: torch.optim.Optimizer) -> None:
    """The server is alive: a new viewer is welcomed and sees steps to the run's end."""
    viewer = Client(run.port)
    viewer.hello()
    assert viewer.read()["type"] == "welcome"
    train(run, model, optimizer, 3)
    run.close()
    kinds = [m["type"] for m in viewer.messages_until("run_finished")]
    assert "step" in kinds and kinds[-1] == "run_finished"
    viewer.close()


HOSTILE_LINES: dict[str, bytes] = {
    # 2,000 levels in 4,000 bytes: under the 4 KiB pre-hello limit, past json's recursion
    "nested arrays": b"[" * 2000 + b"]" * 2000 + b"\n",
    "nested objects": b'{"a":' * 600 + b"1" + b"}" * 600 + b"\n",
    "a lone surrogate as the token":
        b'{"type":"hello","protocol":6,"token":"\\ud800","client":"x"}\n',
    "a surrogate pair split": b'{"type":"hello","protocol":6,"token":"\\udfff\\ud800"}\n',
    "invalid UTF-8": b'{"type":"hello","token":"\xff\xfe"}\n',
    "a token that is a number": b'{"type":"hello","protocol":6,"token":1e999}\n',
    "a type that is an object": b'{"type":{"type":"hello"}}\n',
    "a protocol that is huge": b'{"type":"hello","protocol":' + b"9" * 4000 + b"}\n",
    "NUL bytes": b"\0" * 100 + b"\n",
}


@pytest.mark.parametrize("what", sorted(HOSTILE_LINES))
def test_a_hostile_line_before_the_hello_costs_only_its_connection(
        token_file: Path, what: str) -> None:
    run, model, optimizer = watched(token_file)
    train(run, model, optimizer, 2)
    client = Client(run.port)
    client.send(HOSTILE_LINES[what])
    refusal = client.read()
    assert refusal["type"] == "error" and refusal["fatal"] is True
    assert refusal["code"] in ("malformed", "bad_token", "version", "too_large")
    client.close()
    assert run._publisher._server is not None and run._publisher._server.dead is None
    assert_a_viewer_gets_the_run(run, model, optimizer)


def test_deep_nesting_after_the_hello_costs_only_its_connection(token_file: Path) -> None:
    run, model, optimizer = watched(token_file)
    client = Client(run.port)
    client.hello()
    assert client.read()["type"] == "welcome"
    client.send(b"[" * 30000 + b"]" * 30000 + b"\n")  # 60,000 bytes: under 64 KiB
    assert [m for m in client.messages_until("error")][-1]["code"] == "malformed"
    client.close()
    assert_a_viewer_gets_the_run(run, model, optimizer)


def test_a_hello_then_a_long_line_is_held_to_the_limit_after_the_hello(
        token_file: Path) -> None:
    run, model, optimizer = watched(token_file)
    hello = json.dumps({"type": "hello", "protocol": 6, "token": TOKEN}).encode() + b"\n"
    under = json.dumps({"type": "ack", "pad": "x" * 60_000}).encode() + b"\n"
    over = json.dumps({"type": "ack", "pad": "x" * 70_000}).encode() + b"\n"
    client = Client(run.port)
    client.send(hello + under + over)  # in one write: the server reads them together
    assert client.read()["type"] == "welcome"
    refusal = client.read()  # the 60 KB ack passes; the 70 KB line is refused
    assert refusal["code"] == "too_large"
    assert str(_serve.MAX_LINE_BYTES) in refusal["message"], refusal
    client.close()
    assert_a_viewer_gets_the_run(run, model, optimizer)


def test_a_server_thread_that_dies_is_told_once_and_queues_nothing_more(
        token_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: _serve.LiveServer, kind: str, body: Any) -> None:
        raise RuntimeError("a fault of the server's own")

    monkeypatch.setattr(_serve.LiveServer, "_handle", broken)
    run, model, optimizer = watched(token_file)
    server = run._publisher._server
    assert server is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train(run, model, optimizer, 2)  # the first step recorded kills the thread
        server._thread.join(HANG_GUARD_S)
        assert not server._thread.is_alive() and "a fault of the server's own" in server.dead
        train(run, model, optimizer, 200)
    told = [w for w in caught if "stopped serving this run live" in str(w.message)]
    assert len(told) == 1, [str(w.message) for w in caught]
    assert server._events.qsize() == 0 and server.dropped >= 200
    run.close()
    assert len(run.steps) == 202  # the run itself lost nothing


class Hoarder:
    """Keeps `count` connections open that never say hello, reopening each one the server
    closes, until stopped; every socket it opened is closed by stop()."""

    def __init__(self, port: int, count: int, source: str) -> None:
        self.port, self.count, self.source = port, count, source
        self.sockets: list[socket.socket] = []
        self.opened = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._hold, name="hoarder", daemon=True)

    def __enter__(self) -> Hoarder:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join(HANG_GUARD_S)
        for sock in self.sockets:
            sock.close()

    def _open(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=HANG_GUARD_S,
                                        source_address=(self.source, 0))
        sock.setblocking(False)
        self.opened += 1
        return sock

    def _hold(self) -> None:
        try:
            self.sockets = [self._open() for _ in range(self.count)]
            self._churn()
        except OSError:
            pass  # the server has closed: nothing left to hoard

    def _churn(self) -> None:
        while not self._stop.is_set():
            readable, _, _ = select.select(self.sockets, [], [], 0.05)
            for sock in readable:
                try:
                    closed = not sock.recv(65536)
                except OSError:
                    closed = True
                if closed:  # refused: open another in its place at once
                    sock.close()
                    self.sockets[self.sockets.index(sock)] = self._open()


def connect_as_viewer(port: int, tries: int, refusals: list[str]) -> Client | None:
    """A viewer that reconnects after a `busy` refusal, as a person would; every refusal must
    say why (a bare EOF fails the test)."""
    for _ in range(tries):
        viewer = Client(port)
        try:
            viewer.hello()
            answer = viewer.read()
        except ConnectionResetError:
            viewer.close()  # refused and closed before it read why: under a storm, it may
            continue
        if answer["type"] == "welcome":
            return viewer
        assert answer["type"] == "error" and answer["code"] == "busy", answer
        refusals.append(answer["message"])
        viewer.close()
    return None


def test_silent_connections_from_another_address_never_lock_a_viewer_out(
        token_file: Path) -> None:
    run, model, optimizer = watched(token_file)
    with Hoarder(run.port, 16, "127.0.0.2") as hoarder:
        for _ in range(5):
            viewer = connect_as_viewer(run.port, 1, [])  # no retry: never refused
            assert viewer is not None
            train(run, model, optimizer, 2)
            assert any(m["type"] == "step" for m in viewer.messages_until("step"))
            viewer.close()
    assert hoarder.opened > 16  # the hoarder's extra connections were refused, its own oldest
    viewers = run._publisher._server._viewers.values()
    silent = [v for v in viewers if not v.hello and not v.closing]
    assert len(silent) <= _serve.MAX_SILENT
    assert_a_viewer_gets_the_run(run, model, optimizer)


def test_silent_connections_from_the_viewers_address_are_refused_with_a_reason(
        token_file: Path) -> None:
    run, model, optimizer = watched(token_file)
    refusals: list[str] = []
    with Hoarder(run.port, 16, "127.0.0.1"):
        for _ in range(3):
            viewer = connect_as_viewer(run.port, 200, refusals)
            assert viewer is not None, refusals[-3:]
            viewer.close()
    assert all("without a hello" in why for why in refusals)
    assert_a_viewer_gets_the_run(run, model, optimizer)


def test_more_viewers_than_the_bound_are_told_the_server_is_busy(token_file: Path) -> None:
    run, model, optimizer = watched(token_file)
    viewers = []
    for _ in range(_serve.MAX_VIEWERS):
        viewer = Client(run.port)
        viewer.hello()
        assert viewer.read()["type"] == "welcome"
        viewers.append(viewer)
    extra = Client(run.port)
    extra.hello()
    refusal = extra.read()
    assert refusal["code"] == "busy" and str(_serve.MAX_VIEWERS) in refusal["message"]
    extra.close()
    viewers.pop().close()
    server = run._publisher._server
    assert server is not None
    while sum(1 for v in list(server._viewers.values()) if v.hello) >= _serve.MAX_VIEWERS:
        server._thread.join(0.01)  # until the server has seen that viewer go
    assert_a_viewer_gets_the_run(run, model, optimizer)
    for viewer in viewers:
        viewer.close()


def counting_dumps(monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    calls = [0]
    real = _serve.json.dumps

    def dumps(*args: Any, **kwargs: Any) -> str:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(_serve.json, "dumps", dumps)
    return lambda: calls[0]


def test_a_reconnect_storm_is_sent_one_shared_replay(
        token_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reconnects = 40
    steps = 600  # recorded: the 601st step's start records the 600th (docs/WATCH.md)
    calls = counting_dumps(monkeypatch)
    run, model, optimizer = watched(token_file)
    train(run, model, optimizer, steps + 1)
    server = run._publisher._server
    assert server is not None
    while not server._events.empty() or b"".join(server._replay.parts()).count(b"\n") < steps:
        server._thread.join(0.01)  # every step is in the replay before the storm
    hello = json.dumps({"type": "hello", "protocol": _serve.PROTOCOL, "token": TOKEN}).encode()
    before = calls()
    for _ in range(reconnects):
        viewer = Client(run.port)
        viewer.send(hello + b"\n")
        indices = []
        for message in viewer.messages_until("run_started"):
            assert message["type"] in ("welcome", "run_started")
        while len(indices) < steps:
            message = viewer.read()
            assert message["type"] == "step" and message["sent_ns"] == 0
            indices.append(message["step"]["index"])
        assert indices == list(range(steps))  # the whole run so far, in order
        viewer.close()
    # Each hello encodes its welcome, never the steps again.
    assert calls() - before <= reconnects
    run.close()


def test_a_late_viewer_gets_the_last_ring_of_steps(
        token_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_serve, "RING_STEPS", 100)
    monkeypatch.setattr(_serve, "REPLAY_CHUNK_STEPS", 16)
    run, model, optimizer = watched(token_file)
    train(run, model, optimizer, 1000)
    viewer = Client(run.port)
    viewer.hello()
    run.close()
    indices = [m["step"]["index"] for m in viewer.messages_until("run_finished")
               if m["type"] == "step"]
    assert 100 <= len(indices) < 100 + 16  # the ring, and at most a chunk more
    assert indices == list(range(1000 - len(indices), 1000))
    viewer.close()


def test_a_flood_of_refused_lines_leaves_the_server_bounded(token_file: Path) -> None:
    run, model, optimizer = watched(token_file)
    for _ in range(60):
        flood = Client(run.port)
        try:
            flood.send(b"y" * (_serve.MAX_HELLO_BYTES * 4))
            assert flood.read()["code"] == "too_large"
        except ConnectionResetError:
            pass  # refused before it finished writing: the refusal raced its own bytes
        flood.close()
    server = run._publisher._server
    assert server is not None
    closing = [v for v in server._viewers.values() if v.closing]
    assert len(closing) <= _serve.MAX_CLOSING
    assert_a_viewer_gets_the_run(run, model, optimizer)
