"""Runs not yet closed when the script ends: an uncaught exception ends them `error`
(KeyboardInterrupt: `cancelled`), and the interpreter's exit closes the rest, so that a
crashing script loses no step (docs/WATCH.md, "Faults lose nothing")."""

from __future__ import annotations

import atexit
import sys
import warnings
from types import TracebackType
from typing import Protocol


class Closable(Protocol):
    """An open run (_recorder.py)."""

    @property
    def name(self) -> str: ...

    def finish(self, exc: BaseException | None) -> None: ...


_open_runs: list[Closable] = []


def opened(run: Closable) -> None:
    _open_runs.append(run)


def closed(run: Closable) -> None:
    if run in _open_runs:
        _open_runs.remove(run)


def close_open_runs(exc: BaseException | None = None) -> None:
    for run in list(_open_runs):
        try:
            run.finish(exc)
        except Exception as failure:  # noqa: BLE001 - the script is ending either way
            warnings.warn(f"lmprof could not close run {run.name!r}: {failure}", RuntimeWarning,
                          stacklevel=1)


def _excepthook(kind: type[BaseException], exc: BaseException,
                tb: TracebackType | None) -> None:
    close_open_runs(exc)
    _previous_excepthook(kind, exc, tb)


_previous_excepthook = sys.excepthook
sys.excepthook = _excepthook
atexit.register(close_open_runs)
