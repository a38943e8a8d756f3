"""Where a watched run's finished steps go: the recent steps in memory (`Run.steps`), the
tally over all of them (the summary and the result set's steps, _tally.py), the live server
(_serve.py), the step journal and, at close, the saved result set (_results.py).

The recorder (_recorder.py) hands each step's record here as soon as it is read, and
describes the run whenever a record of the whole run is needed: the live server's header,
the journal's, the result set."""

from __future__ import annotations

import warnings
from collections import deque
from pathlib import Path
from typing import Any, Protocol

import torch

from . import _results, _serve
from ._records import ResultSet, RunRecord, RunSummary, StepRecord
from ._steps import json_number, read_scalar
from ._tally import MAX_STEPS, Tally

# Finished step records held in memory (Run.steps); the summary and the steps a result set
# holds are bounded too (_tally.py), and `save` keeps every record on disk.
RECENT_STEPS = 10_000


class Described(Protocol):
    """What the publisher asks of the run it publishes (the recorder)."""

    @property
    def device(self) -> torch.device | None: ...

    def run_record(self, tally: Tally, steps: list[StepRecord]) -> RunRecord: ...


class Publisher:
    """One run's records, kept, served and saved."""

    def __init__(self, run: Described, *, save: Path | None, listen: tuple[str, str] | None,
                 serve_from_first_step: bool) -> None:
        self._run = run
        self._save = save
        self._listen = listen  # the address and the viewers' token
        self._serve_at_first_step = listen is not None and serve_from_first_step
        self._recent: deque[StepRecord] = deque(maxlen=RECENT_STEPS)
        self._tally = Tally()
        self._created = _results.now_iso()
        self._environment: dict[str, Any] | None = None
        self._journal: _results.Journal | None = None
        self._server: _serve.LiveServer | None = None

    def start(self) -> None:
        """Serves the run now, with `listen`, unless it is served from its first step: the
        zero-code mode's, since a process that never trains (a torchrun launcher, a loader's
        worker) must not take the port of the one that does."""
        if self._listen is not None and not self._serve_at_first_step:
            self._serve()

    @property
    def port(self) -> int | None:
        return self._server.port if self._server is not None else None

    @property
    def steps(self) -> list[StepRecord]:
        return list(self._recent)

    @property
    def recorded(self) -> int:
        """How many steps were recorded."""
        return len(self._tally)

    def summary(self, tokens_per_step: int | None) -> RunSummary:
        return self._tally.summary(tokens_per_step)

    def result_set(self) -> ResultSet:
        """The run as a result set, with the recent steps."""
        return _results.result_set([self._run.run_record(self._tally, self.steps)], self._env(),
                                   self._created)

    def publish(self, record: StepRecord) -> None:
        """A finished step's record: kept, served and journaled."""
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
                self._server.started(self._run.run_record(self._tally, []), self._env(),
                                     _results.device_offers(self._run.device))
        if self._server is not None:
            self._server.step(record)
        if self._save is not None:
            if self._journal is None:
                self._journal = _results.Journal(_results.journal_path(self._save))
                self._journal.write("header", {"schema": _results.JOURNAL_SCHEMA,
                                               "created": self._created,
                                               "environment": self._env(),
                                               "run": self._run.run_record(self._tally, [])})
            self._journal.write("step", {"step": record})

    def amend(self, index: int, scalars: dict[str, Any]) -> None:
        """Scalars for the last step, `index`, after it was recorded (it is recorded as it
        ends when its marks can be read, so that a kill loses no finished step): added to its
        record and journaled as a `scalars` line. A tensor is read now."""
        if not self._recent or self._recent[-1]["index"] != index:
            return  # no step has ended yet, or the last one was not recorded
        values = {key: json_number(read_scalar(v.detach().cpu() if isinstance(v, torch.Tensor)
                                               else v)) for key, v in scalars.items()}
        _results.apply_scalars(self._recent[-1], values)
        if self._journal is not None:
            self._journal.write("scalars", {"index": index, "scalars": values})

    def memory(self, sample: dict[str, Any]) -> None:
        """A memory sample, from the sampler's thread or the training thread."""
        if self._server is not None:
            self._server.memory(sample)

    def close(self, status: str, error: str | None) -> None:
        """The run has ended (`status`, `error`): the live server sends the finished run and
        stops, and `save` is written, unless no step was recorded (a process that never
        trained: a launcher, a worker)."""
        if self._server is not None:
            if self._tally:
                self._server.finished(self._final_record())
            self._server.close()
        if self._save is None or not self._tally:
            return
        if self._journal is not None:  # recover() reads the run's end should the write fail
            self._journal.write("end", {"status": status, "error": error})
        document = _results.result_set([self._final_record()], self._env(), self._created)
        _results.write_result(self._save, document, self._journal)

    def _serve(self) -> None:
        assert self._listen is not None
        listen, token = self._listen
        devices = _results.device_offers(self._run.device)
        self._server = _serve.start(listen, token, tool=_results.tool(), environment=self._env(),
                                    devices=devices)

    def _env(self) -> dict[str, Any]:
        if self._environment is None:
            self._environment = _results.environment(self._run.device)
        return self._environment

    def _final_record(self) -> RunRecord:
        """Every step, or past KEPT_STEPS the thinned ones, with the summary over all."""
        record = self._run.run_record(self._tally, self._tally.kept())
        thinned = self._tally.thinning()
        if thinned is not None:
            record["thinned"] = thinned
        return record
