"""Whole training scripts in their own interpreter: unmodified ones watched by the zero-code
bootstrap, one that raises, one killed with SIGKILL, and a torch.compile'd model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import lmprof
from conftest import PYTHON_DIR, run_script

PLAIN_LOOP = """
import torch
from conftest import TinyGPT, batches, loss_of
torch.manual_seed(0)
model = TinyGPT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for x, y in batches({steps}):
    loss = loss_of(model, x, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    with torch.no_grad():
        model(x)  # an evaluation forward: not a step
{after}
print("trained")
"""


def test_an_unmodified_script_is_watched_with_no_code(tmp_path: Path) -> None:
    save = tmp_path / "watched.json"
    done = run_script(PLAIN_LOOP.format(steps=7, after=""), tmp_path, watch=True,
                      env={"LMPROF_WATCH_SAVE": str(save), "LMPROF_WARMUP_STEPS": "2",
                           "LMPROF_TOKENS_PER_STEP": "128"})
    assert done.returncode == 0, done.stderr
    assert "trained" in done.stdout
    (record,) = json.loads(save.read_text())["runs"]
    assert record["status"] == "ok"
    assert record["id"] == "TinyGPT" and record["source"]["model_class"] == "TinyGPT"
    assert record["source"]["script"].endswith("train.py")
    steps = record["steps"]
    assert len(steps) == 7
    assert [s["warmup"] for s in steps] == [True, True] + [False] * 5
    assert all(s["micro_batches"] == 1 and s["backward_ms"] > 0 and s["optimizer_ms"] > 0
               for s in steps)
    assert record["summary"]["tokens_per_s"] > 0


def test_a_script_that_never_imports_torch_is_left_alone(tmp_path: Path) -> None:
    save = tmp_path / "nothing.json"
    done = run_script("import sys; print('no torch' if 'torch' not in sys.modules else 'torch')",
                      tmp_path, watch=True, env={"LMPROF_WATCH_SAVE": str(save)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no torch"
    assert not save.exists()


def test_a_script_that_raises_ends_its_run_failed_with_every_step(tmp_path: Path) -> None:
    save = tmp_path / "raised.json"
    done = run_script(PLAIN_LOOP.format(steps=4, after="raise ValueError('bad batch')"),
                      tmp_path, watch=True, env={"LMPROF_WATCH_SAVE": str(save)})
    assert done.returncode == 1 and "ValueError: bad batch" in done.stderr
    (record,) = json.loads(save.read_text())["runs"]
    assert record["status"] == "error"
    assert record["error"] == "ValueError: bad batch"
    assert len(record["steps"]) == 4


def test_sigkill_keeps_every_step_written_to_the_journal(tmp_path: Path) -> None:
    save = tmp_path / "killed.json"
    script = tmp_path / "endless.py"
    script.write_text(f"""
import torch, lmprof
from conftest import TinyGPT, batches, loss_of
model = TinyGPT()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
run = lmprof.watch(model, opt, save={str(save)!r})
for x, y in batches(10**9):
    with run.step():
        loss_of(model, x, y).backward()
        opt.step()
""")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR / "src"),
                                                        str(Path(__file__).parent)])}
    journal = tmp_path / "killed.json.steps.jsonl"
    child = subprocess.Popen([sys.executable, str(script)], env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 600  # a hang guard, far above the few seconds it takes
        while child.poll() is None and time.monotonic() < deadline:
            if journal.exists() and journal.read_text().count('"kind": "step"') >= 4:
                break
            time.sleep(0.05)
        assert child.poll() is None, "the script ended on its own"
        written = journal.read_text().count('"kind": "step"')
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    assert not save.exists()
    (record,) = lmprof.recover(journal)["runs"]
    assert record["status"] == "cancelled"
    assert len(record["steps"]) >= written >= 4
    assert [s["index"] for s in record["steps"]] == list(range(len(record["steps"])))


def test_torch_compile_steps_are_flagged(tmp_path: Path) -> None:
    # About 20 s on the 2-core development machine, most of it Inductor compiling.
    save = tmp_path / "compiled.json"
    done = run_script(f"""
import torch, lmprof
from conftest import TinyGPT, batches, loss_of
torch.manual_seed(0)
model = torch.compile(TinyGPT(layers=1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
with lmprof.watch(model, opt, save={str(save)!r}) as run:
    for x, y in batches(4):
        with run.step():
            loss_of(model, x, y).backward()
            opt.step()
""", tmp_path, env={"LMPROF_WARMUP_STEPS": "0"}, timeout=600)
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(save.read_text())["runs"]
    steps = record["steps"]
    assert len(steps) == 4
    # The first step compiled the forward (and its backward); the later ones replay it.
    assert steps[0].get("compiled") is True and steps[0]["warmup"] is True
    assert not any(s.get("compiled") for s in steps[1:])
    assert record["source"]["torch_compile"] is True
    # The user's class, not torch.compile's wrapper around it.
    assert record["source"]["model_class"] == "TinyGPT" and record["id"] == "TinyGPT"


def test_a_process_that_never_trains_writes_no_run(tmp_path: Path) -> None:
    # A torchrun launcher or a DataLoader worker imports torch but never steps: it must not
    # replace the training process's result set with an empty run.
    save = tmp_path / "launcher.json"
    done = run_script("import torch\nprint(torch.ones(2).sum().item())", tmp_path, watch=True,
                      env={"LMPROF_WATCH_SAVE": str(save)})
    assert done.returncode == 0, done.stderr
    assert not save.exists()
