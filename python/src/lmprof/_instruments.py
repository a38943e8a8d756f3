"""A watched run's optional instruments (docs/WATCH.md, "Inside your model"), each off until
asked and costing nothing then: the op profile of one step (_ops.py), the CUDA allocator's
history of one step and the sampled memory timeline (_timeline.py). The run's recorder
(_recorder.py) tells them where the loop is (begin, switch, end) and adds what they recorded
to its record."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn as nn

from . import _modules, _ops, _timeline
from ._clocks import Clock
from ._records import RunRecord
from ._steps import OpenStep

DEFAULT_SNAPSHOT_ENTRIES = 100_000  # the engine's default (--snapshot-max-entries)


def _step_index(step: Any) -> int:
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"step: expected a step index (0 or more), got {step!r}")
    return step


def _folder_of(argument: str, path: os.PathLike[str] | str | None) -> Path | None:
    if path is None:
        return None
    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"{argument}: the folder {str(path.parent)!r} does not exist")
    return path


def _named(path: Path | None, run: str, save: Path | None, suffix: str) -> Path | None:
    """An instrument's file: where asked (`{run}` becomes the run's id), else beside `save`."""
    if path is None:
        return save.with_name(f"{save.stem}.{run}{suffix}") if save is not None else None
    return path.with_name(path.name.replace("{run}", run))


def _depth(depth: Any) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth: expected 1 or more module names, got {depth!r}")
    return depth


def check_memory_hz(hz: Any) -> float:
    if isinstance(hz, bool) or not isinstance(hz, (int, float)) or not math.isfinite(hz) \
            or not 0 <= hz <= _timeline.MAX_HZ:
        raise ValueError(f"memory_hz: expected 0 (off) to {_timeline.MAX_HZ:g} samples a "
                         f"second, got {hz!r}")
    return float(hz)


class Instruments:
    """The instruments of one run. Requests name a step that has not begun; one step may
    carry one instrument, since each perturbs what the other measures (the engine's rule)."""

    def __init__(self, memory_hz: float, start_ns: int) -> None:
        self.memory_hz = memory_hz
        self._start_ns = start_ns
        self.ops_request: _ops.OpsRequest | None = None
        self.snapshot_request: tuple[int, Path | None, int] | None = None
        self._profiler: _ops.StepProfiler | None = None
        self._snapshot: _timeline.StepSnapshot | None = None
        self.sampler: _timeline.MemorySampler | None = None
        self._op_profile: dict[str, Any] | None = None
        self._trace_path: str | None = None
        self._snapshot_info: dict[str, Any] | None = None
        self._snapshot_config: dict[str, Any] | None = None
        self._module_depth = 0
        self.modules: _modules.ModuleTimer | None = None

    # --- requests ---------------------------------------------------------------------------

    def _check_step(self, step: int, begun: int, other: int | None) -> None:
        if step < begun:
            raise ValueError(f"step: step {step} has already begun ({begun} so far)")
        if other == step:
            raise ValueError(f"step: step {step} carries another instrument (one per step)")

    def request_ops(self, step: int | None, depth: Any, fold: bool,
                    trace: os.PathLike[str] | str | None, *, begun: int,
                    warmup: int) -> None:
        step = _step_index(max(warmup, begun) if step is None else step)
        self._check_step(step, begun, self.snapshot_request[0] if self.snapshot_request else None)
        depth = _depth(depth)
        if self.ops_request is not None or self._profiler is not None or self._op_profile:
            raise ValueError("step: this run profiles one step's ops, and has one already")
        self.ops_request = _ops.OpsRequest(step, depth, bool(fold), _folder_of("trace", trace))

    def request_snapshot(self, step: int | None, path: os.PathLike[str] | str | None,
                         max_entries: Any, *, begun: int, warmup: int,
                         save: Path | None) -> None:
        step = _step_index(max(warmup, begun) if step is None else step)
        self._check_step(step, begun, self.ops_request.step if self.ops_request else None)
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError(f"max_entries: expected 1 or more, got {max_entries!r}")
        if path is None and save is None:
            raise ValueError("path: needed when the run has no save file to put it beside")
        if self.snapshot_request is not None or self._snapshot_info is not None:
            raise ValueError("step: this run snapshots one step's memory, and has one already")
        self.snapshot_request = (step, _folder_of("path", path), max_entries)

    def request_modules(self, depth: Any) -> None:
        depth = _depth(depth)
        if self._module_depth:
            raise ValueError("depth: this run times its modules already")
        self._module_depth = depth

    # --- where the loop is ------------------------------------------------------------------

    def begin(self, step: OpenStep, *, device: torch.device | None, name: str,
              save: Path | None, model: nn.Module | None, inside: nn.Module | None,
              position: Callable[[], tuple[int, str]],
              on_sample: Callable[[dict[str, Any]], None] | None,
              clock: Callable[[], Clock], open_step: Callable[[], OpenStep | None]) -> None:
        """At a step's first mark."""
        if self._module_depth and self.modules is None and model is not None:
            inner, _ = _ops.unwrapped(model)
            self.modules = _modules.ModuleTimer(inner, self._module_depth, clock, open_step)
        if self.memory_hz > 0 and self.sampler is None:
            self.sampler = _timeline.MemorySampler(device, self.memory_hz, position,
                                                   self._start_ns, on_sample)
        if self.sampler is not None:
            self.sampler.sample(boundary=True)
        request = self.ops_request
        if request is not None and request.step == step.index:
            self.ops_request = None
            trace = _named(request.trace, name, save, ".trace.json")
            step.op_profiled = True
            self._profiler = _ops.StepProfiler(_ops.OpsRequest(request.step, request.depth,
                                                               request.fold, trace),
                                               model, device)
            self._profiler.start(step.phase, inside)
        snapshot = self.snapshot_request
        if snapshot is not None and snapshot[0] == step.index:
            self.snapshot_request = None
            self._begin_snapshot(step, snapshot, device, name, save)

    def _begin_snapshot(self, step: OpenStep, request: tuple[int, Path | None, int],
                        device: torch.device | None, name: str, save: Path | None) -> None:
        index, path, entries = request
        path = _named(path, name, save, ".snapshot.pickle")
        assert path is not None  # request_snapshot needs a path or a save
        self._snapshot_config = {"path": str(path), "first_step": index, "step_count": 1,
                                 "max_entries": entries}
        if device is None or device.type != "cuda":
            self._snapshot_info = _timeline.no_snapshot(index, device)
            return
        step.memory_snapshot = True
        self._snapshot = _timeline.StepSnapshot(path, index, entries, device)
        self._snapshot.start((step.start_ns - self._start_ns) / 1e6, step.phase)

    def switch(self, phase: str, region: str | None = None) -> None:
        """Before the step leaves its phase for `phase` (whose own work is `region`)."""
        if self.sampler is not None:
            self.sampler.sample(boundary=True)  # the end of the phase, tagged with it
        if self._profiler is not None:
            self._profiler.switch(phase, region)
        if self._snapshot is not None:
            self._snapshot.switch(phase)

    def end(self) -> bool:
        """At a step's end; True when an instrument of the step ran, whose analysis should be
        kept out of the next step's data phase."""
        ran = False
        if self._profiler is not None:
            profiler, self._profiler = self._profiler, None
            events = profiler.stop()
            trace, error = profiler.write_trace()
            self._op_profile = _ops.op_profile(events, profiler.request, cuda=profiler.cuda,
                                               trace=trace, trace_error=error)
            self._trace_path = str(profiler.request.trace) if profiler.request.trace else None
            ran = True
        if self._snapshot is not None:
            snapshot, self._snapshot = self._snapshot, None
            self._snapshot_info = snapshot.stop()
            ran = True
        return ran

    def read(self, step: OpenStep, clock: Clock, *, measured: bool) -> None:
        """A step's marks are readable: the module times take theirs."""
        if self.modules is not None:
            self.modules.read(step, clock, measured)

    def abandon(self) -> None:
        """The step raised, or the run closes mid-step: its step instruments keep nothing."""
        if self._profiler is not None:
            self._profiler.abandon()
            self._profiler = None
        if self._snapshot is not None:
            self._snapshot.abandon()
            self._snapshot = None
            self._snapshot_config = None

    def close(self) -> None:
        self.abandon()
        if self.sampler is not None:
            self.sampler.close()
        if self.modules is not None:
            self.modules.remove()

    # --- the record ---------------------------------------------------------------------------

    def add_to(self, record: RunRecord, steps: int) -> None:
        """Adds what was recorded to a run record of `steps` recorded steps."""
        config = record["config"]
        if self._op_profile is not None and self._op_profile["first_step"] < steps:
            config["op_profile"] = {"first_step": self._op_profile["first_step"],
                                    "step_count": self._op_profile["step_count"],
                                    "trace_path": self._trace_path or ""}
            record["op_profile"] = self._op_profile
        if self._snapshot_config is not None and self._snapshot_config["first_step"] < steps:
            config["memory_snapshot"] = self._snapshot_config
            record["memory_snapshot"] = self._snapshot_info
        if self.memory_hz > 0:
            config["sample_hz"] = self.memory_hz
        if self.modules is not None:
            record["module_times"] = self.modules.record()
        if self.sampler is not None:
            record["memory_columns"] = self.sampler.columns(steps)
            record["sampler_cpu_ms"] = self.sampler.cpu_ms
            if self.sampler.error is not None:
                record["sampler_error"] = self.sampler.error
