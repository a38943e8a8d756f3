"""lmprof-cli watch end to end (docs/WATCH.md): real PyTorch training scripts, unmodified,
run under `lmprof-cli watch -- python train.py`. Checks the live step lines, the result set
it writes and what show and compare make of it, a script that raises, one killed with
SIGKILL, a 2-rank torchrun script on Gloo, and a script serving its run live to a viewer
(`watch --listen` and `watch --connect`, the window's client).

    watch_check.py --cli build/app/lmprof-cli --workdir DIR [--python PYTHON]
"""

from __future__ import annotations

import argparse
import json
import shutil
import os
import socket
import time
import subprocess
import sys
import threading
from pathlib import Path

import check_args

# A plain loop over a model of PyTorch's own layers, written for this check. --sleep S
# sleeps before each step (a slow loader); --kill-after N
# kills the process with SIGKILL after N optimizer steps; --raise-after N raises there;
# --ddp runs under torchrun with DistributedDataParallel on Gloo; --until-file F trains on
# past --steps (up to 1,000) until F exists.
TRAIN = '''
import argparse, os, signal, time
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--kill-after", type=int, default=0)
parser.add_argument("--raise-after", type=int, default=0)
parser.add_argument("--ddp", action="store_true")
parser.add_argument("--sleep", type=float, default=0.0)  # a slow loader, before each step
parser.add_argument("--until-file", default="")
args = parser.parse_args()

class SmallLM(nn.Module):
    def __init__(self, vocab=128, d=32, ctx=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layer = nn.TransformerEncoderLayer(d, 2, 64, batch_first=True, norm_first=True)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(ctx))

    def forward(self, tokens):
        return self.head(self.layer(self.embed(tokens), src_mask=self.mask, is_causal=True))

torch.manual_seed(0)
model = SmallLM()
if args.ddp:
    import torch.distributed as dist
    dist.init_process_group("gloo")
    model = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = 0
while step < args.steps or (args.until_file and not os.path.exists(args.until_file)
                            and step < 1000):
    time.sleep(args.sleep)
    x = torch.randint(0, 128, (4, 16))
    loss = nn.functional.cross_entropy(model(x).flatten(0, 1), x.roll(-1, 1).flatten())
    loss.backward()
    opt.step()
    opt.zero_grad()
    if args.kill_after and step + 1 == args.kill_after:
        time.sleep(0.5)  # the watcher's journal line for this step is written by now
        os.kill(os.getpid(), signal.SIGKILL)
    if args.raise_after and step + 1 == args.raise_after:
        raise RuntimeError("the loss went to the moon")
    step += 1
if args.ddp:
    dist.destroy_process_group()
print("trained", step)
'''


# The CS336 Transformer as a student writes it (tests/reference/reference_model.py), trained
# plainly: lmprof finds its dimensions from its parameters and first batch.
REFERENCE_DIR = Path(__file__).resolve().parents[1] / "reference"
CS336_TRAIN = '''
import sys
sys.path.insert(0, "REFERENCE_DIR")
import torch
from reference_model import TransformerLM, lm_loss
torch.manual_seed(0)
model = TransformerLM(64, 256, 2, 4, 1000)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(8):
    x = torch.randint(0, 1000, (2, 32))
    lm_loss(model(x), torch.randint(0, 1000, (2, 32))).backward()
    opt.step()
    opt.zero_grad()
'''


