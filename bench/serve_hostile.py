"""What hostile clients can make an `lmprof-cli serve` hold: its resident set and open
descriptors before and after each client below, with a good client's tiny run after each
(docs/REMOTE.md, "Bounds"; issue 40). The clients:

  refused   submits runs the engine refuses (sdpa-flash on a CPU, cuda_graphs on, threads
            5000), then leaves without reading;
  fetch     sends 200,000 fetches for a finished run and never reads;
  lab       queues ten 10^7-term accumulation experiments and leaves.

Usage: python bench/serve_hostile.py --cli build/app/lmprof-cli
Prints one line per client: RSS and descriptors before and after, and the good client's
run: its status and how long it waited.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

TOKEN = "e" * 64
CONFIG = {"model": {"preset": "tiny", "d_model": 128, "d_ff": 512, "num_layers": 2,
                    "num_heads": 4, "vocab_size": 10000, "rope_theta": 10000.0},
          "context_length": 32, "batch_size": 2, "precision": "fp32", "mode": "train",
          "warmup_steps": 1, "measure_steps": 2, "device": "cpu", "seed": 0, "threads": 0,
          "sample_hz": 100.0, "telemetry_hz": 10.0, "memory_snapshot": None,
          "op_profile": None, "grad_norms": False, "ddp": None, "attention": "naive",
          "tf32": "off", "cuda_graphs": "off"}


def line(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


def hello() -> bytes:
    return line({"type": "hello", "protocol": 5, "token": TOKEN, "client": "hostile"})


def connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(hello())
    return s


def usage(pid: int) -> tuple[float, int]:
    """The server's resident set in MB and its open descriptors."""
    for field in Path(f"/proc/{pid}/status").read_text().splitlines():
        if field.startswith("VmRSS:"):
            rss = int(field.split()[1]) / 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def good_run(port: int) -> str:
    """A tiny run submitted by a well-behaved client: its status and its wait."""
    start = time.monotonic()
    with connect(port) as s:
        s.sendall(line({"type": "submit", "configs": [CONFIG]}))
        s.settimeout(600)
        buffer = b""
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                return "connection closed"
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                message = json.loads(raw)
                if message.get("type") == "run_finished" and not message.get("replay"):
                    return f"{message['result']['status']} after {time.monotonic() - start:.1f} s"
                if message.get("type") == "error":
                    return f"error: {message.get('message')}"


def refused(port: int) -> None:
    for change in ({"attention": "sdpa-flash"}, {"cuda_graphs": "on"}, {"threads": 5000}):
        with connect(port) as s:
            s.sendall(line({"type": "submit", "configs": [{**CONFIG, **change}]}))
            time.sleep(0.5)


def fetch(port: int) -> None:
    s = connect(port)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    request = line({"type": "fetch", "runs": [0]})
    s.sendall(request * 200_000)
    time.sleep(3)
    s.close()


def lab(port: int) -> None:
    with connect(port) as s:
        for i in range(10):
            s.sendall(line({"type": "lab", "run": i, "request": {
                "experiment": "accumulation", "device": "cpu", "max_terms": 10_000_000}}))
        time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    a = parser.parse_args()
    with tempfile.TemporaryDirectory() as state:
        token = Path(state) / "token"
        token.write_text(TOKEN + "\n")
        token.chmod(0o600)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = subprocess.Popen([a.cli, "serve", "--listen", f"127.0.0.1:{port}",
                                   "--token-file", str(token), "--state-dir", state],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port)).close()
                    break
                except OSError:
                    time.sleep(0.1)
            print("first good run:", good_run(port))  # a kept run for the fetches
            for name, client in (("refused", refused), ("fetch", fetch), ("lab", lab)):
                rss0, fd0 = usage(server.pid)
                client(port)
                time.sleep(1)
                rss1, fd1 = usage(server.pid)
                print(f"{name:8s} RSS {rss0:7.1f} -> {rss1:7.1f} MB, descriptors {fd0} -> {fd1}; "
                      f"then a good run: {good_run(port)}", flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
