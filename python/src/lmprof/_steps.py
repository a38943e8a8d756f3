"""A watched step from its first mark to its record: the phase it is in, the marks at its
boundaries, its memory peaks and logged scalars, and the record made once every mark can
be read (docs/WATCH.md, "What a step records")."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import torch

from ._clocks import Clock
from ._evals import Evaluation
from ._records import PeakBytes, StepRecord

# The phases of a watched step, in the order a plain loop runs them. "data" is the host's
# time between the previous step's end and this one's start (the loader); "rest" is what
# the step runs outside the other three (zero_grad, clipping, logging, the scaler).
PHASES: tuple[str, ...] = ("data", "forward", "backward", "optimizer", "rest")
# The phases a step's and a run's peaks are recorded for: the engine's (PeakBytes), so that a
# result set holds no figure its reader drops (tests/app/record_contract_check.py).
PEAK_PHASES: tuple[str, ...] = ("forward", "backward", "optimizer")


def peak_bytes(by_phase: Mapping[str, int]) -> PeakBytes:
    """The peaks of PEAK_PHASES as a record holds them, 0 for a phase without one."""
    return {"forward": by_phase.get("forward", 0), "backward": by_phase.get("backward", 0),
            "optimizer": by_phase.get("optimizer", 0)}

# The first steps pay for lazy initialisation (allocator growth, kernels' first launches,
# autotuning); they are flagged and left out of the summary, as the engine's warmup steps
# are. A watched script can change the count with LMPROF_WARMUP_STEPS.
DEFAULT_WARMUP_STEPS = 5


def warmup_steps() -> int:
    """The warmup steps of a watched run: LMPROF_WARMUP_STEPS, else DEFAULT_WARMUP_STEPS."""
    text = os.environ.get("LMPROF_WARMUP_STEPS", "")
    if not text:
        return DEFAULT_WARMUP_STEPS
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"LMPROF_WARMUP_STEPS: {text!r} is not a step count (0 or more)")
    return value


@dataclass
class OpenStep:
    """A step in progress, or finished and waiting for its marks to be readable."""

    index: int
    start_ns: int  # host clock when the step's data phase ended
    data_ms: float  # host time since the previous step ended
    marks: list[tuple[str | None, object]]  # (phase that ended here, mark); first: (None, start)
    # The previous step's last mark, when it ended just before this one began: the data
    # phase is the clock's time from it to this step's first mark. On CUDA that is the
    # device's idle gap between the steps, which tiles the device's timeline; the host's
    # loader time (data_ms) can overlap the previous step's kernels (docs/WATCH.md).
    prev_end: object | None = None
    phase: str = "rest"
    micro_batches: int = 0
    compiled: bool = False
    # Perturbed by an instrument (_instruments.py), so not a measured step: recorded by the op
    # profiler, or by the CUDA allocator's history.
    op_profiled: bool = False
    memory_snapshot: bool = False
    peak_allocated: dict[str, int] = field(default_factory=dict)
    peak_reserved: int = 0
    scalars: dict[str, Any] = field(default_factory=dict)
    waits: list[object] = field(default_factory=list)  # marks after copies of logged tensors
    # (module, phase, start, end) of the modules timed (_modules.py)
    spans: list[tuple[int, str, object, object]] = field(default_factory=list)
    end_ns: int = 0
    # The evaluation before it (_evals.py), and the previous step's end when the evaluation
    # is timed from it on the step's clock (prev_end is then the evaluation's end).
    evaluation: Evaluation | None = None
    eval_from: object | None = None

    def switch(self, phase: str, clock: Clock, peaks: tuple[int, int]) -> None:
        """Ends the current phase here and starts `phase`."""
        self.marks.append((self.phase, clock.mark()))
        self.note_peaks(self.phase, peaks)
        self.phase = phase

    def note_peaks(self, phase: str, peaks: tuple[int, int]) -> None:
        allocated, reserved = peaks
        if allocated > self.peak_allocated.get(phase, 0):
            self.peak_allocated[phase] = allocated
        self.peak_reserved = max(self.peak_reserved, reserved)


def check_scalar(key: str, value: Any) -> None:
    """A value for log(): one real number within a double, or a one-element tensor of one.
    Raises ValueError naming the scalar."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise ValueError(f"log({key}=...): expected one number, got a tensor of "
                             f"shape {tuple(value.shape)}")
        if value.is_complex() or value.device.type == "meta":
            what = "complex" if value.is_complex() else "on the meta device (no value)"
            raise ValueError(f"log({key}=...): expected a real number, got a tensor {what}")
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"log({key}=...): expected a number or a tensor, "
                         f"got {type(value).__name__}")
    elif isinstance(value, int) and not -2**1023 < value < 2**1023:
        raise ValueError(f"log({key}=...): {str(value)[:20]}... is beyond a double")


