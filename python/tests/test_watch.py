"""lmprof.watch() on real training loops on the CPU: the phases, their agreement with the
script's own clock, gradient accumulation, the data phase, logged scalars, the result set,
bad arguments, and the watcher's bounds."""

from __future__ import annotations

import inspect
import json
import math
import statistics
import time
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import lmprof
from conftest import BATCH, CTX, TinyGPT, batches, loss_of, train_steps
from lmprof import _publisher, _results, _steps


def test_a_plain_loop_records_every_step_with_its_phases(model: TinyGPT, tmp_path: Path) -> None:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    save = tmp_path / "run.json"
    losses = []
    with lmprof.watch(model, opt, name="tiny-gpt", tokens_per_step=BATCH * CTX, save=save) as run:
        for x, y in batches(8):
            with run.step():
                loss = loss_of(model, x, y)
                loss.backward()
                opt.step()
                opt.zero_grad()
                run.log(loss=loss)
                losses.append(loss.item())
    document = json.loads(save.read_text())
    assert document["schema"] == lmprof.SCHEMA
    (record,) = document["runs"]
    assert record["id"] == "tiny-gpt" and record["status"] == "ok"
    steps = record["steps"]
    assert [s["index"] for s in steps] == list(range(8))
    assert [s["warmup"] for s in steps] == [True] * 5 + [False] * 3
    for s in steps:
        assert s["forward_ms"] > 0 and s["backward_ms"] > 0 and s["optimizer_ms"] > 0
        phases = sum(s[f"{p}_ms"] for p in ("data", "forward", "backward", "optimizer", "rest"))
        assert math.isclose(s["total_ms"], phases)
        assert s["micro_batches"] == 1
    assert [s["loss"] for s in steps] == losses
    source = record["source"]
    assert source["model_class"] == "TinyGPT" and source["optimizer"] == "AdamW"
    assert record["parameter_count"] == sum(p.numel() for p in model.parameters())
    assert source["device"] == "cpu" and source["autocast"] == "none"
    summary = record["summary"]
    assert summary["total_ms"]["n"] == 3
    mean_s = summary["total_ms"]["mean"] / 1e3
    assert summary["tokens_per_s"] == pytest.approx(BATCH * CTX / mean_s)
    # The journal is replaced by the result set.
    assert not (tmp_path / "run.json.steps.jsonl").exists()


def test_phase_times_agree_with_perf_counter_around_the_same_calls(model: TinyGPT) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    theirs: dict[str, list[float]] = {"forward": [], "backward": [], "optimizer": []}
    for x, y in batches(12):
        with run.step():
            t0 = time.perf_counter()
            loss = loss_of(model, x, y)
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
            opt.step()
            t3 = time.perf_counter()
        theirs["forward"].append((t1 - t0) * 1e3)
        theirs["backward"].append((t2 - t1) * 1e3)
        theirs["optimizer"].append((t3 - t2) * 1e3)
    run.close()
    for phase, values in theirs.items():
        ours = statistics.median(s[f"{phase}_ms"] for s in run.steps)
        mine = statistics.median(values)
        # The watcher's marks sit inside the script's by the hooks' own few microseconds.
        assert abs(ours - mine) <= 0.5 + 0.1 * mine, (phase, ours, mine)


def test_gradient_accumulation_counts_micro_batches(model: TinyGPT) -> None:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    run = lmprof.watch(model, opt)
    data = batches(4 * 3)
    for _ in range(4):
        with run.step():
            for _ in range(3):
                x, y = next(data)
                (loss_of(model, x, y) / 3).backward()
            opt.step()
            opt.zero_grad()
    run.close()
    assert [s["micro_batches"] for s in run.steps] == [3, 3, 3, 3]
    assert all(s["forward_ms"] > 0 and s["backward_ms"] > 0 for s in run.steps)


def test_the_data_phase_holds_the_loaders_time(model: TinyGPT) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)

    def slow_loader():
        for batch in batches(6):
            time.sleep(0.03)
            yield batch

    for x, y in slow_loader():
        with run.step():
            loss_of(model, x, y).backward()
            opt.step()
    run.close()
    # Each step after the first waited 30 ms for its batch, in the data phase alone.
    for s in run.steps[1:]:
        assert s["data_ms"] >= 30.0


