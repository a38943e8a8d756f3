"""Evaluation passes between steps (docs/WATCH.md, "Evaluation passes"): gradient-free
forwards of the model between two steps are an interval of their own, not the next step's
data phase, in the zero-code mode (an evaluation before the model is known included) and
with the API; an evaluation after the last step is the run's; another module's
gradient-free forward is nobody's evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import torch

import lmprof
from conftest import TinyGPT, batches, loss_of, run_script

# A model whose evaluation forwards sleep 30 ms, and which notes (host clock, ns) where its
# forwards' bodies begin and end: the watcher's hooks fire outside those, so the data phase
# after an evaluation is at most the gap from its last forward's body to the next step's.
SLOW_EVAL = """
import json, time, torch
from conftest import TinyGPT, batches, loss_of
class Timed(TinyGPT):
    def forward(self, tokens):
        begun = time.perf_counter_ns()
        if not torch.is_grad_enabled():
            time.sleep(0.03)
        out = super().forward(tokens)
        BODIES.append((torch.is_grad_enabled(), begun, time.perf_counter_ns()))
        return out
BODIES = []
def evaluate(model):
    with torch.no_grad():
        for x, _ in batches(3, seed=1):
            model(x)
"""

ZERO_CODE = SLOW_EVAL + """
torch.manual_seed(0)
model = Timed()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for i, (x, y) in enumerate(batches(7)):
    if i % 3 == 0:
        evaluate(model)  # nanoGPT's estimate_loss(), the first one before any step
    loss_of(model, x, y).backward()
    opt.step()
    opt.zero_grad()
evaluate(model)  # after the last step
with torch.no_grad():
    torch.nn.Linear(4, 4)(torch.zeros(1, 4))  # another module: no evaluation of the run's
json.dump(BODIES, open("bodies.json", "w"))
"""


def check_evaluations(steps: list[dict], bodies: list[list]) -> None:
    """Steps 0, 3 and 6 follow an evaluation of 3 forwards; none is in their data phase."""
    training = [b for b in bodies if b[0]]
    for step in steps:
        if step["index"] % 3:
            assert "evaluation_ms" not in step, step
            continue
        assert step["evaluation_forwards"] == 3, step
        assert step["evaluation_ms"] >= 3 * 30.0, step  # its sleeps are the evaluation's
        # Its data phase runs from the evaluation's last forward to the step's first: at
        # most the gap between those forwards' bodies.
        last_eval_end = max(b[2] for b in bodies if not b[0] and b[2] < training[step["index"]][1])
        gap_ms = (training[step["index"]][1] - last_eval_end) / 1e6
        assert step["data_ms"] <= gap_ms, (step, gap_ms)


def test_an_evaluation_between_steps_is_its_own_interval_not_data(tmp_path: Path) -> None:
    save = tmp_path / "evals.json"
    done = run_script(ZERO_CODE, tmp_path, watch=True,
                      env={"LMPROF_WATCH_SAVE": str(save), "LMPROF_WARMUP_STEPS": "1"})
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(save.read_text())["runs"]
    assert len(record["steps"]) == 7
    check_evaluations(record["steps"], json.loads((tmp_path / "bodies.json").read_text()))
    assert record["final_evaluation_forwards"] == 3, "the other module's forward is not one"
    assert record["final_evaluation_ms"] >= 3 * 30.0


def test_the_api_records_evaluations_the_same_way(tmp_path: Path) -> None:
    namespace: dict = {}
    exec(SLOW_EVAL, namespace)
    torch.manual_seed(0)
    model = namespace["Timed"]()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    run = lmprof.watch(model, opt)
    for i, (x, y) in enumerate(batches(7)):
        if i % 3 == 0:
            namespace["evaluate"](model)
        with run.step():
            loss_of(model, x, y).backward()
            opt.step()
            opt.zero_grad()
    run.close()
    check_evaluations(run.steps, namespace["BODIES"])
    assert "final_evaluation_ms" not in run.result_set()["runs"][0]


def test_a_frozen_module_s_forward_is_no_evaluation(model: TinyGPT) -> None:
    teacher = TinyGPT()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    run = lmprof.watch(model, opt)
    for x, y in batches(3):
        with torch.no_grad():
            teacher(x)  # a distillation's teacher, between the steps
        with run.step():
            loss_of(model, x, y).backward()
            opt.step()
    run.close()
    assert all("evaluation_ms" not in s for s in run.steps)
