"""Phases by what the code does (docs/WATCH.md, "Frameworks"): a forward and backward inside
``optimizer.step(closure)`` are forward and backward and the update after them is the
optimizer; several optimizers in one step are all optimizer time, the zero-code step ending
after the last; the run names every optimizer's class, and its tokens per step from the
first batch of token ids, or says why it cannot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import lmprof
from conftest import BATCH, CTX, TinyGPT, batches, loss_of, run_script

# An optimizer whose update takes 40 ms more than SGD's: where its time lands is plain.
SLOW = """
import time, torch
class SlowSGD(torch.optim.SGD):
    def step(self, closure=None):
        loss = super().step(closure)
        time.sleep(0.04)
        return loss
"""


def measured(save: Path) -> tuple[dict, list[dict]]:
    (record,) = json.loads(save.read_text())["runs"]
    return record, [s for s in record["steps"] if not s["warmup"]]


def test_a_closure_s_forward_and_backward_are_theirs_and_the_update_is_the_optimizers(
        tmp_path: Path) -> None:
    save = tmp_path / "closure.json"
    done = run_script(SLOW + """
from conftest import TinyGPT, batches, loss_of
torch.manual_seed(0)
model = TinyGPT()
opt = SlowSGD(model.parameters(), lr=1e-3)
for x, y in batches(6):
    def closure():
        opt.zero_grad()
        loss = loss_of(model, x, y)
        loss.backward()
        return loss
    opt.step(closure)  # Lightning's automatic optimization, LBFGS
""", tmp_path, watch=True, env={"LMPROF_WATCH_SAVE": str(save), "LMPROF_WARMUP_STEPS": "1"})
    assert done.returncode == 0, done.stderr
    record, steps = measured(save)
    assert len(record["steps"]) == 6
    assert record["source"]["optimizer"] == "SlowSGD"
    assert all(s["forward_ms"] > 0 and s["backward_ms"] > 0 for s in steps)
    # The sleep after the closure is the optimizer's: before, it was read as the rest of
    # the step and the optimizer as 0 ms. (A lower bound only: no test reads the load.)
    assert all(s["optimizer_ms"] >= 40.0 for s in steps), steps
    assert all(s["micro_batches"] == 1 for s in steps)


def test_two_optimizers_are_both_optimizer_time_and_the_step_ends_after_the_last(
        tmp_path: Path) -> None:
    save = tmp_path / "two.json"
    done = run_script(SLOW + """
from conftest import TinyGPT, batches, loss_of
torch.manual_seed(0)
model = TinyGPT()
embeddings = [p for n, p in model.named_parameters() if "emb" in n]
rest = [p for n, p in model.named_parameters() if "emb" not in n]
first = torch.optim.AdamW(rest, lr=1e-3)
second = SlowSGD(embeddings, lr=1e-3)
for x, y in batches(6):
    loss_of(model, x, y).backward()
    first.step()
    second.step()  # its 40 ms belong to this step, not the next step's data
    first.zero_grad(); second.zero_grad()
