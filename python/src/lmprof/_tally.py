"""What a watched run keeps of its steps, in memory bounded whatever their number
(docs/WATCH.md, "Long runs"): the statistics over every measured step, and the steps its
result set holds. Up to KEPT_STEPS steps, both are exact and every step is kept. Past that,
the statistics stream (count, mean, variance, min and max exact; quantiles from a log
histogram within QUANTILE_ERROR), and the steps are thinned: the warmup and perturbed steps
and every `every`-th one, `every` doubling each time the regular steps outgrow KEPT_STEPS."""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from typing import Any

from ._records import PhaseStats, RunSummary, StepRecord, Thinning
from ._steps import PEAK_PHASES, PHASES, peak_bytes

# As many steps as the live server's ring: a run this long is kept whole.
KEPT_STEPS = 10_000
# The most steps a run records: the C++ reader's bound on a config's step counts
# (kMaxWatchedSteps). Past it a step is not recorded, and the script is told once.
MAX_STEPS = 100_000_000
# Histogram bins per doubling of a time: each bin spans 2^(1/256), about 0.27%.
BINS_PER_OCTAVE = 256
QUANTILE_ERROR = 2 ** (0.5 / BINS_PER_OCTAVE) - 1  # half a bin, relative: 0.14%
_ZERO_BIN = -(1 << 40)  # times of 0 ms
# A step is noisy when its phase's interquartile range exceeds this share of the median:
# the engine's rule (docs/MEASUREMENT.md).
NOISY_IQR_RATIO = 0.1


def _quantile(sorted_values: list[float], q: float) -> float:
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _stats(n: int, mean: float, std: float, lo: float, hi: float, median: float, q1: float,
           q3: float, p95: float) -> PhaseStats:
    iqr = q3 - q1
    return {"n": n, "mean": mean, "std": std, "median": median, "min": lo, "max": hi,
            "p95": p95, "cv": std / mean if mean else 0.0, "iqr": iqr,
            "noisy": bool(median > 0 and iqr / median > NOISY_IQR_RATIO)}


def phase_stats(values: list[float]) -> PhaseStats:
    """n, mean, sample std, median, min, max, p95, cv, iqr and noisy: the engine's
    definitions (linear interpolation between order statistics)."""
    n = len(values)
    if n == 0:
        return _stats(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    ordered = sorted(values)
    mean = sum(ordered) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in ordered) / (n - 1)) if n > 1 else 0.0
    return _stats(n, mean, std, ordered[0], ordered[-1], _quantile(ordered, 0.5),
                  _quantile(ordered, 0.25), _quantile(ordered, 0.75), _quantile(ordered, 0.95))


class _Times:
    """One phase's measured times: every one while they are few; then their count, mean and
    variance (Welford's), extremes, and a histogram of log-spaced bins."""

    def __init__(self) -> None:
        self.exact: array[float] | None = array("d")
        self.bins: dict[int, int] = {}
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.lo = math.inf
        self.hi = -math.inf

    def add(self, value: float) -> None:
        self.n += 1
        delta = value - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (value - self.mean)
        self.lo = min(self.lo, value)
        self.hi = max(self.hi, value)
        if self.exact is None:
            self._bin(value)
            return
        self.exact.append(value)
        if len(self.exact) > KEPT_STEPS:
            for v in self.exact:
                self._bin(v)
            self.exact = None

    def _bin(self, value: float) -> None:
        key = math.floor(math.log2(value) * BINS_PER_OCTAVE) if value > 0 else _ZERO_BIN
        self.bins[key] = self.bins.get(key, 0) + 1

    def _at(self, q: float, keys: list[int]) -> float:
        """The q-quantile's bin, as its geometric middle, within the extremes."""
        rank = math.floor(q * (self.n - 1))
        seen = 0
        for key in keys:
            seen += self.bins[key]
            if seen > rank:
                middle = 0.0 if key == _ZERO_BIN else 2 ** ((key + 0.5) / BINS_PER_OCTAVE)
                return min(max(middle, self.lo), self.hi)
        return self.hi

    def stats(self) -> PhaseStats:
        if self.exact is not None:
            return phase_stats(list(self.exact))
        keys = sorted(self.bins)
        std = math.sqrt(self.m2 / (self.n - 1))
        return _stats(self.n, self.mean, std, self.lo, self.hi, self._at(0.5, keys),
                      self._at(0.25, keys), self._at(0.75, keys), self._at(0.95, keys))


