"""The recording behind a watched Run (_run.py): it hears the loop's phases from the hooks
(_hooks.py calls its `on_forward`, `on_forward_end`, `on_backward` and `on_optimizer`),
keeps each step open until its marks can be read without waiting for the device
(_steps.py), and hands each finished step's record to its publisher (_publisher.py).
docs/WATCH.md describes what it measures and what it costs.

Sections: phases from the hooks · steps and their records · the run's end."""

from __future__ import annotations

import functools
import os
import sys
import time
import warnings
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, Concatenate, ParamSpec

import torch
import torch.nn as nn

from . import _faults, _hooks, _instruments, _ops, _results
from ._boundaries import Boundaries
from ._clocks import Clock, clock_for
from ._evals import Evaluation, Evaluations
from ._memory import PhaseMemory, memory_for
from ._model import autocast_dtype, compiled_graphs, device_of, model_class, probe_autocast
from ._nvtx import Ranges
from ._publisher import Publisher
from ._records import RunRecord, StepRecord
from ._shapes import FirstBatch
from ._steps import OpenStep, finish, held_scalar, perturbed, readable, span_marks
from ._tally import Tally

P = ParamSpec("P")


def _guarded(method: Callable[Concatenate[Recorder, P], None],
             ) -> Callable[Concatenate[Recorder, P], None]:
    """The watcher's own failure never stops the training: it warns once and stops watching."""

    @functools.wraps(method)
    def call(self: Recorder, /, *args: P.args, **kwargs: P.kwargs) -> None:
        if self._broken is not None:
            return
        try:
            method(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure of ours, never the user's
            self._break(exc)

    return call


class Recorder:
    """One watched run's steps as the loop runs them: the open step, the ended ones not yet
    read, the phase the loop is in, and how the run is going (its status, and whether the
    watcher stopped on its own error). Not thread-safe: the training thread calls it."""

    # Set by _bind(), which replaces them when the model turns out to be on another device.
    _clock: Clock
    _memory: PhaseMemory

    def __init__(self, model: nn.Module | None, optimizer: torch.optim.Optimizer | None, *,
                 name: str | None, script: str | None, suffix: str, save: Path | None,
                 listen: tuple[str, str] | None, serve_from_first_step: bool, warmup: int,
                 memory_hz: float, batch: FirstBatch) -> None:
        """Hooks the model (else finds it) and the optimizer (else every one), and serves the
        run unless it is served from its first step (_publisher.py). The arguments are
        checked (_run.py); `listen` is the address and the viewers' token."""
        self._model = model
        self._optimizer = optimizer
        self._name = name
        self._script = script
        self._suffix = suffix  # "-rank1" under torchrun (_framework_run.py)
        self._save = save
        self.warmup = warmup
        self._batch = batch
        self._device = device_of(model)
        self._autocast: str | None = None
        self._broken: str | None = None
        self._closed = False
        self._status = "ok"
        self._error: str | None = None
        self._open: OpenStep | None = None
        self._ended: deque[OpenStep] = deque()  # ended, not yet recorded
        self._count = 0
        self._graphs = 0
        self._start_ns = time.perf_counter_ns()
        self._last_end_ns = self._start_ns
        self._last_end_mark: object | None = None  # the last step's end, if none raised since
        self.publisher = Publisher(self, save=save, listen=listen,
                                   serve_from_first_step=serve_from_first_step)
        self._ranges = Ranges()  # NVTX, on CUDA
        self._bounds = Boundaries()  # where phases and zero-code steps end (_boundaries.py)
        self._evals = Evaluations()  # gradient-free forwards between steps (_evals.py)
        self._final_eval: Evaluation | None = None
        self._handles: list[_hooks.Removable] = []
        self._finder: _hooks.OutermostModule | None = None
        self.instruments = _instruments.Instruments(memory_hz, self._start_ns)
        self._where: tuple[int, str] = (0, "data")  # the step and phase, for the sampler
        self._bind(self._device)
        if model is not None:
            self._handles += _hooks.hook_model(model, self)
        else:
            self._finder = _hooks.OutermostModule(self)
        self._handles += _hooks.hook_optimizer(optimizer, self)
        self._handles.append(_hooks.listen_to_backward(self))
        self.publisher.start()
        _faults.opened(self)

    @property
    def name(self) -> str:
        """The run's id: the name given, else the model's class."""
        if self._name:
            return self._name + self._suffix
        model = self._watched_model()
        return (model_class(model) if model is not None else "watched") + self._suffix

    @property
    def device(self) -> torch.device | None:
        return self._device

    @property
    def steps_begun(self) -> int:
        return self._count

    def tokens_per_step(self) -> int | None:
        return self._batch.tokens()[0]

    def _watched_model(self) -> nn.Module | None:
        if self._model is not None:
            return self._model
        return self._finder.found if self._finder is not None else None

    # --- phases from the hooks -----------------------------------------------------------

    def on_forward(self, module: nn.Module, args: Any,
                   kwargs: dict[str, Any] | None = None) -> None:
        if self._broken is not None:
            return
        if self._bounds.inside_optimizer() and self._bounds.prune():
            self._optimizer_raised()
        self._bounds.forward_seen()
        if self._bounds.pending is not None:
            self._end_pending()  # the last step ended with its last optimizer (_boundaries.py)
        if not torch.is_grad_enabled() and self._open is None:
            self._evals.forward(module, self._watched_model())  # an evaluation's (_evals.py)
            return
        if self._open is None:
            if self._model is not None:
                return  # the API's steps begin with run.step()
            if self._count == 0:
                self._bind(device_of(module))  # zero-code mode: the model is known now
            self._begin(module)  # zero-code mode: the model's forward begins a step
        self._forward(module, args, kwargs)

    @_guarded
    def on_forward_end(self, module: nn.Module) -> None:
        if self._open is None and self._broken is None:
            self._evals.forward_end(module, time.perf_counter_ns(), self._clock)

    @_guarded
    def _forward(self, module: nn.Module, args: Any, kwargs: dict[str, Any] | None) -> None:
        step = self._open
        assert step is not None
        step.micro_batches += 1
        if self._batch.tensor is None and torch.is_grad_enabled():
            self._batch.note(args, kwargs)
        if self._autocast is None:
            self._autocast = autocast_dtype(self._device) or "none"
            probe = probe_autocast(module, self._device, self._heard_autocast)
            self._handles += [probe] if probe is not None else []
        if step.phase != "forward":
            self._switch("forward")

    @_guarded
    def on_backward(self, starting: bool) -> None:
        if starting and self._bounds.pending is not None:
            self._bounds.take()  # a backward with no forward first (a GAN's second loss): same step
        if self._open is None:
            return
        if starting:
            self._switch("backward")
        else:  # inside optimizer.step(closure) the update follows the closure's backward
            inside = self._bounds.optimizer
            self._switch("rest" if inside is None else "optimizer", inside)

    @_guarded
    def on_optimizer(self, starting: bool, optimizer: torch.optim.Optimizer | None = None,
                     frame: FrameType | None = None) -> None:
        if (self._optimizer is not None and optimizer is not None
                and optimizer is not self._optimizer):
            return  # GradScaler.step of another optimizer than the one watched
        if starting:
            self._bounds.enter(optimizer, between_steps=self._open is None, frame=frame)
            if self._open is not None:
                self._switch("optimizer", optimizer)
            return
        outermost = self._bounds.leave()
        if self._open is not None:
            self._switch("rest" if outermost else "optimizer", self._bounds.optimizer)
            if outermost and self._finder is not None:
                if self._bounds.several:  # the step ends here unless another optimizer follows
                    self._bounds.pend(len(self._open.marks), time.perf_counter_ns())
                else:  # ends here, and is journaled at once: a kill now loses nothing
                    self.end_step()

    def _end_pending(self) -> None:
        """Ends the zero-code step where its last optimizer ended (_boundaries.py)."""
        pending = self._bounds.take()
        if pending is not None and self._open is not None:
            del self._open.marks[pending.marks:]
            self.end_step(pending.ns)

    def _optimizer_raised(self) -> None:
        """An optimizer's step() raised, and the loop went on: as under the API, the
        zero-code step it was in is not recorded."""
        if (self._finder is not None and self._open is not None
                and not self._bounds.inside_optimizer()):
            self.abandon(RuntimeError("optimizer.step() raised and the loop went on; "
                                      "that step is not recorded"))

    def _heard_autocast(self, dtype: str) -> None:
        self._autocast = dtype  # autocast entered inside the forward (_model.probe_autocast)

    # --- steps and their records ---------------------------------------------------------

    def begin_step(self) -> None:
        """`with run.step()` begins one (steps do not nest)."""
        if self._open is not None and self._broken is None:
            raise RuntimeError("run.step(): a step is already open (steps do not nest)")
        self._begin()

    @_guarded
    def log(self, scalars: dict[str, Any]) -> None:
        """Scalars (checked) for the open step, else the last one that ended."""
        step = self._open or (self._ended[-1] if self._ended else None)
        if step is None:
            self.publisher.amend(self._count - 1, scalars)
            return
        for key, value in scalars.items():
            step.scalars[key] = held_scalar(value, step, self._clock)

    def request_ops(self, step: int | None, depth: int, fold: bool,
                    trace: os.PathLike[str] | str | None) -> None:
        self.instruments.request_ops(step, depth, fold, trace, begun=self._count,
                                     warmup=self.warmup)

    def request_snapshot(self, step: int | None, path: os.PathLike[str] | str | None,
                         max_entries: int) -> None:
        self.instruments.request_snapshot(step, path, max_entries, begun=self._count,
                                          warmup=self.warmup, save=self._save)

    def _bind(self, device: torch.device | None) -> None:
        if hasattr(self, "_memory"):
            if device == self._device:
                return
            self._memory.close()
        self._device = device
        self._clock = clock_for(device)
        self._memory = memory_for(device)
        self._ranges.on = device is not None and device.type == "cuda"

    @_guarded
    def _begin(self, inside: nn.Module | None = None) -> None:
        if self._open is not None:
            return
        self._record_ready()
        if self._count == 0 and self._model is not None:
            self._bind(device_of(self._model))  # it may have moved since watch()
        if self._finder is not None and self._count == 1:
            self._handles += self._finder.settle()
        now = time.perf_counter_ns()
        evaluation = self._evals.take(self._watched_model(),
                                      self._last_end_ns if self._count else None, now)
        eval_from = None
        if evaluation is not None:  # the data phase starts where it ended (_evals.py)
            eval_from = self._last_end_mark if evaluation.mark is not None else None
            self._last_end_ns = evaluation.end_ns
            self._last_end_mark = evaluation.mark
        step = OpenStep(index=self._count, start_ns=now, data_ms=(now - self._last_end_ns) / 1e6,
                        marks=[(None, self._clock.mark())], prev_end=self._last_end_mark,
                        evaluation=evaluation,
                        eval_from=eval_from)
        self._last_end_mark = None
        step.note_peaks("data", self._memory.boundary())
        self._graphs = compiled_graphs()
        self._count += 1
        self._open = step
        self._ranges.begin_step()
        self._where = (step.index, step.phase)
        self.instruments.begin(step, device=self._device, name=self.name, save=self._save,
                               model=self._watched_model(), inside=inside,
                               position=lambda: self._where, on_sample=self.publisher.memory,
                               clock=lambda: self._clock, open_step=lambda: self._open)

    def _switch(self, phase: str, optimizer: torch.optim.Optimizer | None = None) -> None:
        step = self._open
        if step is None or step.phase == phase:
            return
        self.instruments.switch(phase, _ops.optimizer_region(optimizer))
        self._where = (step.index, phase)
        step.switch(phase, self._clock, self._memory.boundary())
        self._ranges.phase(phase)

    @_guarded
    def end_step(self, ended_ns: int | None = None) -> None:
        """Ends the open step now, or (`ended_ns`) at its last mark, taken then."""
        step = self._open
        if step is None:
            return
        if ended_ns is None:
            step.switch("end", self._clock, self._memory.boundary())
        step.end_ns = self._last_end_ns = ended_ns or time.perf_counter_ns()
        step.compiled = compiled_graphs() > self._graphs
        self._batch.step_ended(step.micro_batches)
        self._open = None
        self._last_end_mark = step.marks[-1][1]
        self._ended.append(step)
        self._ranges.close_all()
        self._where = (self._count, "data")
        if self.instruments.end():  # its analysis is not the next step's data phase
            self._last_end_ns = time.perf_counter_ns()
            self._last_end_mark = None
        # Recorded (and journaled) as soon as its marks can be read, not at the next step's
        # start, so that a script killed between steps loses none; a log() after this is
        # added to the record (Publisher.amend).
        self._record_ready()

    def abandon(self, exc: BaseException) -> None:
        """A step that raised is not recorded; the run remembers why."""
        self._open = None
        self._bounds.clear()  # an optimizer's step() that raised called no post-hook
        self._last_end_mark = None  # the next step's data phase is the host's time
        self._ranges.close_all()
        self.instruments.abandon()  # a step that raised keeps no profile or snapshot
        self._error = f"{type(exc).__name__}: {exc}"

    def _record_ready(self, *, wait: bool = False) -> None:
        """Records ended steps whose marks can be read, oldest first (waiting for them when
        `wait`). A log() after its step was recorded amends the record (Publisher.amend)."""
        while self._ended:
            step = self._ended[0]
            if wait:
                for mark in [m for _, m in step.marks] + step.waits + span_marks(step):
                    self._clock.wait(mark)
            elif not readable(step, self._clock):
                return
            self._ended.popleft()
            warmup = step.index < self.warmup
            self.instruments.read(step, self._clock, measured=not warmup and not perturbed(step))
            self.publisher.publish(finish(step, self._clock, warmup=warmup,
                                          run_start_ns=self._start_ns))

    def run_record(self, tally: Tally, steps: list[StepRecord]) -> RunRecord:
        """The run's record in a result set, with `steps` and the summary of `tally`."""
        model = self._watched_model()
        record = _results.watched_run(
            self.name, model, self._device, tally, steps,
            source={"script": self._script or (sys.argv[0] if sys.argv else ""),
                    "model_class": model_class(model) if model is not None else None,
                    "autocast": self._autocast,
                    "optimizer": (type(self._optimizer).__name__ if self._optimizer
                                  else ", ".join(self._bounds.classes) or None),
                    **self._batch.source(None if model is None else _ops.unwrapped(model)[0])},
            status=self._status, error=self._error)
        if self._final_eval is not None:
            record["final_evaluation_ms"] = self._final_eval.ms
            record["final_evaluation_forwards"] = self._final_eval.forwards
        self.instruments.add_to(record, len(tally))
        return record

    # --- the run's end -------------------------------------------------------------------

    def finish(self, exc: BaseException | None) -> None:
        """Ends the run (`exc`: what ended the script, if it raised): reads the last steps,
        waiting for the device only now, removes every hook and closes the publisher, which
        writes `save`. Calling it again does nothing."""
        if self._closed:
            return
        if self._bounds.pending is not None:
            self._end_pending()  # a finished step, whatever ended the script
        self._closed = True
        _faults.closed(self)
        self._unhook()
        if exc is not None:
            self._status = "cancelled" if isinstance(exc, KeyboardInterrupt) else "error"
            self._error = f"{type(exc).__name__}: {exc}"
        elif self._error is not None and self._status == "ok":
            self._status = "error"  # a step raised and the loop went on to close()
        if self._open is not None:
            self._open = None  # a step cut short is not recorded
        self._final_eval = self._evals.take(self._watched_model(),
                                            self._last_end_ns if self._count else None,
                                            time.perf_counter_ns())
        self._ranges.close_all()
        if self._broken is None:
            try:
                self._record_ready(wait=True)
            except Exception as failure:  # noqa: BLE001 - e.g. a CUDA error: keep what was read
                self._ended.clear()
                self._status = "error"
                self._error = self._error or (
                    f"the last steps could not be read: {type(failure).__name__}: {failure}")
        self._memory.close()
        self.instruments.close()
        self.publisher.close(self._status, self._error)

    def _break(self, exc: Exception) -> None:
        self._broken = f"{type(exc).__name__}: {exc}"
        # The run says so: the steps after this one are not in it.
        self._status = "error"
        self._error = self._error or (f"lmprof stopped watching after "
                                      f"{self.publisher.recorded} recorded step(s), on its own "
                                      f"error ({self._broken}); the script trained on")
        warnings.warn(f"lmprof stopped watching this run after its own error ({self._broken}); "
                      "training goes on", RuntimeWarning, stacklevel=3)
        try:
            self._ranges.close_all()  # the script's own ranges stay balanced
        except Exception:  # noqa: BLE001 - already stopping
            self._ranges.depth = 0
        self._unhook()

    def _unhook(self) -> None:
        if self.instruments.modules is not None:
            self.instruments.modules.remove()
        for handle in self._handles:
            handle.remove()
        self._handles = []
        if self._finder is not None:
            self._finder.remove()
