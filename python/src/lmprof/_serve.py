"""A watched run served live (docs/WATCH.md, "Live"): the script listens the way
`lmprof-cli serve` does, with protocol 6 of docs/REMOTE.md, so the window's File > Connect
and `lmprof-cli watch --connect` show its steps as they are recorded.

One daemon thread owns every socket. The training thread only puts records on a queue and
wakes it: it never encodes, sends or waits on a viewer. What a peer can make the script hold
is bounded: connections (with and without a hello, per address), a line's length (4 KiB
before the hello), a viewer's unsent bytes, the ring of steps a late viewer receives, and
the queue of records for the server thread. Whatever a peer sends, at most its own
connection is dropped; should the thread die anyway, the script is told once and the queue
stops growing (docs/WATCH.md, "Live")."""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import queue
import secrets
import selectors
import socket
import stat
import threading
import time
import uuid
import warnings
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import _formats

PROTOCOL = _formats.PROTOCOL  # formats.json holds it for both languages
DEFAULT_PORT = 7377
MIN_TOKEN_LENGTH = 16
MAX_HELLO_BYTES = 4096  # a line before the hello
MAX_LINE_BYTES = 64 << 10  # a line after it: a viewer sends hello, cancel, fetch, ack
MAX_VIEWERS = 16  # connections past their hello; one more is refused `busy` at its hello
MAX_SILENT = 8  # connections without a hello; a new one refuses the oldest
MAX_SILENT_PER_ADDRESS = 4  # of them from one address; a new one refuses that address's oldest
MAX_CLOSING = 8  # refused connections still reading why; past it the oldest is closed
HELLO_TIMEOUT_S = 5.0  # a viewer sends its hello as it connects
REFUSED_GRACE_S = 1.0  # a refused connection is closed this long after its refusal at most
MAX_UNSENT_BYTES = 64 << 20  # a viewer that stops reading is dropped past this
RING_STEPS = 10_000  # the steps a viewer that connects late receives (up to a chunk more)
REPLAY_CHUNK_STEPS = 256  # the replay is kept encoded, in chunks joined once
ACCEPTS_PER_S = 20  # new connections taken a second, in bursts of ACCEPT_BURST: past it the
ACCEPT_BURST = 32  # listener rests and the kernel's backlog holds the rest (a reconnect loop)
MAX_QUEUED = 100_000  # records waiting for the server thread; past it they are dropped


def parse_listen(text: str) -> tuple[str, int]:
    """"HOST:PORT" checked as `listen`: a loopback host (reach it through an ssh tunnel),
    a port from 0 (the system picks) to 65535. Raises ValueError naming `listen`."""
    if not isinstance(text, str):
        raise ValueError(f"listen: expected 'HOST:PORT', got {type(text).__name__}")
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"listen: {text!r} is not HOST:PORT with a port from 0 to 65535, "
                         "e.g. '127.0.0.1:7377'")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"listen: {host!r} is not a loopback address; a watched script "
                         "listens on 127.0.0.1 and is reached through an ssh tunnel "
                         "(docs/REMOTE.md)")
    return host, int(port_text)


def config_dir() -> Path:
    """lmprof's own folder, as lmprof-cli finds it (docs/REMOTE.md)."""
    if os.environ.get("LMPROF_CONFIG_DIR"):
        return Path(os.environ["LMPROF_CONFIG_DIR"])
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "lmprof"


