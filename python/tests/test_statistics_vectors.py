"""The watcher's statistics against tests/data/statistics_vectors.json, the step times and
figures lmprof's engine is held to as well (tests/engine/statistics_vectors_test.cpp): a rule
changed in one language alone fails one of the two."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from lmprof import _tally

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "tests" / "data" /
                      "statistics_vectors.json").read_text(encoding="utf-8"))
FIGURES = ("mean", "std", "median", "min", "max", "p95", "cv", "iqr")


def _check(stats: dict[str, Any], expected: dict[str, Any], what: str) -> None:
    assert stats["n"] == expected["n"], what
    for figure in FIGURES:
        assert math.isclose(stats[figure], expected[figure], rel_tol=1e-12, abs_tol=1e-12), \
            f"{what}: {figure} {stats[figure]} != {expected[figure]}"
    assert stats["noisy"] is expected["noisy"], f"{what}: noisy"


def test_the_rules_are_the_watchers() -> None:
    rules = VECTORS["rules"]
    assert rules["noisy_iqr_ratio"] == _tally.NOISY_IQR_RATIO
    assert rules["exact_values"] == _tally.KEPT_STEPS
    assert rules["bins_per_octave"] == _tally.BINS_PER_OCTAVE


@pytest.mark.parametrize("case", VECTORS["phase_cases"], ids=lambda c: c["name"])
def test_phase_statistics(case: dict[str, Any]) -> None:
    times = _tally._Times()
    values = case["values"] * case.get("repeat", 1)
    for value in values:
        times.add(value)
    assert (times.exact is None) == (len(values) > _tally.KEPT_STEPS)
    _check(times.stats(), case["expected"], case["name"])
    if times.exact is not None:
        _check(_tally.phase_stats(values), case["expected"], case["name"] + " (phase_stats)")


@pytest.mark.parametrize("case", VECTORS["run_cases"], ids=lambda c: c["name"])
def test_run_summaries(case: dict[str, Any]) -> None:
    tally = _tally.Tally()
    for step in case["steps"]:
        tally.add(step)
    summary = tally.summary(None)
    for key in ("data_ms", "forward_ms", "backward_ms", "optimizer_ms", "rest_ms", "total_ms"):
        _check(summary[key], case["expected"][key], f"{case['name']}: {key}")
    for phase, peak in case["expected"]["peak_bytes"].items():
        assert summary["peak_bytes"][phase] == peak, f"{case['name']}: peak of {phase}"
