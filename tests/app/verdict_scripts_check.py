"""Verdicts on real training loops (docs/VERDICTS.md): plain PyTorch scripts, each with one
known bottleneck, run under `lmprof-cli watch`. Each must be named by its kind, firmly and
with its interval, and get no other warning; clean loops of different shapes get none. Two
Gloo ranks under torchrun, one with a slow loader, are named a straggler across their runs.

`noisy` and `drift` judge the measurement, not the loop: on a busy machine they are right
to warn about any script, so they are left out of "no other warning". Every script runs on
one thread, so that a busy machine slows it without changing where its time goes.

    verdict_scripts_check.py --cli build/app/lmprof-cli --workdir DIR [--python PYTHON]
                             [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HEAD = '''
import io, time, torch, torch.nn as nn
torch.set_num_threads(1)
torch.manual_seed(0)
'''

SCRIPTS = {
    # A Dataset that takes 5 ms an item (decoding, say), read with no workers.
    "slow_loader": '''
from torch.utils.data import DataLoader, Dataset
class Slow(Dataset):
    def __len__(self): return 10_000
    def __getitem__(self, i):
        time.sleep(0.005)
        return torch.randint(0, 128, (16,))
model = nn.Sequential(nn.Embedding(128, 64), nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 128))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, x in enumerate(DataLoader(Slow(), batch_size=8)):
    loss = nn.functional.cross_entropy(model(x).flatten(0, 1), x.roll(-1, 1).flatten())
    loss.backward(); opt.step(); opt.zero_grad()
    if step == 40: break
''',
    # A checkpoint every 10 steps, to slow storage.
    "checkpoint": '''
model = nn.Sequential(nn.Embedding(128, 64), nn.Linear(64, 512), nn.GELU(), nn.Linear(512, 128))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(60):
    x = torch.randint(0, 128, (16, 32))
    loss = nn.functional.cross_entropy(model(x).flatten(0, 1), x.roll(-1, 1).flatten())
    loss.backward(); opt.step(); opt.zero_grad()
    if step % 10 == 9:
        torch.save(model.state_dict(), io.BytesIO()); time.sleep(0.2)
''',
    # The logits (4 MiB a step) kept with their graph, step after step. Smaller ones drown in
    # the resident set's own jumps on a busy machine: 1 MiB a step was once judged no creep.
    "kept_graph": '''
model = nn.Sequential(nn.Embedding(512, 256), nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 512))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
outputs = []
for step in range(60):
    x = torch.randint(0, 512, (32, 64))
    h = model(x)
    loss = nn.functional.cross_entropy(h.flatten(0, 1), x.roll(-1, 1).flatten())
    loss.backward(); opt.step(); opt.zero_grad()
    outputs.append(h)
''',
    # A huge vocabulary in many tables, and AdamW's per-parameter loop over all of them.
    # Each step takes about 0.2 s: a loaded machine's preemptions stay small beside it.
    "per_parameter_adamw": '''
tables = nn.ModuleList(nn.Embedding(20000, 64) for _ in range(64))
head = nn.Linear(64, 8)
opt = torch.optim.AdamW(list(tables.parameters()) + list(head.parameters()), lr=1e-3,
                        foreach=False)
x = torch.randint(0, 20000, (4, 8))
for step in range(40):
    loss = head(sum(t(x) for t in tables)).square().mean()
    loss.backward(); opt.step(); opt.zero_grad(set_to_none=False)
''',
    # A compiled model fed a new sequence length each step, twelve lengths in turn: every new
    # one compiles again until torch._dynamo's cache of 8 graphs is full.
    "recompiles": '''
model = nn.Sequential(nn.Embedding(128, 64), nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 128))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
compiled = torch.compile(model, backend="eager", dynamic=False)
for step in range(40):
    x = torch.randint(0, 128, (32, 8 + step % 12))
    loss = nn.functional.cross_entropy(compiled(x).flatten(0, 1), x.roll(-1, 1).flatten())
    loss.backward(); opt.step(); opt.zero_grad()
''',
    # Two Gloo ranks under torchrun; rank 1's shard is on slow storage (4 ms an item), and
    # rank 0 waits for it in backward's all-reduce.
    "two_ranks": '''
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
dist.init_process_group("gloo")
rank = dist.get_rank()
class Items(Dataset):
    def __len__(self): return 10_000
    def __getitem__(self, i):
        if rank == 1:
            time.sleep(0.004)
        return torch.randint(0, 128, (16,))
model = DDP(nn.Sequential(nn.Embedding(128, 64), nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 128)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, x in enumerate(DataLoader(Items(), batch_size=8)):
    loss = nn.functional.cross_entropy(model(x).flatten(0, 1), x.roll(-1, 1).flatten())
    loss.backward(); opt.step(); opt.zero_grad()
    if step == 40: break
dist.destroy_process_group()
''',
    # Clean loops: a small language model with AdamW, an MLP with SGD and momentum.
    "clean_lm": '''
model = nn.Sequential(nn.Embedding(128, 128), nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 128))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
for step in range(60):
    x = torch.randint(0, 128, (32, 64))
    loss = nn.functional.cross_entropy(model(x).flatten(0, 1), x.roll(-1, 1).flatten())
    loss.backward(); opt.step(); opt.zero_grad()
''',
    "clean_mlp": '''
model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                      nn.Linear(1024, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for step in range(60):
    x = torch.randn(64, 256)
    loss = nn.functional.cross_entropy(model(x), torch.randint(0, 10, (64,)))
    loss.backward(); opt.step(); opt.zero_grad()
''',
}

# What each must be called: the kind, and nothing else but the measurement's own kinds.
EXPECTED = {
    "slow_loader": "input-bound",
    "checkpoint": "periodic-stalls",
    "kept_graph": "memory-creep",
    "per_parameter_adamw": "optimizer-bound",
    "recompiles": "recompiles",
    "two_ranks": None,  # each rank: below
    "clean_lm": None,
    "clean_mlp": None,
}
MEASUREMENT_KINDS = {"noisy", "drift"}
# Verdicts about the runs together (the result set's top level), and what each rank's own
# verdicts may say besides: rank 1 waits for its own loader.
ACROSS = {"two_ranks": "straggler"}
ALSO = {"two_ranks": {"input-bound"}}
# How a script is started: the two ranks by torchrun (as `python -m torch.distributed.run`).
LAUNCH = {"two_ranks": ["-m", "torch.distributed.run", "--nproc-per-node", "2"]}


def judged(name: str, verdicts: list, expected: str | None, also: set) -> list[str]:
    """Whether `verdicts` name `expected` firmly with its interval, and warn of nothing else
    but the measurement's kinds and `also`; the failures, each a line."""
    failures = []
    warned = {v["kind"] for v in verdicts if v["severity"] != "info"}
    shown = "; ".join(f'{v["severity"]} {v["kind"]} {v["certainty"]} {v["value"]:.4g} '
                      f'{v["interval"]}' for v in verdicts)
    print(f"{name}: {shown}")
    if expected is not None:
        hit = [v for v in verdicts if v["kind"] == expected]
        if not hit or hit[0]["certainty"] != "firm" or hit[0]["severity"] == "info":
            failures.append(f"{name}: expected a firm {expected} warning, got: {shown}")
        elif not hit[0]["interval"][0] <= hit[0]["value"] <= hit[0]["interval"][1]:
            failures.append(f"{name}: the value is outside its interval: {hit[0]}")
    others = warned - {expected} - MEASUREMENT_KINDS - also
    if others:
        failures.append(f"{name}: warned about {sorted(others)} as well: {shown}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--only", choices=sorted(SCRIPTS),
                        help="run this script alone (ctest runs each as a test of its own)")
    args = parser.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    failures = []
    scripts = {args.only: SCRIPTS[args.only]} if args.only else SCRIPTS
    for name, body in scripts.items():
        script = work / f"{name}.py"
        script.write_text(HEAD + body)
        out = work / f"{name}.json"
        proc = subprocess.run([args.cli, "watch", "--quiet", "--json", str(out), "--",
                               args.python, *LAUNCH.get(name, []), str(script)],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0 or not out.exists():
            failures.append(f"{name}: watch exited {proc.returncode}: {proc.stderr[-2000:]}")
            continue
        doc = json.loads(out.read_text())
        expected = EXPECTED[name]
        for run in doc["runs"]:
            failures += judged(f"{name} {run['id']}", run["verdicts"], expected,
                               ALSO.get(name, set()))
        if name in ACROSS:
            failures += judged(f"{name} across", doc.get("verdicts", []), ACROSS[name], set())
        # show prints them under the table, with the advice.
        show = subprocess.run([args.cli, "show", str(out)], capture_output=True, text=True)
        expected = ACROSS.get(name, expected)
        if expected and f" {expected}" not in show.stdout.split("Verdicts for", 1)[-1]:
            failures.append(f"{name}: show does not print {expected}:\n{show.stdout}")
        if "next:" not in show.stdout:
            failures.append(f"{name}: show prints no advice:\n{show.stdout}")
    for f in failures:
        print("FAIL:", f)
    print(f"verdict_scripts_check: {len(scripts)} script(s), {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
