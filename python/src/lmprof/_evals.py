"""Evaluation passes between steps (docs/WATCH.md, "Evaluation passes").

A forward of the watched model with gradients off while no step is open is an evaluation's
(a validation loop, an ``estimate_loss()``, a sample generated between steps). Folded into
the next step's data phase, it would read as a slow loader; it is recorded as an interval
of its own instead: from the end of the step before it (before the first step, from its
first forward) to the end of its last forward, with its forwards counted. The next step's
data phase then starts where the evaluation ended. On CUDA both ends are events, as a
step's phases are: the evaluation is the device's time from the last step's end to its last
forward's kernels, and the data phase the device's idle gap after them (a `loss.item()`
that waits for the evaluation's kernels is not the loader's). An evaluation after the last
step is the run's `final_evaluation` (host time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch.nn as nn

from ._clocks import Clock


@dataclass
class Evaluation:
    """A finished evaluation pass: host time (ms) and its forwards."""

    ms: float
    forwards: int
    end_ns: int  # host clock when its last forward ended (the next data phase starts here)
    mark: object  # the step clock's mark there (_clocks.py), None if no forward ended


class Evaluations:
    """The evaluation running between two steps, if any."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._module: nn.Module | None = None
        self._forwards = 0
        self._start_ns = 0
        self._end_ns = 0
        self._mark: object = None

    def forward(self, module: nn.Module, model: nn.Module | None) -> None:
        """A gradient-free forward of `module` with no step open; `model` is the watched
        model when known (a forward of another module is not the run's)."""
        if model is not None and module is not model:
            return
        if self._module is None:
            self._module = module
            self._start_ns = time.perf_counter_ns()
        elif module is not self._module:
            return
        self._forwards += 1

    def forward_end(self, module: nn.Module, now_ns: int, clock: Clock) -> None:
        if module is self._module:
            self._end_ns = now_ns
            if self._mark is not None:  # only the last forward's end is kept
                clock.release([self._mark])
            self._mark = clock.mark()

    def take(self, model: nn.Module | None, since_ns: int | None,
             now_ns: int) -> Evaluation | None:
        """The evaluation since the last step ended (`since_ns`; None before the first step:
        since its first forward), which ends now; None when there was none, or it was another
        module's than the model found since."""
        module, forwards, end_ns, mark = self._module, self._forwards, self._end_ns, self._mark
        since_ns = self._start_ns if since_ns is None else since_ns
        self._reset()
        if module is None or (model is not None and module is not model):
            return None
        end_ns = min(max(end_ns or now_ns, since_ns), now_ns)
        return Evaluation(ms=(end_ns - since_ns) / 1e6, forwards=forwards, end_ns=end_ns,
                          mark=mark)
