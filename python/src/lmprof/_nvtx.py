"""The NVTX ranges a watched run opens on CUDA, for nsys: a "step" range and, inside it,
one range per phase. They are closed however the run stops, so that the script's own
ranges stay balanced."""

from __future__ import annotations

import torch


class Ranges:
    """The ranges one run has pushed and not popped."""

    def __init__(self) -> None:
        self.on = False  # the run's device is CUDA (off the CPU's hot path otherwise)
        self.depth = 0

    def begin_step(self) -> None:
        if self.on:
            self._push("step")
            self._push("rest")

    def phase(self, name: str) -> None:
        """The open phase's range gives way to `name`'s."""
        if self.depth > 1:
            torch.cuda.nvtx.range_pop()
            self.depth -= 1
            self._push(name)

    def close_all(self) -> None:
        while self.depth > 0:
            self.depth -= 1
            torch.cuda.nvtx.range_pop()

    def _push(self, name: str) -> None:
        torch.cuda.nvtx.range_push(name)
        self.depth += 1
