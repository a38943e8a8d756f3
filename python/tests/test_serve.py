"""A watched run served live (lmprof/_serve.py): protocol 6 of docs/REMOTE.md spoken to a
viewer written here on a plain socket, late viewers, refusals, and the bounds."""

from __future__ import annotations

import json
import socket
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

import lmprof
from conftest import TOKEN, TinyGPT, train_steps
from lmprof import _serve


class Viewer:
    """A client of the protocol: one JSON object a line each way."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else (json.dumps(message) + "\n").encode()
        self.sock.sendall(data)

    def hello(self, token: str = TOKEN, protocol: int = _serve.PROTOCOL) -> dict[str, Any]:
        self.send({"type": "hello", "protocol": protocol, "token": token, "client": "test"})
        return self.read()

    def read(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the server closed the connection")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def read_until(self, kind: str) -> list[dict[str, Any]]:
        messages = []
        while not messages or messages[-1]["type"] != kind:
            messages.append(self.read())
        return messages

    def close(self) -> None:
        self.sock.close()


def train(run: lmprof.Run, model: TinyGPT, steps: int) -> None:
    train_steps(run, model, torch.optim.SGD(model.parameters(), lr=1e-2), steps, log_loss=True)


def test_a_viewer_sees_the_run_live_and_a_late_one_gets_it_so_far(token_file: Path) -> None:
    model = TinyGPT()
    run = lmprof.watch(model, name="served", listen="127.0.0.1:0", token_file=str(token_file))
    assert run.port
    early = Viewer(run.port)
    welcome = early.hello()
    assert welcome["type"] == "welcome" and welcome["protocol"] == _serve.PROTOCOL == 6
    assert welcome["devices"][0]["name"] == "cpu" and welcome["busy"] is True
    train(run, model, 3)
    late = Viewer(run.port)
    assert late.hello()["type"] == "welcome"
    # Recorded so far: the steps before the last (a step is recorded when the next begins,
    # since log() may still add to it; close() records the last).
    replayed = [*late.read_until("step"), late.read()]
    assert replayed[0]["type"] == "run_started" and replayed[0]["header"]["id"] == "served"
    assert [m["step"]["index"] for m in replayed[1:]] == [0, 1]
    assert all(m["sent_ns"] == 0 for m in replayed[1:])  # a replay
    run.close()
    live = early.read_until("run_finished")
    steps = [m for m in live if m["type"] == "step"]
    # Steps are sent as recorded: the last ones when close() reads them.
    assert [m["step"]["index"] for m in steps] == [0, 1, 2]
    assert all(m["sent_ns"] > 0 for m in steps)
    finished = live[-1]
    assert finished["result"]["status"] == "ok" and len(finished["result"]["steps"]) == 3
    assert late.read_until("run_finished")[-1]["result"]["id"] == "served"
    with pytest.raises(EOFError):  # the server closed after sending everything
        early.read()
    early.close()
    late.close()


def test_refusals_name_their_reason(token_file: Path) -> None:
    model = TinyGPT()
    with lmprof.watch(model, listen="127.0.0.1:0", token_file=str(token_file)) as run:
        wrong = Viewer(run.port)
        refused = wrong.hello(token="b" * 64)
        assert refused["code"] == "bad_token" and refused["fatal"] is True
        old = Viewer(run.port)
        assert old.hello(protocol=_serve.PROTOCOL - 1)["code"] == "version"
        early = Viewer(run.port)
        early.send({"type": "cancel"})
        assert early.read()["code"] == "hello_first"
        garbage = Viewer(run.port)
        garbage.send(b"not json\n")
        assert garbage.read()["code"] == "malformed"
        flood = Viewer(run.port)
        flood.send(b"x" * (_serve.MAX_HELLO_BYTES + 10))
        assert flood.read()["code"] == "too_large"
        viewer = Viewer(run.port)
        viewer.hello()
        viewer.send({"type": "submit", "configs": [{}]})
        refusal = viewer.read()
        assert refusal["code"] == "limit" and refusal["fatal"] is False
        assert "watched training script" in refusal["message"]
        viewer.send({"type": "lab", "run": 1, "request": {}})
        assert viewer.read()["code"] == "limit"
        # The connection stays: the viewer still gets the run.
        train(run, model, 2)
    assert viewer.read_until("run_finished")[-1]["result"]["status"] == "ok"
    for v in (wrong, old, early, garbage, flood, viewer):
        v.close()


def test_a_viewer_that_goes_away_or_stops_reading_changes_nothing(
        token_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_serve, "MAX_UNSENT_BYTES", 1 << 10)
    model = TinyGPT()
    run = lmprof.watch(model, listen="127.0.0.1:0", token_file=str(token_file))
    gone = Viewer(run.port)
    gone.hello()
    gone.close()
    stalled = Viewer(run.port)
    stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.hello()
    train(run, model, 300)  # far more than the kernel buffers and 1 KiB, never read
    deadline = time.monotonic() + 10
    while len(run._publisher._server._viewers) > 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(run._publisher._server._viewers) == 0  # both dropped; the loop never waited
    run.close()
    assert len(run.steps) == 300
    stalled.close()


def test_a_port_that_is_taken_warns_and_training_goes_on(token_file: Path) -> None:
    holder = socket.create_server(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    model = TinyGPT()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = lmprof.watch(model, listen=f"127.0.0.1:{port}", token_file=str(token_file))
    assert run.port is None
    assert any("could not listen" in str(w.message) for w in caught)
    train(run, model, 2)
    run.close()
    assert len(run.steps) == 2
    holder.close()


@pytest.mark.parametrize("listen, token, field", [
    ("7377", None, "listen"),
    ("127.0.0.1:99999", None, "listen"),
    ("10.0.0.1:7377", None, "listen"),
    ("127.0.0.1:0", "missing", "token_file"),
    ("127.0.0.1:0", "shared", "token_file"),
    ("127.0.0.1:0", "short", "token_file"),
    (None, "given", "token_file"),
])
def test_bad_listen_and_token_file_name_the_argument(tmp_path: Path, listen: Any, token: Any,
                                                     field: str) -> None:
    path = tmp_path / "token"
    if token in ("shared", "given"):
        path.write_text(TOKEN)
        path.chmod(0o644 if token == "shared" else 0o600)
    elif token == "short":
        path.write_text("abc")
        path.chmod(0o600)
    with pytest.raises(ValueError, match=f"^{field}:"):
        lmprof.watch(TinyGPT(), listen=listen,
                     token_file=str(path) if token is not None else None)


def test_without_a_token_file_the_servers_own_is_made_and_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMPROF_CONFIG_DIR", str(tmp_path / "config"))
    model = TinyGPT()
    with lmprof.watch(model, listen="127.0.0.1:0") as run:
        token_path = tmp_path / "config" / "server" / "token"
        assert oct(token_path.stat().st_mode & 0o777) == "0o600"
        viewer = Viewer(run.port)
        assert viewer.hello(token=token_path.read_text().strip())["type"] == "welcome"
    viewer.close()


def test_memory_samples_go_to_a_viewer_live_as_rows(token_file: Path) -> None:
    model = TinyGPT()
    run = lmprof.watch(model, name="sampled", listen="127.0.0.1:0", token_file=str(token_file),
                       memory_hz=200)
    viewer = Viewer(run.port)
    assert viewer.hello()["type"] == "welcome"
    train(run, model, 4)
    run.close()
    messages = viewer.read_until("run_finished")
    rows = [m for m in messages if m["type"] == "memory"]
    assert rows, [m["type"] for m in messages]
    started = next(i for i, m in enumerate(messages) if m["type"] == "run_started")
    assert all(i > started for i, m in enumerate(messages) if m["type"] == "memory")
    assert {"t_ms", "allocated", "reserved", "rss", "phase", "step", "boundary"} == set(
        rows[0]["sample"]) and rows[0]["run"] == 0
    finished = messages[-1]["result"]
    assert len(finished["memory_columns"]["t_ms"]) >= len(rows)
    viewer.close()


# The protocol's shape as the engine encodes it (tests/engine/protocol_fingerprint_test.cpp
# keeps it in this file, after a line with the version): every key path of every message
# with its JSON type, a record's members left to the result set's schema.
SHAPE_FILE = Path(__file__).resolve().parents[2] / "tests" / "data" / "protocol_shape.txt"
RECORDS = {"header", "result", "step", "sample", "report", "tool", "environment"}


def shape_of(value: Any, path: str, out: set[str]) -> None:
    if isinstance(value, dict):
        out.add(f"{path}:object")
        for key, member in value.items():
            if key in RECORDS:
                out.add(f"{path}.{key}:record")
            else:
                shape_of(member, f"{path}.{key}", out)
    elif isinstance(value, list):
        out.add(f"{path}:array")
        for element in value:
            shape_of(element, f"{path}[]", out)
    else:
        kind = ("boolean" if isinstance(value, bool) else "number"
                if isinstance(value, int | float) else "string" if isinstance(value, str)
                else "null")
        out.add(f"{path}:{kind}")


def test_every_message_the_server_sends_is_one_the_engine_declares(token_file: Path) -> None:
    """The protocol fingerprint covers this server: no key, and no JSON type, that the
    engine's field lists do not declare for its message, and the same version."""
    version, *declared = SHAPE_FILE.read_text().splitlines()
    assert version == f"protocol {_serve.PROTOCOL}"
    model = TinyGPT()
    run = lmprof.watch(model, name="shaped", listen="127.0.0.1:0", token_file=str(token_file),
                       memory_hz=200)
    viewer = Viewer(run.port)
    messages = [viewer.hello()]
    train(run, model, 3)
    viewer.send({"type": "submit", "configs": [{}]})  # refused: a watched run takes none
    run.close()
    messages += viewer.read_until("run_finished")
    viewer.close()
    sent: set[str] = set()
    for message in messages:
        shape_of(message, message["type"], sent)
    assert {m["type"] for m in messages} >= {"welcome", "run_started", "state", "step",
                                             "memory", "error", "run_finished"}
    assert sent <= set(declared), sorted(sent - set(declared))