def _special(step: StepRecord) -> bool:
    """Kept whatever the thinning: few, and each one is read on its own (an op profile, a
    memory snapshot, the warmup)."""
    return bool(step["warmup"] or step.get("op_profiled") or step.get("memory_snapshot"))


class Tally:
    """Every recorded step's share of a run: the statistics of the measured ones (not warmup,
    not perturbed by an instrument: the engine's isMeasured), the largest per-phase peaks of
    the warmup and of the measured steps, and the steps a result set holds. A Run keeps one
    as steps are recorded; recover() builds one from a journal."""

    def __init__(self) -> None:
        self.times = {f"{p}_ms": _Times() for p in (*PHASES, "total")}
        self.every = 1  # the thinning: a regular step is kept when its index is a multiple
        self._recorded = 0
        self.unrecorded = 0  # steps past MAX_STEPS
        self._measured = 0
        self._kept: list[StepRecord] = []
        self._regular = 0  # kept steps that are not special
        self._peaks = {True: dict.fromkeys(PEAK_PHASES, 0), False: dict.fromkeys(PEAK_PHASES, 0)}

    def __len__(self) -> int:
        return self._recorded

    def measured(self) -> int:
        """Steps recorded that are not warmup."""
        return self._measured


    def add(self, step: StepRecord) -> bool:
        """Records the step; False (and counted in `unrecorded`) past MAX_STEPS."""
        if self._recorded >= MAX_STEPS:
            self.unrecorded += 1
            return False
        self._recorded += 1
        warmup = bool(step["warmup"])
        self._measured += 0 if warmup else 1
        fields: Mapping[str, Any] = step  # read by name: the phases' keys
        if not _special(step):
            for key, times in self.times.items():
                times.add(fields[key])
        peaks = self._peaks[warmup]
        for phase in PEAK_PHASES:  # a journal's older steps have the data and rest phases too
            peaks[phase] = max(peaks[phase], fields["peak_allocated_by_phase"][phase])
        self._keep(step)
        return True

    def _keep(self, step: StepRecord) -> None:
        if _special(step):
            self._kept.append(step)
        elif step["index"] % self.every == 0:
            self._kept.append(step)
            self._regular += 1
            if self._regular > KEPT_STEPS:
                self.every *= 2
                self._kept = [s for s in self._kept
                              if _special(s) or s["index"] % self.every == 0]
                self._regular = sum(1 for s in self._kept if not _special(s))

    def kept(self) -> list[StepRecord]:
        """The steps a result set holds, in order (the same dicts as recorded)."""
        return list(self._kept)

    def last_kept(self) -> StepRecord | None:
        return self._kept[-1] if self._kept else None

    def thinning(self) -> Thinning | None:
        """The run's `thinned` field once its steps were thinned (docs/RESULTS.md), else None."""
        if self.every == 1:
            return None
        return {"every": self.every, "recorded_steps": self._recorded}

    def summary(self, tokens_per_step: int | None) -> RunSummary:
        """Statistics over the measured steps. Peaks come from the steps after the warmup
        (profiled ones too), or from the warmup steps when none finished: the engine's rule."""
        times = {key: t.stats() for key, t in self.times.items()}
        mean = times["total_ms"]["mean"]
        return {
            "data_ms": times["data_ms"],
            "forward_ms": times["forward_ms"],
            "backward_ms": times["backward_ms"],
            "optimizer_ms": times["optimizer_ms"],
            "rest_ms": times["rest_ms"],
            "total_ms": times["total_ms"],
            "tokens_per_s": (tokens_per_step / (mean / 1000.0)
                             if tokens_per_step and mean > 0 else 0.0),
            "tflops": 0.0,
            "mfu": None,
            "peak_bytes": peak_bytes(self._peaks[self._measured == 0]),
        }