def test_a_step_that_raises_ends_the_run_failed_with_the_steps_so_far(model: TinyGPT,
                                                                      tmp_path: Path) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    save = tmp_path / "failed.json"
    with (pytest.raises(RuntimeError, match="diverged"),
          lmprof.watch(model, opt, save=save) as run):
        for i, (x, y) in enumerate(batches(5)):
            with run.step():
                loss_of(model, x, y).backward()
                opt.step()
                if i == 3:
                    raise RuntimeError("loss diverged")
    (record,) = json.loads(save.read_text())["runs"]
    assert record["status"] == "error"
    assert record["error"] == "RuntimeError: loss diverged"
    assert len(record["steps"]) == 3


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"tokens_per_step": 0}, "tokens_per_step"), ({"tokens_per_step": 2.5}, "tokens_per_step"),
     ({"name": ""}, "name"), ({"save": "/no/such/folder/run.json"}, "save")])
def test_bad_arguments_name_the_argument(model: TinyGPT, kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        lmprof.watch(model, **kwargs)


def test_bad_model_and_optimizer_name_the_argument(model: TinyGPT) -> None:
    with pytest.raises(ValueError, match=r"^model:"):
        lmprof.watch("not a model")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^optimizer:"):
        lmprof.watch(model, optimizer=model)  # type: ignore[arg-type]


def test_the_run_offers_the_documented_api_alone() -> None:
    # The Run users get is docs/WATCH.md's API; the hooks' callbacks (_recorder.py) and the
    # zero-code watcher's knobs (_run.open_run) are not part of it.
    public = {n for n in dir(lmprof.Run) if not n.startswith("_")}
    assert public == {"close", "log", "memory_snapshot", "name", "port", "profile_ops",
                      "result_set", "step", "steps", "summary", "time_modules"}
    assert (list(inspect.signature(lmprof.Run).parameters)
            == list(inspect.signature(lmprof.watch).parameters))


def test_log_refuses_what_is_not_one_number_and_keeps_watching(model: TinyGPT) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    counter = torch.zeros(())
    for x, y in batches(2):
        with run.step():
            loss = loss_of(model, x, y)
            loss.backward()
            opt.step()
            with pytest.raises(ValueError, match=r"^log\(logits=...\): expected one number"):
                run.log(logits=torch.ones(3))
            with pytest.raises(ValueError, match=r"^log\(note=...\): expected a number"):
                run.log(note="high")
            run.log(loss=loss, seen=counter)
            counter += 1  # changed in place after logging: the logged value stays
    run.close()
    assert [s["scalars"]["seen"] for s in run.steps] == [0.0, 1.0]
    assert all(isinstance(s["loss"], float) for s in run.steps)
    assert run.summary()["total_ms"]["n"] >= 0 and len(run.steps) == 2  # still watching


def test_a_forward_outside_any_step_is_not_watched(model: TinyGPT) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    for x, y in batches(3):
        with run.step():
            loss_of(model, x, y).backward()
            opt.step()
        with torch.no_grad():
            model(x)  # evaluation between steps
    run.close()
    assert [s["micro_batches"] for s in run.steps] == [1, 1, 1]


def test_hooks_are_gone_after_close(model: TinyGPT) -> None:
    original = torch.autograd.backward
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    assert torch.autograd.backward is not original
    run.close()
    assert torch.autograd.backward is original
    assert not model._forward_pre_hooks
    assert not opt._optimizer_step_pre_hooks and not opt._optimizer_step_post_hooks


def test_memory_stays_bounded_over_many_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_publisher, "RECENT_STEPS", 500)
    model = torch.nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    run = lmprof.watch(model, opt)
    x = torch.randn(2, 4)
    for _ in range(5_000):
        with run.step():
            model(x).sum().backward()
            opt.step()
    run.close()
    assert len(run.steps) == 500 and run.steps[-1]["index"] == 4_999
    assert run.summary()["total_ms"]["n"] == 5_000 - _steps.DEFAULT_WARMUP_STEPS


