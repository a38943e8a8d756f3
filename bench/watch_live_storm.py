"""What a viewer reconnecting in a loop costs a watched script served live (listen=, docs/WATCH.md
"Live"; issue 56): rounds alternate a quiet server and one under a reconnect storm (A B B A
...). Each round is a fresh process that serves a small MLP's training loop and times each
step with the loop's own perf_counter; in a storm round a second process connects, says
hello, reads the whole replay (the last 10,000 steps) and reconnects, for as long as the
script trains. Prints the median step of each mode, the storm's reconnects, and the ratio
of the rounds' medians with a 95% bootstrap interval.

Usage: python bench/watch_live_storm.py [--rounds 6] [--steps 12000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time

TOKEN = "d" * 64


def script(port_file: str, token_file: str, steps: int) -> None:
    import torch

    import lmprof

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(16, 64)
    run = lmprof.watch(model, opt, listen="127.0.0.1:0", token_file=token_file)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(run.port))
    os.replace(port_file + ".tmp", port_file)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        with run.step():
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
        times.append(time.perf_counter() - t0)
    run.close()
    print(json.dumps({"median_s": statistics.median(times[steps // 10:])}))


def storm(port: int, stop_file: str) -> None:
    hello = (json.dumps({"type": "hello", "protocol": 6, "token": TOKEN}) + "\n").encode()
    count = 0
    while not os.path.exists(stop_file):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(hello)
                seen = b""
                while b'"type":"run_started"' not in seen and len(seen) < (4 << 20):
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        break
                    seen += chunk
                count += 1
        except OSError:
            break  # the script has ended
    print(count)


def one_round(mode: str, steps: int, workdir: str, token_file: str) -> tuple[float, int]:
    port_file = os.path.join(workdir, f"port-{mode}")
    stop_file = os.path.join(workdir, f"stop-{mode}")
    for path in (port_file, stop_file):
        if os.path.exists(path):
            os.unlink(path)
    trainer = subprocess.Popen([sys.executable, __file__, "--script", port_file, token_file,
                                str(steps)], stdout=subprocess.PIPE, text=True)
    client = None
    try:
        if mode == "storm":
            while not os.path.exists(port_file) and trainer.poll() is None:
                time.sleep(0.05)
            port = int(open(port_file).read())
            client = subprocess.Popen([sys.executable, __file__, "--storm", str(port), stop_file],
                                      stdout=subprocess.PIPE, text=True)
        out, _ = trainer.communicate(timeout=1800)
    finally:
        open(stop_file, "w").close()
        if trainer.poll() is None:
            trainer.kill()
    reconnects = 0
    if client is not None:
        reconnects = int(client.communicate(timeout=60)[0] or 0)
    return json.loads(out)["median_s"], reconnects


def interval(a: list[float], b: list[float], draws: int = 4000) -> tuple[float, float]:
    rng = random.Random(0)
    values = sorted(statistics.median([rng.choice(a) for _ in a]) /
                    statistics.median([rng.choice(b) for _ in b]) for _ in range(draws))
    return values[int(0.025 * draws)], values[int(0.975 * draws)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--steps", type=int, default=12000)
    p.add_argument("--script", nargs=3)
    p.add_argument("--storm", nargs=2)
    args = p.parse_args()
    if args.script:
        script(args.script[0], args.script[1], int(args.script[2]))
        return
    if args.storm:
        storm(int(args.storm[0]), args.storm[1])
        return
    with tempfile.TemporaryDirectory() as workdir:
        token_file = os.path.join(workdir, "token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        os.chmod(token_file, 0o600)
        medians: dict[str, list[float]] = {"quiet": [], "storm": []}
        reconnects = []
        for r in range(args.rounds):
            for mode in (("quiet", "storm") if r % 2 == 0 else ("storm", "quiet")):
                median, count = one_round(mode, args.steps, workdir, token_file)
                medians[mode].append(median)
                if mode == "storm":
                    reconnects.append(count)
    quiet, stormy = medians["quiet"], medians["storm"]
    lo, hi = interval(stormy, quiet)
    print(f"quiet median step {statistics.median(quiet) * 1e6:.0f} us (rounds "
          f"{min(quiet) * 1e6:.0f}-{max(quiet) * 1e6:.0f}); under a reconnect storm "
          f"{statistics.median(stormy) * 1e6:.0f} us (rounds {min(stormy) * 1e6:.0f}-"
          f"{max(stormy) * 1e6:.0f}), {min(reconnects)}-{max(reconnects)} reconnects a round")
    print(f"storm / quiet {statistics.median(stormy) / statistics.median(quiet):.3f} "
          f"[95% {lo:.3f}, {hi:.3f}]")


if __name__ == "__main__":
    main()
