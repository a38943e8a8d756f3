"""A watched run's memory over time (docs/WATCH.md, "Inside your model"): a sampler thread
that reads the memory at a rate the user picks, plus a sample at each phase boundary, each
tagged with the step and phase; and the CUDA allocator's history of one step, saved as the
pickle that memory_viz opens, with its largest allocations.

The samples become the run's `memory_columns` (docs/RESULTS.md), which the window's Memory
view draws as it draws the engine's."""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from ._memory import Statm

# A day at 100 Hz fits (8.6M samples would not): past it, sampling stops and the run says so
# in `sampler_error`, as the engine does when its sampler stops early.
MAX_SAMPLES = 1_000_000
MAX_HZ = 1000.0
# The engine's phases; the watcher's "rest" is tagged with the phase that ran last in the
# step, and "data" (before the step) with the step's first: the op profile's rule (_ops.py).
_TAG = {"forward": "forward", "backward": "backward", "optimizer": "optimizer"}
# The largest allocations kept from a snapshot, as the engine keeps them.
LARGEST_ALLOCATIONS = 20


class MemorySampler:
    """Samples of (allocated, reserved, RSS) on a thread of their own at `hz`, and at each
    phase boundary from the training thread. On CUDA allocated and reserved are the caching
    allocator's current bytes; on a CPU the resident set stands for both, as it does in the
    steps' peaks (_memory.py). `position()` gives the step and the watcher's phase."""

    def __init__(self, device: torch.device | None, hz: float,
                 position: Callable[[], tuple[int, str]], start_ns: int,
                 on_sample: Callable[[dict[str, Any]], None] | None = None) -> None:
        self._cuda = device if device is not None and device.type == "cuda" else None
        self._position = position
        self._start_ns = start_ns
        self._on_sample = on_sample
        self._statm = Statm()
        self._lock = threading.Lock()
        self.t_ms = array("d")
        self.allocated = array("q")
        self.reserved = array("q")
        self.rss = array("q")
        self.step = array("l")
        self.boundary = array("b")
        self.phase: list[str] = []
        self._last_phase: dict[int, str] = {}
        self.error: str | None = None
        self.cpu_ms = 0.0
        self._period = 1.0 / hz if hz > 0 else 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self._period > 0:
            self._thread = threading.Thread(target=self._loop, name="lmprof-memory", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        started = time.thread_time()
        next_at = time.monotonic()
        try:
            while not self._stop.is_set():
                self.sample(boundary=False)
                next_at += self._period
                delay = next_at - time.monotonic()
                if delay < 0:  # fell behind (a long GIL hold): skip, never burst
                    next_at, delay = time.monotonic(), 0.0
                self._stop.wait(delay)
        except Exception as exc:  # noqa: BLE001 - the run goes on without its samples
            self.error = f"the memory sampler stopped: {type(exc).__name__}: {exc}"
        finally:
            self.cpu_ms = (time.thread_time() - started) * 1e3

    def _tag(self, step: int, phase: str) -> str:
        tag = _TAG.get(phase)
        if tag is None:  # rest: the phase that ran last in this step; data: its first
            return self._last_phase.get(step, "forward") if phase == "rest" else "forward"
        self._last_phase = {step: tag}
        return tag

    def sample(self, *, boundary: bool) -> None:
        if self._cuda is not None:
            allocated = torch.cuda.memory_allocated(self._cuda)
            reserved = torch.cuda.memory_reserved(self._cuda)
            rss = self._statm.read()
        else:
            allocated = reserved = rss = self._statm.read()
        with self._lock:  # the time and the tag too, so that samples stay in time order
            step, phase = self._position()
            now = (time.perf_counter_ns() - self._start_ns) / 1e6
            if len(self.t_ms) >= MAX_SAMPLES:
                if self.error is None:
                    self.error = (f"the memory timeline holds its first {MAX_SAMPLES} samples; "
                                  "later ones were not kept")
                self._stop.set()
                return
            tag = self._tag(step, phase)
            self.t_ms.append(now)
            self.allocated.append(allocated)
            self.reserved.append(reserved)
            self.rss.append(rss)
            self.step.append(step)
            self.boundary.append(1 if boundary else 0)
            self.phase.append(tag)
        if self._on_sample is not None:
            self._on_sample({"t_ms": now, "allocated": allocated, "reserved": reserved,
                             "rss": rss, "phase": tag, "step": step, "boundary": boundary})

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._statm.close()

    def columns(self, steps: int) -> dict[str, list[Any]]:
        """The run's `memory_columns`, of the samples of its recorded steps (`steps`)."""
        with self._lock:
            keep = [i for i, s in enumerate(self.step) if s < steps]

            def pick(column: Sequence[Any]) -> list[Any]:
                return [column[i] for i in keep]

            return {"t_ms": pick(self.t_ms), "allocated": pick(self.allocated),
                    "reserved": pick(self.reserved), "rss": pick(self.rss),
                    "phase": pick(self.phase), "step": pick(self.step),
                    "boundary": [bool(b) for b in pick(self.boundary)]}


# ---------------------------------------------------------------------------------------
# The CUDA allocator's history of one step


class StepSnapshot:
    """Records the CUDA caching allocator's history during one step and saves it as the
    pickle that pytorch.org/memory_viz opens (`torch.cuda.memory._dump_snapshot`), with the
    step's largest allocations for lmprof's Allocations table."""

    def __init__(self, path: Path, step: int, max_entries: int, device: torch.device) -> None:
        self.path = path
        self.step = step
        self.max_entries = max_entries
        self._device = device
        self._run_ms = 0.0
        self._switches: list[tuple[float, str]] = []  # (wall µs, phase it began)

    def start(self, run_ms: float, phase: str) -> None:
        """Starts recording; `run_ms` is the step's start since the run began."""
        self._run_ms = run_ms
        torch.cuda.memory._record_memory_history(max_entries=self.max_entries)
        self.switch(phase)

    def switch(self, phase: str) -> None:
        self._switches.append((time.time() * 1e6, phase))

    def _phase_at(self, t_us: float) -> str:
        phase, last = "forward", "forward"
        for at, name in self._switches:
            if at > t_us:
                break
            last = _TAG.get(name, last)
            phase = last
        return phase

    def abandon(self) -> None:
        """Stops recording and keeps nothing (the step raised, or the run closed mid-step)."""
        _stop_recording()

    def stop(self) -> dict[str, Any]:
        """Saves the pickle and returns the run's `memory_snapshot` block."""
        info: dict[str, Any] = {"path": str(self.path), "format": "cuda-pickle",
                                "first_step": self.step, "step_count": 1, "entries": 0,
                                "truncated": False, "error": None, "largest_allocations": []}
        try:
            snapshot = torch.cuda.memory._snapshot(self._device)
            torch.cuda.memory._dump_snapshot(str(self.path))
        except Exception as exc:  # noqa: BLE001 - the run stands without its snapshot
            info["error"] = f"{type(exc).__name__}: {exc}"
            return info
        finally:
            _stop_recording()
        events = [e for trace in snapshot.get("device_traces", []) for e in trace]
        t0_us = self._switches[0][0] if self._switches else 0.0
        info["entries"] = len(events)
        info["truncated"] = len(events) >= self.max_entries
        info["largest_allocations"] = [
            {**a, "t_ms": self._run_ms + (a["t_us"] - t0_us) / 1e3,
             "phase": self._phase_at(a["t_us"]), "step": self.step}
            for a in largest_allocations(events)]
        for a in info["largest_allocations"]:
            del a["t_us"]
        return info


def _stop_recording() -> None:
    torch.cuda.memory._record_memory_history(enabled=None)


def no_snapshot(step: int, device: torch.device | None) -> dict[str, Any]:
    """The `memory_snapshot` block of a run that cannot have one, saying why."""
    where = str(device) if device is not None else "cpu"
    return {"path": "", "format": "", "first_step": step, "step_count": 0, "entries": 0,
            "truncated": False, "largest_allocations": [],
            "error": f"no memory snapshot: the allocator history is the CUDA caching "
                     f"allocator's, and this run trains on {where}"}


def largest_allocations(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The largest allocations of an allocator history, largest first: bytes, when (`t_us`,
    the history's clock) and how long they lived (ms; -1 when still live at its end)."""
    born: dict[int | None, tuple[int, float]] = {}
    done: list[tuple[int, float, float]] = []
    for e in events:
        action, address = e.get("action"), e.get("addr")
        t_us = float(e.get("time_us", 0.0))
        if action == "alloc":
            born[address] = (int(e.get("size", 0)), t_us)
        elif action in ("free_requested", "free_completed") and address in born:
            size, start = born.pop(address)
            done.append((size, start, (t_us - start) / 1e3))
    done += [(size, start, -1.0) for size, start in born.values()]
    done.sort(key=lambda a: -a[0])
    return [{"bytes": size, "t_us": start, "lifetime_ms": lifetime}
            for size, start, lifetime in done[:LARGEST_ALLOCATIONS]]