def read_token(path: os.PathLike[str] | str) -> str:
    """The token of a token file (its first line), refused as `lmprof-cli serve` refuses it:
    not a regular file, readable by others, empty or shorter than 16 characters."""
    path = Path(path)
    try:
        info = path.stat()
    except OSError as exc:
        raise ValueError(f"token_file: cannot read {str(path)!r}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"token_file: {str(path)!r} is not a regular file")
    if info.st_mode & 0o077:
        raise ValueError(f"token_file: {str(path)!r} can be read by others "
                         f"(mode {stat.S_IMODE(info.st_mode):o}); chmod 600 it")
    with open(path, encoding="utf-8", errors="replace") as f:
        token = f.readline().strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(f"token_file: the token in {str(path)!r} is shorter than "
                         f"{MIN_TOKEN_LENGTH} characters")
    return token


def default_token() -> str:
    """The server's token file (<config dir>/server/token), made as lmprof-cli serve makes it
    when there is none: 256 random bits in hex, mode 0600."""
    path = config_dir() / "server" / "token"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    return read_token(path)


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n").encode()


def _step_line(encoded: bytes, sent_ns: int) -> bytes:
    """A `step` message around a record encoded once (live: its send time; replay: 0)."""
    return b'{"type":"step","run":0,"step":%s,"sent_ns":%d}\n' % (encoded, sent_ns)


class _Replay:
    """The run so far as a late viewer receives it: the last RING_STEPS steps (and up to a
    chunk more), encoded once and kept in chunks of bytes that every hello shares, so that a
    viewer reconnecting in a loop costs a few list appends, not 10,000 encodings."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.tail: list[bytes] = []

    def add(self, line: bytes) -> None:
        self.tail.append(line)
        if len(self.tail) == REPLAY_CHUNK_STEPS:
            self.chunks.append(b"".join(self.tail))
            self.tail = []
        while self.chunks and (len(self.chunks) - 1) * REPLAY_CHUNK_STEPS + len(
                self.tail) >= RING_STEPS:
            self.chunks.popleft()  # what is left still holds RING_STEPS steps

    def parts(self) -> list[bytes]:
        return [*self.chunks, b"".join(self.tail)] if self.tail else list(self.chunks)


class _Viewer:
    def __init__(self, sock: socket.socket, address: str) -> None:
        self.sock = sock
        self.address = address
        self.inbox = bytearray()
        self.outbox: deque[bytes] = deque()
        self.unsent = 0
        self.hello = False
        self.since = time.monotonic()
        self.closing = False  # a fatal error is on its way out
        self.shut = False  # and has been sent


class LiveServer:
    """Serves one watched run to its viewers (MAX_VIEWERS)."""

    def __init__(self, host: str, port: int, token: str, *, tool: dict[str, Any],
                 environment: dict[str, Any], devices: list[dict[str, Any]]) -> None:
        self._token = token.encode()
        self._welcome = {"type": "welcome", "protocol": PROTOCOL,
                         "server_id": uuid.uuid4().hex, "tool": tool,
                         "environment": environment, "devices": devices}
        self._listener = socket.create_server((host, port), family=(
            socket.AF_INET6 if ":" in host else socket.AF_INET), backlog=16)
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, None)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._viewers: dict[socket.socket, _Viewer] = {}
        self._header: bytes | None = None
        self._replay = _Replay()
        self._finished: dict[str, Any] | None = None  # the finished run
        self._stop = False
        self._stop_deadline = 0.0
        self.dead: str | None = None  # why the server thread failed, if it did
        self._gone = False  # the server thread has ended (failed, or closed)
        self._told = False
        self.dropped = 0  # records not queued: the thread was gone or far behind
        self._accept_tokens = float(ACCEPT_BURST)
        self._accept_at = time.monotonic()
        self._listener_rests_until: float | None = None
        self._thread = threading.Thread(target=self._run, name="lmprof-live", daemon=True)
        self._thread.start()

    # --- the training thread's side: enqueue and wake, nothing more ----------------------

    def started(self, header: Mapping[str, Any], environment: dict[str, Any],
                devices: list[dict[str, Any]]) -> None:
        """The run's first step is recorded: its header, and the device it runs on."""
        self._post("started", (header, environment, devices))

    def step(self, record: Mapping[str, Any]) -> None:
        self._post("step", (record, time.monotonic_ns()))

    def memory(self, sample: dict[str, Any]) -> None:
        """A memory sample (from the sampler's thread too): live only, as a row of the run's
        memory_columns; the finished run holds them all."""
        self._post("memory", sample)

    def finished(self, run: Mapping[str, Any]) -> None:
        self._post("finished", run)

    def close(self, timeout: float = 5.0) -> None:
        """Sends what is queued (the finished run), then closes every connection."""
        self._post("stop", None)
        self._thread.join(timeout)

    def _post(self, kind: str, body: Any) -> None:
        if self._gone or self._events.qsize() >= MAX_QUEUED:
            self.dropped += 1
            if self.dead is not None or not self._gone:
                self._tell()
            return
        self._events.put((kind, body))
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass  # the wake-up pipe is full: the loop is awake already

    def _tell(self) -> None:
        """Warns once (from the thread that posts) that the run is no longer served live."""
        if self._told:
            return
        self._told = True
        why = (f"its server thread ended ({self.dead})" if self.dead is not None
               else f"{MAX_QUEUED} records are waiting for its server thread")
        warnings.warn(f"lmprof stopped serving this run live: {why}; the run is still "
                      "watched and saved", RuntimeWarning, stacklevel=4)

    # --- the server thread -----------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # noqa: BLE001 - never the script's: it trains on
            self.dead = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            self._release()

    def _release(self) -> None:
        """Closes every socket and empties the queue (nothing more is queued once gone)."""
        self._gone = True
        for viewer in list(self._viewers.values()):
            self._drop(viewer)
        for closable in (self._selector, self._listener, self._wake_r, self._wake_w):
            try:
                closable.close()
            except OSError:
                pass
        while True:
            try:
                self._events.get_nowait()
            except queue.Empty:
                break

    def _loop(self) -> None:
        while not (self._stop and not any(v.outbox for v in self._viewers.values())):
            self._wake_listener()
            rest = self._listener_rests_until
            timeout = 0.25 if rest is None else min(0.25, max(0.0, rest - time.monotonic()))
            for key, mask in self._selector.select(timeout=timeout):
                sock = key.fileobj
                if sock is self._listener:
                    self._accept()
                elif sock is self._wake_r:
                    self._drain_wake()
                elif isinstance(sock, socket.socket) and sock in self._viewers:
                    self._serve_one(self._viewers[sock], mask)
            self._expire_silent()
            if self._stop and time.monotonic() > self._stop_deadline:
                break

    def _serve_one(self, viewer: _Viewer, mask: int) -> None:
        """One viewer's event; whatever it sent that we fail on drops it, and only it."""
        try:
            if mask & selectors.EVENT_READ:
                self._read(viewer)
            if mask & selectors.EVENT_WRITE and viewer.sock in self._viewers:
                self._flush(viewer)
        except Exception:  # noqa: BLE001 - a peer's input must not end the server
            self._drop(viewer)

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass
        while True:
            try:
                kind, body = self._events.get_nowait()
            except queue.Empty:
                return
            try:
                self._handle(kind, body)
            except (TypeError, ValueError, OverflowError, RecursionError):
                self.dropped += 1  # a record that cannot be sent (a NaN): the others are

    def _handle(self, kind: str, body: Any) -> None:
        if kind == "started":
            header, environment, devices = body
            self._welcome.update(environment=environment, devices=devices)
            self._header = _line({"type": "run_started", "run": 0, "header": header})
            self._broadcast(self._header)
            self._broadcast(_line({"type": "state", "busy": True}))
        elif kind == "step":
            record, sent_ns = body
            encoded = json.dumps(record, allow_nan=False, separators=(",", ":")).encode()
            self._replay.add(_step_line(encoded, 0))
            self._broadcast(_step_line(encoded, sent_ns))
        elif kind == "memory":
            if self._header is not None and self._finished is None:
                self._broadcast(_line({"type": "memory", "run": 0, "sample": body}))
        elif kind == "finished":
            line = self._finished_line(replay=False, result=body)  # raises before it is kept
            self._finished = body
            self._broadcast(line)
        elif kind == "stop":
            self._stop = True
            self._stop_deadline = time.monotonic() + 2.0
            if self._listener_rests_until is None:
                self._selector.unregister(self._listener)
            self._listener_rests_until = None

    def _finished_line(self, *, replay: bool, result: dict[str, Any] | None = None) -> bytes:
        """run_finished: live when the run ends, a replay for a late viewer or a fetch."""
        return _line({"type": "run_finished", "run": 0, "result": result or self._finished,
                      "replay": replay, "busy": False})

    def _wake_listener(self) -> None:
        """Listens again once a rest (see _accept) is over."""
        rest = self._listener_rests_until
        if rest is not None and time.monotonic() >= rest and not self._stop:
            self._listener_rests_until = None
            self._selector.register(self._listener, selectors.EVENT_READ, None)

    def _has_accept_token(self) -> bool:
        """The accept budget: ACCEPTS_PER_S, in bursts of ACCEPT_BURST; a connection taken
        spends a token (_accept). Without one the listener rests until one is due, so that a
        peer reconnecting in a loop costs the script's interpreter a bounded share."""
        now = time.monotonic()
        self._accept_tokens = min(float(ACCEPT_BURST),
                                  self._accept_tokens + (now - self._accept_at) * ACCEPTS_PER_S)
        self._accept_at = now
        if self._accept_tokens >= 1.0:
            return True
        self._listener_rests_until = now + (1.0 - self._accept_tokens) / ACCEPTS_PER_S
        self._selector.unregister(self._listener)
        return False

    def _accept(self) -> None:
        """Takes every waiting connection. A new one always gets a slot: it refuses the oldest
        connection without a hello from its own address when that address has
        MAX_SILENT_PER_ADDRESS of them, else the oldest of all when there are MAX_SILENT. So
        connections that never say hello cannot keep a viewer out: a viewer's hello arrives
        with its connection, and it is read at once."""
        for _ in range(ACCEPT_BURST):
            if not self._has_accept_token():
                return
            try:
                sock, peer = self._listener.accept()
            except OSError:
                return  # none waiting: no token spent
            self._accept_tokens -= 1.0
            sock.setblocking(False)
            address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
            silent = sorted((v for v in self._viewers.values() if not v.hello and not v.closing),
                            key=lambda v: v.since)
            mine = [v for v in silent if v.address == address]
            if len(mine) >= MAX_SILENT_PER_ADDRESS:
                self._refuse(mine[0], "busy", f"{MAX_SILENT_PER_ADDRESS} connections from "
                             f"{address} without a hello; this one was the oldest")
            elif len(silent) >= MAX_SILENT:
                self._refuse(silent[0], "busy", f"{MAX_SILENT} connections without a hello; "
                             "this one was the oldest")
            viewer = _Viewer(sock, address)
            self._viewers[sock] = viewer
            self._selector.register(sock, selectors.EVENT_READ, None)
            self._serve_one(viewer, selectors.EVENT_READ)  # its hello may be here already

    def _read(self, viewer: _Viewer) -> None:
        try:
            data = viewer.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(viewer)  # the viewer went away: nothing changes for the script
            return
        if viewer.closing:
            return  # read and discarded, so that it can read why it was refused
        viewer.inbox += data
        while viewer.sock in self._viewers and not viewer.closing:
            limit = MAX_LINE_BYTES if viewer.hello else MAX_HELLO_BYTES  # the hello lifts it
            end = viewer.inbox.find(b"\n")
            if end < 0:
                if len(viewer.inbox) > limit:
                    self._refuse(viewer, "too_large", f"a line is longer than {limit} bytes")
                return
            line = bytes(viewer.inbox[:end])
            del viewer.inbox[:end + 1]
            if len(line) > limit:
                self._refuse(viewer, "too_large", f"a line is longer than {limit} bytes")
                return
            self._message(viewer, line)

    def _message(self, viewer: _Viewer, line: bytes) -> None:
        try:
            message = json.loads(line)
        except RecursionError:
            self._refuse(viewer, "malformed", "the line is nested too deeply")
            return
        except ValueError:  # UnicodeDecodeError included
            self._refuse(viewer, "malformed", "the line is not JSON")
            return
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            self._refuse(viewer, "malformed", "$.type: missing, or not a string")
            return
        kind = message["type"]
        if kind not in ("hello", "submit", "cancel", "fetch", "ack", "lab"):
            self._refuse(viewer, "unknown_type", f"unknown message type {kind[:40]!r}")
            return
        if kind == "hello":
            if viewer.hello:
                self._send(viewer, _line({"type": "error", "code": "invalid",
                                          "message": "hello was already sent", "fatal": False}))
                return
            self._hello(viewer, message)
            return
        if not viewer.hello:
            self._refuse(viewer, "hello_first", f"{kind} before the hello")
            return
        if kind in ("submit", "lab"):
            why = (f"{kind}: this is a watched training script, not an engine: it runs its own "
                   "loop and takes no runs or experiments (run them on lmprof-cli serve)")
            self._send(viewer, _line({"type": "error", "code": "limit", "message": why,
                                      "fatal": False}))
        elif kind == "cancel":
            self._send(viewer, _line({"type": "error", "code": "invalid", "fatal": False,
                                      "message": "cancel: a watched script is stopped where "
                                                 "it runs (Ctrl+C), not by a viewer"}))
        elif kind == "fetch" and self._finished is not None:
            self._send(viewer, self._finished_line(replay=True))

    def _hello(self, viewer: _Viewer, message: dict[str, Any]) -> None:
        protocol = message.get("protocol")
        if protocol != PROTOCOL:
            self._refuse(viewer, "version",
                         f"this server speaks protocol {PROTOCOL}, the client {str(protocol)[:40]}")
            return
        token = message.get("token")
        # surrogatepass: a lone surrogate ("\ud800") is a wrong token, not an encoding error
        if not isinstance(token, str) or not hmac.compare_digest(
                token.encode("utf-8", "surrogatepass"), self._token):
            self._refuse(viewer, "bad_token", "wrong token")
            return
        if sum(1 for v in self._viewers.values() if v.hello) >= MAX_VIEWERS:
            self._refuse(viewer, "busy", f"{MAX_VIEWERS} viewers are connected already")
            return
        viewer.hello = True
        self._send(viewer, _line({**self._welcome, "busy": self._finished is None}))
        # A late viewer gets the run so far: its header, the recent steps (sent_ns 0: a
        # replay), and its end if it has ended. The chunks are shared, not copied.
        if self._header is not None:
            self._send(viewer, self._header)
            for part in self._replay.parts():
                self._send(viewer, part)
        if self._finished is not None:
            self._send(viewer, self._finished_line(replay=True))

    def _refuse(self, viewer: _Viewer, code: str, text: str) -> None:
        closing = sorted((v for v in self._viewers.values() if v.closing), key=lambda v: v.since)
        for old in closing[:max(0, len(closing) - MAX_CLOSING + 1)]:
            self._drop(old)  # refusals are not slots to keep
        viewer.closing = True
        viewer.since = time.monotonic()  # closed once read, or REFUSED_GRACE_S from now
        self._send(viewer, _line({"type": "error", "code": code, "message": text,
                                  "fatal": True}))

    def _broadcast(self, line: bytes) -> None:
        for viewer in list(self._viewers.values()):
            if viewer.hello and not viewer.closing:
                self._send(viewer, line)

    def _send(self, viewer: _Viewer, line: bytes) -> None:
        if viewer.unsent + len(line) > MAX_UNSENT_BYTES:
            self._drop(viewer)  # it stopped reading; the script does not wait for it
            return
        viewer.outbox.append(line)
        viewer.unsent += len(line)
        self._flush(viewer)

    def _flush(self, viewer: _Viewer) -> None:
        while viewer.outbox:
            chunk = viewer.outbox[0]
            try:
                sent = viewer.sock.send(chunk)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self._drop(viewer)
                return
            viewer.unsent -= sent
            if sent < len(chunk):
                viewer.outbox[0] = chunk[sent:]
                break
            viewer.outbox.popleft()
        if viewer.sock not in self._viewers:
            return
        if viewer.closing and not viewer.outbox and not viewer.shut:
            viewer.shut = True  # the refusal is out; what it still sends is discarded
            try:
                viewer.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if viewer.outbox else 0)
        self._selector.modify(viewer.sock, events, None)

    def _expire_silent(self) -> None:
        now = time.monotonic()
        for viewer in list(self._viewers.values()):
            if viewer.closing and now - viewer.since > REFUSED_GRACE_S:
                self._drop(viewer)
            elif not viewer.hello and not viewer.closing and now - viewer.since > HELLO_TIMEOUT_S:
                self._refuse(viewer, "timeout", f"no hello within {HELLO_TIMEOUT_S:.0f} s")

    def _drop(self, viewer: _Viewer) -> None:
        if self._viewers.pop(viewer.sock, None) is None:
            return
        if viewer.closing:  # what it sent since is read, so that closing sends no reset
            try:                 # before it has read why it was refused (a few reads at most)
                for _ in range(4):
                    if not viewer.sock.recv(65536):
                        break
            except OSError:
                pass
        try:
            self._selector.unregister(viewer.sock)
        except (KeyError, ValueError):
            pass
        viewer.sock.close()


def start(listen: str, token: str, **welcome: Any) -> LiveServer | None:
    """A LiveServer on `listen`, or None with a warning when the address cannot be bound
    (the port is taken): the script trains either way."""
    host, port = parse_listen(listen)
    try:
        server = LiveServer(host, port, token, **welcome)
    except OSError as exc:
        warnings.warn(f"lmprof could not listen on {listen} ({exc.strerror or exc}); the run "
                      "is watched and saved, not served live", RuntimeWarning, stacklevel=3)
        return None
    return server
