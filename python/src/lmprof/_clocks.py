"""How a watched step's phases are timed: the host's monotonic clock, or CUDA events that
are read once the GPU has passed them, never by waiting for it (docs/WATCH.md)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from typing import Protocol, cast

import torch


class Clock(Protocol):
    """Marks the boundaries of a step's phases and turns consecutive marks into times."""

    def mark(self) -> object:
        """A mark at this point of the step: a time, or an event on the current stream."""

    def ready(self, marks: Sequence[object]) -> bool:
        """Whether every mark's time can be read without waiting for the device."""

    def elapsed_ms(self, start: object, end: object) -> float:
        """Milliseconds between two ready marks."""

    def release(self, marks: list[object]) -> None:
        """The marks are read; their events may be reused."""

    def wait(self, mark: object) -> None:
        """Blocks until the mark can be read (used by close(), never during a step)."""


class HostClock:
    """The CPU's monotonic clock: a mark is `time.perf_counter_ns()`."""

    def mark(self) -> int:
        return time.perf_counter_ns()

    def ready(self, marks: Sequence[object]) -> bool:
        return True

    def elapsed_ms(self, start: object, end: object) -> float:
        assert isinstance(start, int) and isinstance(end, int)
        return (end - start) / 1e6

    def release(self, marks: list[object]) -> None:
        pass

    def wait(self, mark: object) -> None:
        pass


class CudaEventClock:
    """CUDA events recorded on the current stream, pooled so that a step creates none once
    the first few steps have run. Reading one only queries it (cudaEventQuery); a step is
    reported once its last event has completed, a few steps later."""

    def __init__(self, device: torch.device) -> None:
        self._device = device
        self._pool: deque[torch.cuda.Event] = deque()

    def mark(self) -> torch.cuda.Event:
        event = self._pool.pop() if self._pool else torch.cuda.Event(enable_timing=True)
        event.record(torch.cuda.current_stream(self._device))
        return event

    def ready(self, marks: Sequence[object]) -> bool:
        # Marks on one stream complete in order, so the last is asked first; the others are
        # asked too, since a script may record on streams of its own.
        events = cast("Sequence[torch.cuda.Event]", marks)  # the marks this clock made
        return all(event.query() for event in reversed(events))

    def elapsed_ms(self, start: object, end: object) -> float:
        assert isinstance(start, torch.cuda.Event) and isinstance(end, torch.cuda.Event)
        return float(start.elapsed_time(end))

    def release(self, marks: list[object]) -> None:
        for mark in marks:
            if isinstance(mark, torch.cuda.Event) and len(self._pool) < 256:
                self._pool.append(mark)

    def wait(self, mark: object) -> None:
        assert isinstance(mark, torch.cuda.Event)
        mark.synchronize()


def clock_for(device: torch.device | None) -> Clock:
    """CUDA events for a model on a GPU, the host clock otherwise."""
    if device is not None and device.type == "cuda":
        return CudaEventClock(device)
    return HostClock()
