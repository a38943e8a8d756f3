"""Peak memory of each phase of a watched step: the CUDA caching allocator's peaks, reset at
each phase boundary, or the process's resident set read at each boundary on a CPU."""

from __future__ import annotations

import os
import time
from typing import Protocol

import torch


class PhaseMemory(Protocol):
    """Read at each phase boundary: the peak of the phase that just ended."""

    def boundary(self) -> tuple[int, int]:
        """(peak allocated, peak reserved) bytes since the previous boundary."""

    def close(self) -> None:
        """Releases what the reader holds open."""


class CudaPeaks:
    """The allocator's peak allocated and reserved bytes since the last boundary, read from
    one `memory_stats_as_nested_dict` (each of `max_memory_allocated` and
    `max_memory_reserved` would build the whole statistics table). The allocator keeps
    these on the host: reading and resetting them waits for nothing. Resetting them also
    resets the peaks the script itself may read (docs/WATCH.md)."""

    def __init__(self, device: torch.device) -> None:
        self._device = device
        torch.cuda.reset_peak_memory_stats(device)

    def boundary(self) -> tuple[int, int]:
        stats = torch.cuda.memory_stats_as_nested_dict(self._device)  # {} before CUDA starts
        torch.cuda.reset_peak_memory_stats(self._device)

        def peak(kind: str) -> int:
            return int(stats.get(kind, {}).get("all", {}).get("peak", 0))

        return peak("allocated_bytes"), peak("reserved_bytes")

    def close(self) -> None:
        pass


class Statm:
    """The process's resident set in bytes, read from `/proc/self/statm` kept open (one
    `pread` a reading); 0 where /proc is missing or a reading fails."""

    def __init__(self) -> None:
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
        self._fd: int | None
        try:
            self._fd = os.open("/proc/self/statm", os.O_RDONLY)
        except OSError:
            self._fd = None

    def read(self) -> int:
        if self._fd is None:
            return 0
        try:
            return int(os.pread(self._fd, 128, 0).split()[1]) * self._page
        except (OSError, IndexError, ValueError):
            return 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class ResidentSet:
    """The process's resident set (`/proc/self/statm`) at each boundary; a phase's peak is
    the larger of its two ends. Where /proc is missing, the figures are 0.

    A boundary within REREAD_NS of the last read reuses it: in that time the process can
    touch little memory (about 0.5 MB in 50 µs at 10 GB/s), and a fast loop crosses several
    boundaries in it, each read costing about 2 µs of a step's host time
    (bench/watch_overhead.py)."""

    REREAD_NS = 50_000

    def __init__(self) -> None:
        self._statm = Statm()
        self._last = self._now = self._statm.read()
        self._read_ns = time.perf_counter_ns()

    def boundary(self) -> tuple[int, int]:
        now_ns = time.perf_counter_ns()
        if now_ns - self._read_ns >= self.REREAD_NS:
            self._now = self._statm.read()
            self._read_ns = now_ns
        peak = max(self._now, self._last)
        self._last = self._now
        return peak, peak

    def close(self) -> None:
        self._statm.close()


def memory_for(device: torch.device | None) -> PhaseMemory:
    """The allocator's peaks for a model on a GPU, the resident set otherwise."""
    if device is not None and device.type == "cuda":
        return CudaPeaks(device)
    return ResidentSet()
