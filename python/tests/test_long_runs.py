"""A run longer than the ring (issue 56): the watcher holds a bounded number of steps
whatever their count, keeps its statistics over every measured step, and saves the steps
thinned, saying so in the run's `thinned` field; recover() rebuilds the same from the
journal. KEPT_STEPS is lowered so that a few thousand steps stand for millions."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
import torch

import lmprof
from conftest import TinyGPT, train_steps
from lmprof import _tally
from lmprof._tally import QUANTILE_ERROR, Tally, phase_stats

PHASE_KEYS = ("data_ms", "forward_ms", "backward_ms", "optimizer_ms", "rest_ms", "total_ms")


def synthetic_step(index: int, warmup: bool, rng: random.Random) -> dict[str, Any]:
    times = {key: rng.lognormvariate(0.0, 0.5) for key in PHASE_KEYS}
    if index % 7 == 0:
        times["data_ms"] = 0.0  # some phases take no time at all
    return {"index": index, "warmup": warmup, **times,
            "peak_allocated_by_phase": {"data": 0, "forward": index, "backward": 0,
                                        "optimizer": 0, "rest": 0}}


def test_past_the_ring_the_steps_are_thinned_and_the_statistics_cover_all(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_tally, "KEPT_STEPS", 100)
    rng = random.Random(0)
    tally = Tally()
    steps = [synthetic_step(i, i < 3, rng) for i in range(5_000)]
    steps[40]["op_profiled"] = True  # perturbed: kept whatever the thinning, not measured
    for step in steps:
        tally.add(step)
    kept = tally.kept()
    regular = [s for s in kept if not s["warmup"] and not s.get("op_profiled")]
    assert 50 <= len(regular) <= 100 and len(tally) == 5_000 and tally.measured() == 4_997
    assert tally.every == 64 and all(s["index"] % 64 == 0 for s in regular)
    assert [s["index"] for s in kept if s["warmup"] or s.get("op_profiled")] == [0, 1, 2, 40]
    assert tally.thinning() == {"every": 64, "recorded_steps": 5_000}

    measured = [s for s in steps if not s["warmup"] and not s.get("op_profiled")]
    summary = tally.summary(1024)
    for key in PHASE_KEYS:
        values = sorted(s[key] for s in measured)
        exact, streamed = phase_stats(values), summary[key]
        assert streamed["n"] == exact["n"] == 4_996
        for name in ("mean", "std", "min", "max"):
            assert streamed[name] == pytest.approx(exact[name], rel=1e-9, abs=1e-12), name
        for name, q in (("median", 0.5), ("p95", 0.95)):
            # within the bin of the order statistic the quantile interpolates from
            nearest = values[math.floor(q * (len(values) - 1))]
            assert streamed[name] == pytest.approx(nearest, rel=2 * QUANTILE_ERROR, abs=1e-12)
    assert summary["peak_bytes"]["forward"] == 4_999


def test_within_the_ring_nothing_is_thinned_and_the_statistics_are_exact() -> None:
    rng = random.Random(1)
    tally = Tally()
    steps = [synthetic_step(i, i < 5, rng) for i in range(2_000)]
    for step in steps:
        tally.add(step)
    assert tally.kept() == steps and tally.thinning() is None
    assert tally.summary(None)["total_ms"] == phase_stats(
        [s["total_ms"] for s in steps if not s["warmup"]])


def test_a_long_watched_run_saves_thinned_steps_and_recover_agrees(
        model: TinyGPT, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_tally, "KEPT_STEPS", 40)
    save = tmp_path / "run.json"
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt, save=save)
    train_steps(run, model, opt, 300)
    journal = tmp_path / "kept.steps.jsonl"  # as a kill would leave it (close removes it)
    journal.write_bytes(Path(f"{save}.steps.jsonl").read_bytes())
    run.close()
    saved = json.loads(save.read_text())["runs"][0]
    every = saved["thinned"]["every"]
    assert saved["thinned"]["recorded_steps"] == 300 and every == 8
    regular = [s for s in saved["steps"] if not s["warmup"]]
    assert 20 <= len(regular) <= 40 and all(s["index"] % every == 0 for s in regular)
    config = saved["config"]
    assert config["warmup_steps"] + config["measure_steps"] == 300
    assert saved["summary"]["total_ms"]["n"] == config["measure_steps"]
    # The live run's ring is still whole, and its summary is the saved one.
    assert len(run.steps) == 300 and run.summary() == saved["summary"]

    recovered = lmprof.recover(journal)["runs"][0]
    assert recovered["thinned"] == saved["thinned"]
    assert [s["index"] for s in recovered["steps"]] == [s["index"] for s in saved["steps"]]
    assert recovered["summary"] == saved["summary"]


def test_past_the_steps_a_reader_takes_a_run_records_no_more_and_says_so_once(
        model: TinyGPT, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The C++ reader takes at most 10^8 steps in a config's counts: 50 stand for them here.
    monkeypatch.setattr(_tally, "MAX_STEPS", 50)
    save = tmp_path / "run.json"
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt, save=save)
    with pytest.warns(RuntimeWarning, match="at most 100000000 steps") as told:
        train_steps(run, model, opt, 60)
    assert len([w for w in told if "at most" in str(w.message)]) == 1
    run.close()
    saved = json.loads(save.read_text())["runs"][0]
    assert saved["config"]["warmup_steps"] + saved["config"]["measure_steps"] == 50
    assert saved["steps"][-1]["index"] == 49