""", tmp_path, watch=True, env={"LMPROF_WATCH_SAVE": str(save), "LMPROF_WARMUP_STEPS": "1"})
    assert done.returncode == 0, done.stderr
    record, steps = measured(save)
    assert len(record["steps"]) == 6, "one step per update cycle"
    assert record["source"]["optimizer"] == "AdamW, SlowSGD"
    # Before, the second optimizer's 40 ms were the next step's data, and the last step's
    # were lost. The first cycle shows the loop steps two optimizers (_boundaries.py): its
    # second's time is the next step's data, in the warmup.
    first, *rest = record["steps"]
    assert first["warmup"]
    assert all(s["optimizer_ms"] >= 40.0 for s in rest), "the last step's too"
    assert all(s["micro_batches"] == 1 for s in steps)


def test_a_closure_under_the_api_reads_the_same(model: TinyGPT) -> None:
    opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=2)
    run = lmprof.watch(model, opt)
    for x, y in batches(3):
        with run.step():
            def closure() -> torch.Tensor:
                opt.zero_grad()
                loss = loss_of(model, x, y)  # noqa: B023 - called in this iteration only
                loss.backward()
                return loss
            opt.step(closure)
    run.close()
    steps = run.steps
    assert len(steps) == 3
    assert all(s["forward_ms"] > 0 and s["backward_ms"] > 0 and s["optimizer_ms"] > 0
               for s in steps)
    # LBFGS evaluates the closure up to max_iter times: each forward is a micro-batch.
    assert all(s["micro_batches"] >= 1 for s in steps)


def test_tokens_per_step_come_from_the_first_batch_of_token_ids(model: TinyGPT) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    run = lmprof.watch(model, opt)  # no tokens_per_step
    for x, y in batches(7):
        with run.step():
            for half in (x[:2], x[2:]):  # two micro-batches of 2 x 32 tokens
                loss_of(model, half, y[: half.shape[0]]).backward()
            opt.step()
    run.close()
    record = run.result_set()["runs"][0]
    assert record["source"]["tokens_per_step"] == BATCH * CTX
    assert "tokens_note" not in record["source"]
    mean_s = record["summary"]["total_ms"]["mean"] / 1e3
    assert record["summary"]["tokens_per_s"] == pytest.approx(BATCH * CTX / mean_s)


def test_a_model_fed_floats_says_why_it_has_no_tokens_per_step() -> None:
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(mlp.parameters(), lr=1e-3)
    run = lmprof.watch(mlp, opt)
    for _ in range(3):
        with run.step():
            mlp(torch.randn(16, 8)).square().mean().backward()
            opt.step()
    run.close()
    source = run.result_set()["runs"][0]["source"]
    assert source["tokens_per_step"] is None
    assert "float32 tensor of shape (16, 8)" in source["tokens_note"]
    assert run.summary()["tokens_per_s"] == 0.0


def test_a_step_the_grad_scaler_skips_is_still_a_step(tmp_path: Path) -> None:
    save = tmp_path / "scaled.json"
    done = run_script("""
import torch
from conftest import TinyGPT, batches, loss_of
torch.manual_seed(0)
model = TinyGPT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
for i, (x, y) in enumerate(batches(6)):
    scaler.scale(loss_of(model, x, y)).backward()
    if i == 3:
        next(model.parameters()).grad.fill_(float("inf"))  # the scaler skips this update
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
assert scaler.get_scale() < 1024.0, "a step was skipped"
""", tmp_path, watch=True, env={"LMPROF_WATCH_SAVE": str(save), "LMPROF_WARMUP_STEPS": "1"})
    assert done.returncode == 0, done.stderr
    record, _ = measured(save)
    steps = record["steps"]
    assert len(steps) == 6, "the skipped update is a step of its own, not merged into the next"
    assert all(s["micro_batches"] == 1 and s["optimizer_ms"] > 0 for s in steps), steps
    assert record["source"]["optimizer"] == "AdamW"


def test_an_optimizer_step_that_raised_does_not_swallow_the_steps_after_it(
        tmp_path: Path) -> None:
    # A step() that raises calls no post-hook: before, the watcher thought the optimizer
    # still ran, and every later step merged into the one that raised.
    save = tmp_path / "raised.json"
    done = run_script(SLOW + """
from conftest import TinyGPT, batches, loss_of
torch.manual_seed(0)
model = TinyGPT()
class Flaky(SlowSGD):
    calls = 0
    def step(self, closure=None):
        Flaky.calls += 1
        if Flaky.calls == 3:
            raise RuntimeError("CUDA out of memory (a stand-in)")
        return super().step(closure)
opt = Flaky(model.parameters(), lr=1e-3)
for x, y in batches(6):
    loss_of(model, x, y).backward()
    try:
        opt.step()
    except RuntimeError:
        pass  # the script skips the batch and goes on
    opt.zero_grad()
""", tmp_path, watch=True, env={"LMPROF_WATCH_SAVE": str(save), "LMPROF_WARMUP_STEPS": "1"})
    assert done.returncode == 0, done.stderr
    record, _ = measured(save)
    # The one that raised is not recorded; its number is not reused, as under the API.
    assert [s["index"] for s in record["steps"]] == [0, 1, 3, 4, 5]
    assert all(s["micro_batches"] == 1 for s in record["steps"]), record["steps"]
    assert all(s["optimizer_ms"] >= 40.0 for s in record["steps"])
    assert record["status"] == "error" and "optimizer.step() raised" in record["error"]