def held_scalar(value: Any, step: OpenStep, clock: Clock) -> Any:
    """A logged value as its step keeps it until recorded: a CUDA tensor copied to pinned
    host memory without waiting for the device (the copy's mark in `step.waits`), a CPU
    tensor read now (the script may change it in place before the step ends), a number as
    it is."""
    if not isinstance(value, torch.Tensor):
        return value
    value = value.detach()
    if not value.is_cuda:
        return float(value.item())
    host = torch.empty(value.shape, dtype=value.dtype, pin_memory=True)
    host.copy_(value, non_blocking=True)
    step.waits.append(clock.mark())
    return host


def read_scalar(value: Any) -> float:
    """A logged value as a float: tensors were copied to the host when logged (log())."""
    if isinstance(value, torch.Tensor):
        return float(value.reshape(-1)[0].item()) if value.numel() else math.nan
    return float(value)


def json_number(value: float) -> Any:
    """JSON has no NaN or infinity: the result set writes them as names (docs/RESULTS.md)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def readable(step: OpenStep, clock: Clock) -> bool:
    """Whether every mark of the step, and every copy of a logged tensor, can be read
    without waiting for the device."""
    return (clock.ready([mark for _, mark in step.marks]) and clock.ready(step.waits)
            and clock.ready(span_marks(step)))


def span_marks(step: OpenStep) -> list[object]:
    """The marks of the step's timed module calls."""
    return [mark for _, _, start, end in step.spans for mark in (start, end)]


def perturbed(step: OpenStep) -> bool:
    """Recorded by an instrument that changes what it measures: not a measured step."""
    return step.compiled or step.op_profiled or step.memory_snapshot


def finish(step: OpenStep, clock: Clock, *, warmup: bool, run_start_ns: int) -> StepRecord:
    """The step's record, in the result set's encoding of a step (docs/RESULTS.md)."""
    phase_ms = {phase: 0.0 for phase in PHASES}
    phase_ms["data"] = (step.data_ms if step.prev_end is None
                        else clock.elapsed_ms(step.prev_end, step.marks[0][1]))
    for (_, start), (phase, end) in pairwise(step.marks):
        assert phase is not None
        phase_ms[phase] += clock.elapsed_ms(start, end)
    evaluation_ms = 0.0  # read before the marks are released, written below
    if step.evaluation is not None:  # timed on the step's clock where it can be
        evaluation_ms = (clock.elapsed_ms(step.eval_from, step.prev_end)
                         if step.eval_from is not None and step.prev_end is not None
                         else step.evaluation.ms)
    # The last mark is the next step's prev_end: that step releases it.
    released = [mark for _, mark in step.marks[:-1]] + step.waits + span_marks(step)
    released += [step.eval_from] if step.eval_from is not None else []
    clock.release(released + ([step.prev_end] if step.prev_end is not None else []))
    peak = step.peak_allocated
    record: StepRecord = {
        "index": step.index,
        "warmup": warmup or step.compiled,
        "data_ms": phase_ms["data"],
        "forward_ms": phase_ms["forward"],
        "backward_ms": phase_ms["backward"],
        "optimizer_ms": phase_ms["optimizer"],
        "rest_ms": phase_ms["rest"],
        "total_ms": sum(phase_ms.values()),
        "peak_allocated_bytes": max(peak.values(), default=0),
        "peak_reserved_bytes": step.peak_reserved,
        "peak_allocated_by_phase": peak_bytes(peak),
        "t_end_ms": (step.end_ns - run_start_ns) / 1e6,
        "micro_batches": step.micro_batches,
    }
    if step.evaluation is not None:
        record["evaluation_ms"] = evaluation_ms
        record["evaluation_forwards"] = step.evaluation.forwards
    if step.compiled:
        record["compiled"] = True
    if step.op_profiled:
        record["op_profiled"] = True
    if step.memory_snapshot:
        record["memory_snapshot"] = True
    scalars = {name: read_scalar(value) for name, value in step.scalars.items()}
    if "loss" in scalars:
        record["loss"] = json_number(scalars.pop("loss"))
    if scalars:
        record["scalars"] = {name: json_number(v) for name, v in scalars.items()}
    return record