def run(cmd: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Runs a command to its end, 240 s at most: then SIGTERM, which lmprof-cli watch passes
    on to the script it runs in its own process group, and SIGKILL 30 s later."""
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)
    try:
        out, err = process.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            out, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        sys.exit(f"FAILED: timed out: {' '.join(cmd)}\nstdout:\n{out}\nstderr:\n{err}")
    print("$", " ".join(cmd), "->", process.returncode, flush=True)
    return subprocess.CompletedProcess(cmd, process.returncode, out, err)


def check(condition: bool, what: str, done: subprocess.CompletedProcess[str] | None = None) -> None:
    if not condition:
        detail = f"\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}" if done else ""
        sys.exit(f"FAILED: {what}{detail}")


def only_run(path: Path) -> dict:
    document = json.loads(path.read_text())
    check(document["schema"] == "lmprof.results/1.7", f"{path}: schema {document['schema']}")
    (record,) = document["runs"]
    check(record["source"]["kind"] == "watched", f"{path}: a watched run")
    return record


def check_an_unmodified_script(a: argparse.Namespace, watch: list[str], script: Path) -> None:
    """An unmodified script watched: its steps as it trains, show, and compare with an engine run."""
    # An unmodified script: a line per step as it trains, its run in the result set.
    out = a.workdir / "watched.json"
    # The loader sleeps 0.3 s a step, so that lmprof-cli (polling every 0.1 s) sees the steps
    # while the script runs, whatever the machine's speed.
    # The caller's LMPROF_WARMUP_STEPS is set too: --warmup 1 must win over it.
    done = run(watch + ["--json", str(out), "--", a.python, str(script), "--steps", "6",
                        "--sleep", "0.3"], env={**os.environ, "LMPROF_WARMUP_STEPS": "4"})
    check(done.returncode == 0, "watch of a plain script exits 0", done)
    check("trained 6" in done.stdout, "the script's own output passes through", done)
    # Steps are counted from 0 in every output: the sixth is step 5.
    check("] step 5 " in done.stderr and "] step 6" not in done.stderr and "fwd" in done.stderr,
          "a live line per step", done)
    record = only_run(out)
    check(record["status"] == "ok" and len(record["steps"]) == 6, "six steps, ok", done)
    check(record["source"]["model_class"] == "SmallLM", "the model's class")
    check(record["summary"]["tokens_per_s"] > 0, "tokens/s from --tokens-per-step")
    check([s["warmup"] for s in record["steps"]] == [True] + [False] * 5, "--warmup 1, not the caller's LMPROF_WARMUP_STEPS")
    check(all(s["data_ms"] >= 300 for s in record["steps"][1:]), "the loader's sleep is data")
    run_id = record["id"]

    # show prints it; compare pairs it with itself by key, and with the engine's run by id.
    done = run([a.cli, "show", str(out)])
    check(done.returncode == 0 and run_id in done.stdout and "SmallLM (watched)" in done.stdout,
          "show prints the watched run", done)
    done = run([a.cli, "compare", str(out), str(out)])
    check(done.returncode == 0 and "SmallLM (watched)" in done.stdout and "1 matched" in done.stdout,
          "compare pairs watched runs", done)
    engine = a.workdir / "engine.json"
    done = run([a.cli, "run", "--model", "tiny", "--ctx", "16", "--batch", "4",
                "--warmup", "1", "--steps", "3", "--device", "cpu", "--quiet",
                "--json", str(engine)])
    check(done.returncode == 0, "the engine's reference run", done)
    engine_id = json.loads(engine.read_text())["runs"][0]["id"]
    done = run([a.cli, "compare", f"{engine}:{engine_id}", f"{out}:{run_id}"])
    check(done.returncode == 0 and "tiny vs SmallLM (watched)" in done.stdout
          and "1 matched" in done.stdout,
          "compare A.json:ID B.json:ID pairs the engine's run with the watched one", done)
    done = run([a.cli, "compare", f"{engine}:nope", f"{out}:{run_id}"])
    check(done.returncode == 2 and "no run with id 'nope'" in done.stderr,
          "an unknown id is a usage error naming it", done)


def check_op_profile(a: argparse.Namespace, watch: list[str], script: Path) -> None:
    """--profile-ops, --memory-hz and --memory-snapshot: what each adds to the run."""
    # --profile-ops: one step's ops by module, read by `ops`, its trace beside --json.
    out = a.workdir / "ops.json"
    done = run(watch + ["--json", str(out), "--profile-ops", "3", "--ops-depth", "2",
                        "--memory-hz", "200", "--memory-snapshot", "2", "--time-modules", "1",
                        "--",
                        a.python, str(script), "--steps", "5"])
    check(done.returncode == 0, "watch --profile-ops exits 0", done)
    record = only_run(out)
    # --memory-hz: the timeline; --memory-snapshot on a CPU: why there is none.
    columns = record.get("memory_columns", {})
    check(set(columns.get("step", [])) == set(range(5)), "memory samples of every step")
    check("trains on cpu" in (record["memory_snapshot"]["error"] or ""), "no CPU snapshot, said")
    modules = [m["name"] for m in record.get("module_times", {}).get("modules", [])]
    check(modules == ["embed", "layer", "head"], f"--time-modules 1: {modules}")
    check("Time per module of SmallLM" in done.stdout, "watch prints the module table", done)
    check([s.get("op_profiled", False) for s in record["steps"]] == [False] * 3 + [True, False],
          "step 3 is the profiled one", done)
    profile = record["op_profile"]
    regions = {r["region"] for r in profile["rows"]}
    check({"embed", "layer.self_attn", "layer.linear1", "head"} <= regions,
          f"the model's modules at depth 2 are regions: {sorted(regions)}")
    # PyTorch's math attention, where d_h equals T: QKᵀ and P·V are told apart by order.
    attention = profile["headline"]["attention"]
    check(attention["time_ratio"] is not None and attention["scores_ms"] > 0
          and attention["value_ms"] > 0, f"softmax and both matmuls found: {attention}")
    trace = a.workdir / f"ops.{record['id']}.trace.json"
    check(profile["trace"] == str(trace) and trace.is_file(), "the trace beside --json")
    done = run([a.cli, "ops", str(out), "--by", "region", "--phase", "backward"])
    check(done.returncode == 0 and "layer.self_attn" in done.stdout
          and "autograd.accumulate_grad" in done.stdout, "ops reads the watched profile", done)


def check_against_reference(a: argparse.Namespace, watch: list[str], script: Path) -> None:
    """--against-reference: phase by phase against the engine, or said why not."""
    # --against-reference: a CS336-shaped model (the reference implementation in
    # tests/reference) against lmprof's engine at its size, phase by phase.
    cs336 = a.workdir / "train_cs336.py"
    cs336.write_text(CS336_TRAIN.replace("REFERENCE_DIR", str(REFERENCE_DIR)))
    out = a.workdir / "reference.json"
    done = run(watch + ["--quiet", "--json", str(out), "--against-reference", "--",
                        a.python, str(cs336)])
    check(done.returncode == 0, "watch --against-reference exits 0", done)
    check("per phase" in done.stdout and "| optimizer" in done.stdout and "1 matched" in done.stdout,
          "the pair, phase by phase", done)
    runs = json.loads(out.read_text())["runs"]
    check(len(runs) == 2 and runs[0]["source"]["model"]["d_model"] == 64
          and runs[1]["config"]["model"]["d_model"] == 64
          and runs[1]["config"]["context_length"] == 32, "the engine ran at the script's size")
    # The SmallLM is no CS336 model: said, not guessed.
    done = run(watch + ["--quiet", "--against-reference", "--", a.python, str(script),
                        "--steps", "3"])
    check(done.returncode == 0 and "no reference for SmallLM" in done.stderr
          and "watch(config=" in done.stderr, "a model without CS336 shapes is said", done)


def check_how_runs_end(a: argparse.Namespace, watch: list[str], script: Path) -> None:
    """A script that raises, one that never trains, one killed: how each run ends."""
    # A script that raises: its run ends `error` with the exception, every step kept.
    out = a.workdir / "raised.json"
    done = run(watch + ["--json", str(out), "--", a.python, str(script), "--raise-after", "3"])
    check(done.returncode == 1, "the script's exit status", done)
    record = only_run(out)
    check(record["status"] == "error" and "the loss went to the moon" in record["error"],
          "status error with the exception's message", done)
    check(len(record["steps"]) == 3, "the three steps before it", done)

    # A script that never trains (never imports torch) and exits 0: watch exits 0 too, says
    # it saw no training step, and writes no result set.
    idle = a.workdir / "idle.py"
    idle.write_text("print('nothing to train')\n")
    out = a.workdir / "idle.json"
    done = run(watch + ["--json", str(out), "--", a.python, str(idle)])
    check(done.returncode == 0 and "saw no training step" in done.stderr
          and "is not written" in done.stderr and not out.exists(),
          "a script with no training step exits with its own status, 0", done)

    # A script killed with SIGKILL: the steps its journal holds, `cancelled`.
    out = a.workdir / "killed.json"
    done = run(watch + ["--json", str(out), "--", a.python, str(script), "--kill-after", "4"])
    check(done.returncode == 128 + 9, "128 + SIGKILL", done)
    record = only_run(out)
    check(record["status"] == "cancelled" and "signal 9" in record["error"],
          "a killed script's run is cancelled, saying so", done)
    check(len(record["steps"]) == 4, "every step it finished", done)


def check_torchrun(a: argparse.Namespace, watch: list[str], script: Path) -> None:
    """torchrun with two ranks: a run per rank."""
    # torchrun with two ranks on Gloo: one run per rank.
    out = a.workdir / "ranks.json"
    done = run(watch + ["--json", str(out), "--", a.python, "-m", "torch.distributed.run",
                        "--standalone", "--nproc-per-node", "2", str(script), "--ddp",
                        "--steps", "4"])
    check(done.returncode == 0, "watch of a 2-rank torchrun script", done)
    runs = json.loads(out.read_text())["runs"]
    check(sorted(r["id"] for r in runs) == ["SmallLM-rank0", "SmallLM-rank1"], "a run per rank",
          done)
    check(all(len(r["steps"]) == 4 and r["source"]["model_class"] == "SmallLM"
              for r in runs), "each rank's four steps", done)


def check_live(a: argparse.Namespace, watch: list[str], script: Path) -> Path:
    """A served run shown live by a viewer that started first."""
    # Live: the script serves its run (--listen) and a viewer shows it through the window's
    # client (watch --connect); it connects while the script starts up, and retries.
    token = a.workdir / "token"
    token.write_text("f" * 64 + "\n")
    token.chmod(0o600)
    with socket.socket() as probe:  # a free port for the script to take
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    served = a.workdir / "served.json"
    viewed = a.workdir / "viewed.json"
    enough = a.workdir / "viewer-saw-a-step"
    # The viewer starts first, before the script listens (from its first step, once torch is
    # imported), and waits for it however long the machine takes (issue 58). The script
    # trains on until the viewer has shown a step, so that neither side's speed decides.
    viewer = subprocess.Popen([a.cli, "watch", "--connect", f"127.0.0.1:{port}",
                               "--token-file", str(token), "--json", str(viewed)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    script_side = subprocess.Popen(
        watch + ["--listen", f"127.0.0.1:{port}", "--token-file", str(token), "--json",
                 str(served), "--quiet", "--", a.python, str(script), "--steps", "8", "--sleep",
                 "0.2", "--until-file", str(enough)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    def watchdog() -> None:  # a script gone for good leaves a patient viewer waiting
        script_side.wait()
        try:
            viewer.wait(timeout=60)
        except subprocess.TimeoutExpired:
            viewer.kill()
    threading.Thread(target=watchdog, daemon=True).start()
    seen_lines = []
    assert viewer.stderr is not None
    for line in viewer.stderr:  # ends when the viewer does
        seen_lines.append(line)
        if "] step" in line:
            enough.touch()
    viewer.wait(timeout=240)
    enough.touch()  # a viewer that failed lets the script end now
    done = subprocess.CompletedProcess(viewer.args, viewer.returncode,
                                       viewer.stdout.read() if viewer.stdout else "",
                                       "".join(seen_lines))
    out, err = script_side.communicate(timeout=240)
    check(script_side.returncode == 0, f"the serving script: {err}")
    check(done.returncode == 0, "watch --connect shows the served run to its end", done)
    check("] step" in done.stderr, "the viewer prints the steps", done)
    seen = json.loads(viewed.read_text())["runs"]
    saved = only_run(served)
    check(len(seen) == 1 and seen[0]["id"] == saved["id"]
          and len(seen[0]["steps"]) == len(saved["steps"]) >= 8,
          "the viewer's run is the script's, every step", done)
    return token


def main() -> None:
    a = check_args.parse()
    script = a.workdir / "train.py"
    script.write_text(TRAIN)
    watch = [a.cli, "watch", "--warmup", "1", "--tokens-per-step", "64"]

    check_an_unmodified_script(a, watch, script)
    check_op_profile(a, watch, script)
    check_against_reference(a, watch, script)
    check_how_runs_end(a, watch, script)
    check_torchrun(a, watch, script)
    token = check_live(a, watch, script)
    check_viewer_says_what_it_cannot_read(a, watch, script, token)
    check_installed_package(a, watch, script)
    print("watch end to end: ok")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def spoiling_proxy(listener: socket.socket, upstream_port: int) -> None:
    """Relays one viewer to the script's server, spoiling the first step message on its way
    (total_ms becomes a string, which the viewer's reader refuses)."""
    client, _ = listener.accept()
    upstream = socket.create_connection(("127.0.0.1", upstream_port))

    def up() -> None:
        try:
            while data := client.recv(65536):
                upstream.sendall(data)
        except OSError:
            pass  # either side closed: the other direction ends the relay

    threading.Thread(target=up, daemon=True).start()
    pending, spoiled = b"", False
    try:
        while data := upstream.recv(65536):
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if not spoiled and b'"type":"step"' in line:
                    message = json.loads(line)
                    message["step"]["total_ms"] = "slow"
                    line, spoiled = json.dumps(message).encode(), True
                client.sendall(line + b"\n")
    except OSError:
        pass
    finally:
        client.close()
        upstream.close()


def check_viewer_says_what_it_cannot_read(a: argparse.Namespace, watch: list[str], script: Path,
                                          token: Path) -> None:
    """A message the viewer cannot read is said (issue 56), not dropped without a word, and
    the run still reaches its end."""
    port, proxy_port = free_port(), free_port()
    script_side = subprocess.Popen(
        watch + ["--listen", f"127.0.0.1:{port}", "--token-file", str(token), "--quiet", "--",
                 a.python, str(script), "--steps", "6", "--sleep", "0.3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until_listening(port, script_side)
    with socket.create_server(("127.0.0.1", proxy_port)) as listener:
        threading.Thread(target=spoiling_proxy, args=(listener, port), daemon=True).start()
        viewed = a.workdir / "viewed-spoiled.json"
        done = run([a.cli, "watch", "--connect", f"127.0.0.1:{proxy_port}", "--token-file",
                    str(token), "--json", str(viewed)])
    script_side.communicate(timeout=240)
    check(done.returncode == 0, "a viewer that skipped a message still shows the run's end", done)
    check("skipped 1 unreadable message(s) from the server" in done.stderr
          and "total_ms" in done.stderr, "the viewer says which message it skipped", done)
    seen = json.loads(viewed.read_text())["runs"]
    check(len(seen) == 1 and len(seen[0]["steps"]) == 6,
          "the finished run holds every step, the skipped one too", done)


def wait_until_listening(port: int, process: subprocess.Popen[str]) -> None:
    """Returns once 127.0.0.1:port accepts a connection; fails if `process` ends first."""
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return
        except OSError:
            if process.poll() is not None:
                out, err = process.communicate()
                check(False, f"the serving script ended before it listened: {err}")
            time.sleep(0.1)


def check_installed_package(a: argparse.Namespace, watch: list[str], script: Path) -> None:
    """watch uses the package the script's interpreter imports (a pip install on a GPU server),
    not the build's checkout: here a copy of the package that says so, on the PYTHONPATH of
    an interpreter named python-site."""
    site = a.workdir / "site"
    shutil.copytree(Path(__file__).resolve().parents[2] / "python" / "src" / "lmprof",
                    site / "lmprof", ignore=shutil.ignore_patterns("__pycache__"))
    auto = site / "lmprof" / "_auto.py"
    auto.write_text(auto.read_text().replace(
        "def arm() -> None:\n",
        "def arm() -> None:\n    sys.stderr.write('lmprof: watching from the installed copy\\n')\n", 1))
    interpreter = a.workdir / "bin" / "python-site"
    interpreter.parent.mkdir()
    interpreter.write_text(f'#!/bin/sh\nPYTHONPATH="{site}${{PYTHONPATH:+:$PYTHONPATH}}" '
                           f'exec "{a.python}" "$@"\n')
    interpreter.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "LMPROF_PYTHON_PACKAGE"}
    out = a.workdir / "installed.json"
    done = run(watch + ["--json", str(out), "--quiet", "--", str(interpreter), str(script),
                        "--steps", "3"], env)
    check(done.returncode == 0 and "from the installed copy" in done.stderr,
          "watch runs the package the script's interpreter imports", done)
    check(len(only_run(out)["steps"]) == 3, "its three steps", done)
    # A package folder named by LMPROF_PYTHON_PACKAGE that does not hold it is named.
    done = run(watch + ["--", str(interpreter), str(script)],
               {**env, "LMPROF_PYTHON_PACKAGE": str(a.workdir)})
    check(done.returncode == 2 and "LMPROF_PYTHON_PACKAGE" in done.stderr,
          "a wrong LMPROF_PYTHON_PACKAGE is an error naming it", done)


if __name__ == "__main__":
    main()
