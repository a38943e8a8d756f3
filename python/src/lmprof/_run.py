"""The Run that `lmprof.watch()` returns: it hears the loop's phases from the hooks
(_hooks.py), keeps each step open until its marks can be read without waiting for the
device (_steps.py), and records, journals and summarises the finished steps
(_results.py). docs/WATCH.md describes what it measures and what it costs.

Sections: the public API (watch, Run) · phases from the hooks · steps and their records."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any, Concatenate, ParamSpec

import torch
import torch.nn as nn

from . import _faults, _files, _hooks, _instruments, _ops, _results, _serve, _shapes
from ._boundaries import Boundaries
from ._clocks import Clock, clock_for
from ._evals import Evaluation, Evaluations
from ._memory import PhaseMemory, memory_for
from ._model import autocast_dtype, compiled_graphs, device_of, model_class, probe_autocast
from ._nvtx import Ranges
from ._steps import (
    OpenStep,
    check_scalar,
    finish,
    held_scalar,
    json_number,
    perturbed,
    read_scalar,
    readable,
    span_marks,
    warmup_steps,
)
from ._tally import MAX_STEPS, Tally

# Finished step records held in memory (Run.steps); the summary and the steps a result set
# holds are bounded too (_tally.py), and `save` keeps every record on disk.
RECENT_STEPS = 10_000
# tokens_per_step's bound: exact as a double, and within the C++ reader's int64.
MAX_TOKENS_PER_STEP = 2**53

P = ParamSpec("P")


def _guarded(method: Callable[Concatenate[Run, P], None]) -> Callable[Concatenate[Run, P], None]:
    """The watcher's own failure never stops the training: it warns once and stops watching."""

    @functools.wraps(method)
    def call(self: Run, /, *args: P.args, **kwargs: P.kwargs) -> None:
        if self._broken is not None:
            return
        try:
            method(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure of ours, never the user's
            self._break(exc)

    return call


# ---------------------------------------------------------------------------------------
# The public API


class Run:
    """One watched training run: its steps, phases, memory peaks and logged scalars.

    Made by :func:`lmprof.watch`. Not thread-safe: use it from the training thread.
    """

    # Set by _bind(), which replaces them when the model turns out to be on another device.
    _clock: Clock
    _memory: PhaseMemory

    def __init__(self, model: nn.Module | None,
                 optimizer: torch.optim.Optimizer | None = None, *,
                 name: str | None = None, tokens_per_step: int | None = None,
                 listen: str | None = None, token_file: str | None = None,
                 save: os.PathLike[str] | str | None = None,
                 script: str | None = None, suffix: str = "",
                 serve_from_first_step: bool = False, memory_hz: float = 0.0,
                 config: dict[str, Any] | None = None) -> None:
        if model is not None and not isinstance(model, nn.Module):
            raise ValueError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
        if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
            raise ValueError(
                f"optimizer: expected a torch.optim.Optimizer, got {type(optimizer).__name__}")
        if tokens_per_step is not None and (
                isinstance(tokens_per_step, bool) or not isinstance(tokens_per_step, int)
                or not 0 < tokens_per_step <= MAX_TOKENS_PER_STEP):
            raise ValueError("tokens_per_step: expected an int from 1 to 2^53, got "
                             f"{str(tokens_per_step)[:40]}")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"name: expected a non-empty string, got {name!r}")
        token: str | None = None
        if listen is not None:
            _serve.parse_listen(listen)  # ValueError naming `listen`
            token = (_serve.read_token(token_file) if token_file is not None
                     else _serve.default_token())
        elif token_file is not None:
            raise ValueError("token_file: given without listen")
        # Resolved once: a later os.chdir moves neither the result nor its journal.
        self._save = (_files.resolve_save(save, _results.JOURNAL_SUFFIX) if save is not None
                      else None)
        self._warmup = warmup_steps()
        hz = _instruments.check_memory_hz(memory_hz)
        self._batch = _shapes.FirstBatch(tokens_per_step, config, MAX_TOKENS_PER_STEP)

        self._model = model
        self._optimizer = optimizer
        self._name = name
        self._script = script
        self._suffix = suffix  # "-rank1" under torchrun (_auto.py)
        self._device = device_of(model)
        self._autocast: str | None = None
        self._broken: str | None = None
        self._closed = False
        self._status = "ok"
        self._error: str | None = None
        self._open: OpenStep | None = None
        self._ended: deque[OpenStep] = deque()  # ended, not yet recorded
        self._recent: deque[dict[str, Any]] = deque(maxlen=RECENT_STEPS)
        self._tally = Tally()
        self._count = 0
        self._graphs = 0
        self._start_ns = time.perf_counter_ns()
        self._last_end_ns = self._start_ns
        self._last_end_mark: object | None = None  # the last step's end, if none raised since
        self._created = _results.now_iso()
        self._environment: dict[str, Any] | None = None
        self._journal: _results.Journal | None = None
        self._ranges = Ranges()  # NVTX, on CUDA
        self._bounds = Boundaries()  # where phases and zero-code steps end (_boundaries.py)
        self._evals = Evaluations()  # gradient-free forwards between steps (_evals.py)
        self._final_eval: Evaluation | None = None
        self._handles: list[_hooks.Removable] = []
        self._finder: _hooks.OutermostModule | None = None
        self._instruments = _instruments.Instruments(hz, self._start_ns)
        self._where: tuple[int, str] = (0, "data")  # the step and phase, for the sampler
        self._bind(self._device)
        if model is not None:
            self._handles += _hooks.hook_model(model, self)
        else:
            self._finder = _hooks.OutermostModule(self)
        self._handles += _hooks.hook_optimizer(optimizer, self)
        self._handles.append(_hooks.listen_to_backward(self))
        self._server: _serve.LiveServer | None = None
        # The zero-code mode listens from the first step: a process that never trains (a
        # torchrun launcher, a loader's worker) must not take the port of the one that does.
        self._listen = (listen, token) if listen is not None and token is not None else None
        self._serve_at_first_step = self._listen is not None and serve_from_first_step
        if self._listen is not None and not serve_from_first_step:
            self._serve()
        _faults.opened(self)

    # --- what users call -----------------------------------------------------------------

    @property
    def name(self) -> str:
        """The run's id: the name given, else the model's class."""
        if self._name:
            return self._name + self._suffix
        model = self._watched_model()
        return (model_class(model) if model is not None else "watched") + self._suffix

    def _watched_model(self) -> nn.Module | None:
        if self._model is not None:
            return self._model
        return self._finder.found if self._finder is not None else None

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The recorded steps (the last 10,000), in the result set's encoding."""
        return list(self._recent)

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        """Around one training step: the time before it is the step's data phase."""
        if self._open is not None and self._broken is None:
            raise RuntimeError("run.step(): a step is already open (steps do not nest)")
        self._begin()
        try:
            yield
        except BaseException as exc:
            self._abandon(exc)
            raise
        self._end_step()

    def log(self, **scalars: Any) -> None:
        """Records scalars (``loss=loss``) for the open step, else the last one that ended.
        A CUDA tensor is copied to the host without waiting for the device and read later;
        a CPU tensor is read now. A value that is not one number raises ``ValueError``."""
        for key, value in scalars.items():
            check_scalar(key, value)
        self._log(scalars)

    @_guarded
    def _log(self, scalars: dict[str, Any]) -> None:
        step = self._open or (self._ended[-1] if self._ended else None)
        if step is None:
            self._amend(scalars)
            return
        for key, value in scalars.items():
            step.scalars[key] = held_scalar(value, step, self._clock)

    def _amend(self, scalars: dict[str, Any]) -> None:
        """Scalars for the last step after it was recorded (it is recorded as it ends when its
        marks can be read, so that a kill loses no finished step): added to its record and
        journaled as a `scalars` line. A tensor is read now."""
        if not self._recent or self._recent[-1]["index"] != self._count - 1:
            return  # no step has ended yet, or the last one was not recorded
        values = {key: json_number(read_scalar(v.detach().cpu() if isinstance(v, torch.Tensor)
                                               else v)) for key, v in scalars.items()}
        _results.apply_scalars(self._recent[-1], values)
        if self._journal is not None:
            self._journal.write("scalars", {"index": self._count - 1, "scalars": values})

    def profile_ops(self, step: int | None = None, *, depth: int = _ops.DEFAULT_DEPTH,
                    fold: bool = False,
                    trace: os.PathLike[str] | str | None = None) -> None:
        """Profiles one step's ops (and kernels on a GPU) with PyTorch's profiler, each op
        attributed to a phase and a region: the module it ran in, its path cut to `depth`
        names (``blocks.3.attn``), with layer indices folded (``blocks.*.attn``) when
        `fold`; the script's own ``record_function`` ranges are regions too. The result is
        the run's ``op_profile``, which ``lmprof-cli ops`` and the window's Ops view read;
        the step is left out of the statistics.

        Args:
            step: the step's index (default: the first after the warmup, or the next step
                when that has begun).
            depth: how many names of a module's path make its region (1 or more).
            fold: names layers ``blocks.*`` instead of ``blocks.0``, ``blocks.1``, ...
            trace: the Chrome trace's path (default: beside ``save``, else none).

        Raises ValueError naming the argument that is wrong."""
        self._instruments.request_ops(step, depth, fold, trace, begun=self._count,
                                      warmup=self._warmup)

    def time_modules(self, depth: int = 2) -> None:
        """Times the forward and backward of each module of the model cut at `depth` names
        (``blocks.3`` at depth 2), from hooks, from the next step on: the run's
        ``module_times`` (the window's Modules tab, ``lmprof-cli show --modules``). Off by
        default: the hooks cost a few microseconds per module call (docs/WATCH.md).

        Raises ValueError naming the argument that is wrong."""
        self._instruments.request_modules(depth)

    def memory_snapshot(self, step: int | None = None, *,
                        path: os.PathLike[str] | str | None = None,
                        max_entries: int = _instruments.DEFAULT_SNAPSHOT_ENTRIES) -> None:
        """Records the CUDA caching allocator's history during one step and writes the pickle
        that pytorch.org/memory_viz opens, with the step's largest allocations in the run's
        ``memory_snapshot`` (the window's Allocations table). The step is left out of the
        statistics. On a CPU the run's ``memory_snapshot`` says why there is none.

        Args:
            step: the step's index (default: the first after the warmup, or the next step).
            path: the pickle (default: ``<save stem>.<run id>.snapshot.pickle``).
            max_entries: the most allocator events kept.

        Raises ValueError naming the argument that is wrong."""
        self._instruments.request_snapshot(step, path, max_entries, begun=self._count,
                                           warmup=self._warmup, save=self._save)

    def close(self) -> None:
        """Ends the run: reads the last steps (waiting for the device only now), writes
        ``save`` and removes every hook. Calling it again does nothing."""
        self._finish(None)

    def summary(self) -> dict[str, Any]:
        """The run's statistics over its measured steps, as the result set's summary."""
        return self._tally.summary(self._batch.tokens()[0])

    def result_set(self) -> dict[str, Any]:
        """The run as a result set (the recent steps in memory; ``save`` holds them all)."""
        return _results.result_set([self._run_record(self.steps)], self._env(), self._created)

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._finish(exc)

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
                    self._end_step()

    def _end_pending(self) -> None:
        """Ends the zero-code step where its last optimizer ended (_boundaries.py)."""
        pending = self._bounds.take()
        if pending is not None and self._open is not None:
            del self._open.marks[pending.marks:]
            self._end_step(pending.ns)

    def _optimizer_raised(self) -> None:
        """An optimizer's step() raised, and the loop went on: as under the API, the
        zero-code step it was in is not recorded."""
        if (self._finder is not None and self._open is not None
                and not self._bounds.inside_optimizer()):
            self._abandon(RuntimeError("optimizer.step() raised and the loop went on; "
                                       "that step is not recorded"))

    def _heard_autocast(self, dtype: str) -> None:
        self._autocast = dtype  # autocast entered inside the forward (_model.probe_autocast)

    # --- steps and their records ---------------------------------------------------------

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
                        evaluation=evaluation.fields() if evaluation else {},
                        eval_from=eval_from)
        self._last_end_mark = None
        step.note_peaks("data", self._memory.boundary())
        self._graphs = compiled_graphs()
        self._count += 1
        self._open = step
        self._ranges.begin_step()
        self._where = (step.index, step.phase)
        self._instruments.begin(step, device=self._device, name=self.name, save=self._save,
                                model=self._watched_model(), inside=inside,
                                position=lambda: self._where, on_sample=self._sampled,
                                clock=lambda: self._clock, open_step=lambda: self._open)

    def _sampled(self, sample: dict[str, Any]) -> None:
        """A memory sample, from the sampler's thread or the training thread."""
        if self._server is not None:
            self._server.memory(sample)

    def _switch(self, phase: str, optimizer: torch.optim.Optimizer | None = None) -> None:
        step = self._open
        if step is None or step.phase == phase:
            return
        self._instruments.switch(phase, _ops.optimizer_region(optimizer))
        self._where = (step.index, phase)
        step.switch(phase, self._clock, self._memory.boundary())
        self._ranges.phase(phase)

    @_guarded
    def _end_step(self, ended_ns: int | None = None) -> None:
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
        if self._instruments.end():  # its analysis is not the next step's data phase
            self._last_end_ns = time.perf_counter_ns()
            self._last_end_mark = None
        # Recorded (and journaled) as soon as its marks can be read, not at the next step's
        # start, so that a script killed between steps loses none; a log() after this is
        # added to the record (_amend).
        self._record_ready()

    def _abandon(self, exc: BaseException) -> None:
        """A step that raised is not recorded; the run remembers why."""
        self._open = None
        self._bounds.clear()  # an optimizer's step() that raised called no post-hook
        self._last_end_mark = None  # the next step's data phase is the host's time
        self._ranges.close_all()
        self._instruments.abandon()  # a step that raised keeps no profile or snapshot
        self._error = f"{type(exc).__name__}: {exc}"

    def _record_ready(self, *, wait: bool = False) -> None:
        """Records ended steps whose marks can be read, oldest first (waiting for them when
        `wait`). A log() after its step was recorded amends the record (_amend)."""
        while self._ended:
            step = self._ended[0]
            if wait:
                for mark in [m for _, m in step.marks] + step.waits + span_marks(step):
                    self._clock.wait(mark)
            elif not readable(step, self._clock):
                return
            self._ended.popleft()
            warmup = step.index < self._warmup
            self._instruments.read(step, self._clock, measured=not warmup and not perturbed(step))
            self._publish(finish(step, self._clock, warmup=warmup, run_start_ns=self._start_ns))

    @property
    def port(self) -> int | None:
        """The port the run is served on (``listen`` with port 0 picks one), else None."""
        return self._server.port if self._server is not None else None

    def _publish(self, record: dict[str, Any]) -> None:
        if not self._tally.add(record):  # past what the C++ reader takes (docs/LIMITS.md)
            if self._tally.unrecorded == 1:
                warnings.warn(f"lmprof records at most {MAX_STEPS} steps of a run; later "
                              "steps are not recorded", RuntimeWarning, stacklevel=2)
            return
        self._recent.append(record)
        if self._listen is not None and len(self._tally) == 1:  # the device is known now
            self._environment = None
            if self._serve_at_first_step:
                self._serve()
            if self._server is not None:
                self._server.started(self._run_record([]), self._env(),
                                     _results.device_offers(self._device))
        if self._server is not None:
            self._server.step(record)
        if self._save is not None:
            if self._journal is None:
                self._journal = _results.Journal(_results.journal_path(self._save))
                self._journal.write("header", {"schema": _results.JOURNAL_SCHEMA,
                                               "created": self._created,
                                               "environment": self._env(),
                                               "run": self._run_record([])})
            self._journal.write("step", {"step": record})

    def _serve(self) -> None:
        assert self._listen is not None
        listen, token = self._listen
        devices = _results.device_offers(self._device)
        self._server = _serve.start(listen, token, tool=_results.tool(), environment=self._env(),
                                    devices=devices)

    def _env(self) -> dict[str, Any]:
        if self._environment is None:
            self._environment = _results.environment(self._device)
        return self._environment

    def _run_record(self, steps: list[dict[str, Any]]) -> dict[str, Any]:
        model = self._watched_model()
        record = _results.watched_run(
            self.name, model, self._device, self._tally, steps,
            source={"script": self._script or (sys.argv[0] if sys.argv else ""),
                    "model_class": model_class(model) if model is not None else None,
                    "autocast": self._autocast,
                    "optimizer": (type(self._optimizer).__name__ if self._optimizer
                                  else ", ".join(self._bounds.classes) or None),
                    **self._batch.source(None if model is None else _ops.unwrapped(model)[0])},
            status=self._status, error=self._error)
        record.update(self._final_eval.fields("final_") if self._final_eval else {})
        self._instruments.add_to(record, len(self._tally))
        return record

    def _finish(self, exc: BaseException | None) -> None:
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
        self._instruments.close()
        if self._server is not None:
            if self._tally:
                self._server.finished(self._final_record())
            self._server.close()
        if self._save is None or not self._tally:
            return  # nothing to save: a process that never trained (a launcher, a worker)
        if self._journal is not None:  # recover() reads the run's end should the write fail
            self._journal.write("end", {"status": self._status, "error": self._error})
        document = _results.result_set([self._final_record()], self._env(), self._created)
        _results.write_result(self._save, document, self._journal)

    def _final_record(self) -> dict[str, Any]:
        """Every step, or past KEPT_STEPS the thinned ones, with the summary over all."""
        return self._run_record(self._tally.kept()) | self._tally.thinning()

    def _break(self, exc: Exception) -> None:
        self._broken = f"{type(exc).__name__}: {exc}"
        # The run says so: the steps after this one are not in it.
        self._status = "error"
        self._error = self._error or (f"lmprof stopped watching after {len(self._tally)} "
                                      f"recorded step(s), on its own error ({self._broken}); "
                                      "the script trained on")
        warnings.warn(f"lmprof stopped watching this run after its own error ({self._broken}); "
                      "training goes on", RuntimeWarning, stacklevel=3)
        try:
            self._ranges.close_all()  # the script's own ranges stay balanced
        except Exception:  # noqa: BLE001 - already stopping
            self._ranges.depth = 0
        self._unhook()

    def _unhook(self) -> None:
        if self._instruments.modules is not None:
            self._instruments.modules.remove()
        for handle in self._handles:
            handle.remove()
        self._handles = []
        if self._finder is not None:
            self._finder.remove()