def test_the_summary_is_the_same_whether_kept_live_or_rebuilt_from_steps(model: TinyGPT) -> None:
    # The live run and recover() share one summary (peaks from the measured steps, as the
    # engine's): rebuilding it from the recorded steps gives the same figures.
    from lmprof._results import Tally

    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt, tokens_per_step=BATCH * CTX)
    train_steps(run, model, opt, 7)
    run.close()
    tally = Tally()
    for step in run.steps:
        tally.add(step)
    assert tally.summary(BATCH * CTX) == run.summary()
    measured = [s for s in run.steps if not s["warmup"]]
    assert run.summary()["peak_bytes"]["forward"] == max(
        s["peak_allocated_by_phase"]["forward"] for s in measured)


def test_a_backward_inside_a_backward_stays_in_the_outer_phase(model: TinyGPT) -> None:
    # A hook that runs its own backward (as an auxiliary loss might): the outer backward's
    # time after it returns is still backward, not the rest of the step.
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    aux = torch.nn.Linear(4, 1)

    def inner_backward(grad: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():  # hooks run without it
            aux(torch.randn(2, 4)).sum().backward()
        time.sleep(0.02)
        return grad

    run = lmprof.watch(model, opt)
    for x, y in batches(3):
        with run.step():
            logits = model(x)
            logits.register_hook(inner_backward)
            F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).backward()
            opt.step()
    run.close()
    for s in run.steps:
        assert s["backward_ms"] >= 20.0 and s["rest_ms"] < 20.0, s


def test_the_journal_records_the_runs_end_before_the_result_set(
        model: TinyGPT, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Should writing the result set fail (a full disk), the journal still says how the run
    # ended, and recover() reads it as such rather than as a killed run.
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    save = tmp_path / "run.json"
    run = lmprof.watch(model, opt, save=save)
    train_steps(run, model, opt, 4)

    def full_disk(path: Path, document: dict) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_results, "write_atomically", full_disk)
    with pytest.raises(ValueError, match=r"No space left.*every step is in .*recover"):
        run.close()
    (record,) = lmprof.recover(tmp_path / "run.json.steps.jsonl")["runs"]
    assert record["status"] == "ok" and record["error"] is None
    assert [s["index"] for s in record["steps"]] == [0, 1, 2, 3]


def test_a_device_error_at_close_keeps_the_steps_already_read(model: TinyGPT,
                                                               tmp_path: Path) -> None:
    # Reading the last steps waits for the device; a device that fails then (a CUDA error)
    # ends the run `error` with the steps read before, and the result set is still written.
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    save = tmp_path / "run.json"
    run = lmprof.watch(model, opt, save=save)
    train_steps(run, model, opt, 3)
    # The fourth step's marks are not ready when it ends, as on a busy GPU: it waits for
    # close(), whose wait fails.
    run._recorder._clock.ready = lambda marks: False  # type: ignore[method-assign]
    train_steps(run, model, opt, 1)

    def failing_wait(mark: object) -> None:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    run._recorder._clock.wait = failing_wait  # type: ignore[method-assign]
    run.close()
    (record,) = json.loads(save.read_text())["runs"]
    assert record["status"] == "error"
    assert "illegal memory access" in record["error"]
    assert [s["index"] for s in record["steps"]] == [0, 1, 2]


def test_nvtx_ranges_stay_balanced_when_the_watcher_stops_mid_step(
        model: TinyGPT, monkeypatch: pytest.MonkeyPatch) -> None:
    # On a GPU each phase is an NVTX range; if the watcher breaks inside a step it closes
    # the ranges it opened, so the script's own ranges in nsys stay where they were.
    depth = {"open": 0}

    def push(name: str) -> int:
        depth["open"] += 1
        return depth["open"]

    def pop() -> int:
        depth["open"] -= 1
        return depth["open"]

    monkeypatch.setattr(torch.cuda.nvtx, "range_push", push)
    monkeypatch.setattr(torch.cuda.nvtx, "range_pop", pop)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    run._recorder._ranges.on = True  # as on a GPU
    data = batches(3)
    x, y = next(data)
    with run.step():
        loss_of(model, x, y).backward()
        opt.step()
    assert depth["open"] == 0
    x, y = next(data)
    with pytest.warns(RuntimeWarning, match="stopped watching"), run.step():
        assert depth["open"] == 2  # "step" and its phase
        run._recorder._memory.boundary = lambda: 1 / 0  # type: ignore[method-assign]
        loss_of(model, x, y).backward()
    assert depth["open"] == 0
    run.close()
