"""The Run that `lmprof.watch()` returns: the user's handle on a watched run. It checks the
arguments and delegates the rest: the recorder (_recorder.py) hears the loop's phases from
the hooks and makes each step's record, and its publisher (_publisher.py) keeps, serves,
journals and saves the records. docs/WATCH.md describes the API, what it measures and what
it costs.

Sections: the public API (Run) · starting a run (its checks, and the zero-code watcher's
factory)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from types import TracebackType
from typing import Any

import torch
import torch.nn as nn

from . import _files, _instruments, _ops, _results, _serve, _shapes
from ._recorder import Recorder
from ._records import ResultSet, RunSummary, StepRecord
from ._steps import check_scalar, warmup_steps

# tokens_per_step's bound: exact as a double, and within the C++ reader's int64.
MAX_TOKENS_PER_STEP = 2**53


# ---------------------------------------------------------------------------------------
# The public API


class Run:
    """One watched training run: its steps, phases, memory peaks and logged scalars.

    Made by :func:`lmprof.watch`. Not thread-safe: use it from the training thread.
    """

    def __init__(self, model: nn.Module | None,
                 optimizer: torch.optim.Optimizer | None = None, *,
                 name: str | None = None, tokens_per_step: int | None = None,
                 listen: str | None = None, token_file: str | None = None,
                 save: os.PathLike[str] | str | None = None, memory_hz: float = 0.0,
                 config: dict[str, Any] | None = None) -> None:
        self._attach(_recorder(model, optimizer, name=name, tokens_per_step=tokens_per_step,
                               listen=listen, token_file=token_file, save=save,
                               memory_hz=memory_hz, config=config))

    def _attach(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._publisher = recorder.publisher

    @property
    def name(self) -> str:
        """The run's id: the name given, else the model's class."""
        return self._recorder.name

    @property
    def steps(self) -> list[StepRecord]:
        """The recorded steps (the last 10,000), in the result set's encoding."""
        return self._publisher.steps

    @property
    def port(self) -> int | None:
        """The port the run is served on (``listen`` with port 0 picks one), else None."""
        return self._publisher.port

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        """Around one training step: the time before it is the step's data phase."""
        self._recorder.begin_step()
        try:
            yield
        except BaseException as exc:
            self._recorder.abandon(exc)
            raise
        self._recorder.end_step()

    def log(self, **scalars: Any) -> None:
        """Records scalars (``loss=loss``) for the open step, else the last one that ended.
        A CUDA tensor is copied to the host without waiting for the device and read later;
        a CPU tensor is read now. A value that is not one number raises ``ValueError``."""
        for key, value in scalars.items():
            check_scalar(key, value)
        self._recorder.log(scalars)

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
        self._recorder.request_ops(step, depth, fold, trace)

    def time_modules(self, depth: int = 2) -> None:
        """Times the forward and backward of each module of the model cut at `depth` names
        (``blocks.3`` at depth 2), from hooks, from the next step on: the run's
        ``module_times`` (the window's Modules tab, ``lmprof-cli show --modules``). Off by
        default: the hooks cost a few microseconds per module call (docs/WATCH.md).

        Raises ValueError naming the argument that is wrong."""
        self._recorder.instruments.request_modules(depth)

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
        self._recorder.request_snapshot(step, path, max_entries)

    def close(self) -> None:
        """Ends the run: reads the last steps (waiting for the device only now), writes
        ``save`` and removes every hook. Calling it again does nothing."""
        self._recorder.finish(None)

    def summary(self) -> RunSummary:
        """The run's statistics over its measured steps, as the result set's summary."""
        return self._publisher.summary(self._recorder.tokens_per_step())

    def result_set(self) -> ResultSet:
        """The run as a result set (the recent steps in memory; ``save`` holds them all)."""
        return self._publisher.result_set()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._recorder.finish(exc)


# ---------------------------------------------------------------------------------------
# Starting a run


def open_run(model: nn.Module | None, optimizer: torch.optim.Optimizer | None = None, *,
             name: str | None = None, tokens_per_step: int | None = None,
             listen: str | None = None, token_file: str | None = None,
             save: os.PathLike[str] | str | None = None, memory_hz: float = 0.0,
             config: dict[str, Any] | None = None, script: str | None = None,
             suffix: str = "", serve_from_first_step: bool = False) -> Run:
    """A Run with the knobs users do not set, for the zero-code watcher and the framework
    callbacks (_framework_run.py): the `script` the run names (default: ``sys.argv[0]``), a
    `suffix` to its name (``-rank1`` under torchrun), and serving from the first step rather
    than now (_publisher.py). The other arguments are watch()'s."""
    run = Run.__new__(Run)
    run._attach(_recorder(model, optimizer, name=name, tokens_per_step=tokens_per_step,
                          listen=listen, token_file=token_file, save=save,
                          memory_hz=memory_hz, config=config, script=script, suffix=suffix,
                          serve_from_first_step=serve_from_first_step))
    return run


def _recorder(model: nn.Module | None, optimizer: torch.optim.Optimizer | None, *,
              name: str | None, tokens_per_step: int | None, listen: str | None,
              token_file: str | None, save: os.PathLike[str] | str | None, memory_hz: float,
              config: dict[str, Any] | None, script: str | None = None, suffix: str = "",
              serve_from_first_step: bool = False) -> Recorder:
    """Checks the arguments, each raising ValueError that names it, and starts recording."""
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
    served: tuple[str, str] | None = None
    if listen is not None:
        _serve.parse_listen(listen)  # ValueError naming `listen`
        served = (listen, _serve.read_token(token_file) if token_file is not None
                  else _serve.default_token())
    elif token_file is not None:
        raise ValueError("token_file: given without listen")
    # Resolved once: a later os.chdir moves neither the result nor its journal.
    resolved = _files.resolve_save(save, _results.JOURNAL_SUFFIX) if save is not None else None
    warmup = warmup_steps()
    hz = _instruments.check_memory_hz(memory_hz)
    batch = _shapes.FirstBatch(tokens_per_step, config, MAX_TOKENS_PER_STEP)
    return Recorder(model, optimizer, name=name, script=script, suffix=suffix, save=resolved,
                    listen=served, serve_from_first_step=serve_from_first_step, warmup=warmup,
                    memory_hz=hz, batch=batch)
