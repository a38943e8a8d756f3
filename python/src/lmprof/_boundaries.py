"""Phases by what the code does, not by where the calls nest (docs/WATCH.md, "Frameworks").

Two shapes of loop put time in the wrong phase when a step is read from where the hooks
fire:

- ``optimizer.step(closure)`` (Lightning's automatic optimization, LBFGS) runs the forward
  and the backward inside the optimizer's step. They are forward and backward; what follows
  the closure's backward is the update, so the phase after that backward is the optimizer,
  not the rest of the step.
- Several optimizers in one step (one for the embeddings and one for the rest, a GAN's
  two): each one's ``step()`` is optimizer time, and in the zero-code mode the step ends
  after the last of them. A zero-code step ends, and is journaled, as its optimizer's step
  ends, so that a kill loses no finished step. Once the loop has shown that it steps
  several optimizers (an optimizer's step began between steps and ended with no forward
  inside it: not a closure's), the step's end is only *pending* as an optimizer's step ends:
  another optimizer's step, or a backward, before the next forward extends the step (a
  GAN's second loss), and the next forward (or the run's close) ends it where the last
  optimizer ended. The first
  update cycle, in the warmup, shows it: its second optimizer's time is the next step's data.
  A forward inside an optimizer's step that began while the end was pending is the next
  step's closure: the last step then ends where it was pending.

An optimizer's ``step()`` that raises calls no post-hook. Its pre-hook's caller frame (torch's
wrapper around ``step()``) is kept, and a forward inside an optimizer's step first checks
that the frame is still on the stack: one that is gone says that the step raised, and it is
dropped (`prune`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from types import FrameType

import torch


@dataclass
class Pending:
    """Where a zero-code step ends unless another optimizer extends it: its number of marks
    then (the later ones are dropped) and the host clock then (ns)."""

    marks: int
    ns: int


@dataclass
class Boundaries:
    """The optimizers whose ``step()`` is running, the classes of every optimizer seen, and
    the zero-code step's pending end."""

    _open: list[torch.optim.Optimizer] = field(default_factory=list)
    _frames: list[FrameType | None] = field(default_factory=list)  # each one's step()'s
    classes: list[str] = field(default_factory=list)
    pending: Pending | None = None
    several: bool = False  # the loop steps several optimizers an update
    _between: bool = False  # the running optimizer step began between steps, no forward yet

    def enter(self, optimizer: torch.optim.Optimizer | None, between_steps: bool,
              frame: FrameType | None = None) -> None:
        """An optimizer's ``step()`` begins (its pre-hook); `between_steps`: with no step open;
        `frame`: the frame that runs it, when it may end without a post-hook."""
        if not self._open:
            self._between = between_steps
        if optimizer is not None:
            self._open.append(optimizer)
            self._frames.append(frame)
            name = type(optimizer).__name__
            if name not in self.classes:
                self.classes.append(name)

    def leave(self) -> bool:
        """An optimizer's ``step()`` ends (its post-hook); whether it was the outermost."""
        if self._open:
            self._open.pop()
            self._frames.pop()
        if not self._open and self._between:
            self.several = True  # begun after the step ended, and no closure's forward in it
            self._between = False
        return not self._open

    def prune(self) -> bool:
        """Drops the optimizers whose ``step()`` raised (their frame has left the stack);
        whether there were any."""
        live: set[int] = set()
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            live.add(id(frame))
            frame = frame.f_back
        kept = [i for i, f in enumerate(self._frames) if f is None or id(f) in live]
        if len(kept) == len(self._open):
            return False
        self._open = [self._open[i] for i in kept]
        self._frames = [self._frames[i] for i in kept]
        self._between = self._between and bool(self._open)
        return True

    def clear(self) -> None:
        """A step that raised (the API's): no optimizer's step() is running."""
        self._open, self._frames, self._between = [], [], False

    def forward_seen(self) -> None:
        """A forward: inside an optimizer's step, that step is a closure's."""
        self._between = False

    @property
    def optimizer(self) -> torch.optim.Optimizer | None:
        """The optimizer whose ``step()`` is running (a closure's backward returns to it)."""
        return self._open[-1] if self._open else None

    def inside_optimizer(self) -> bool:
        return bool(self._open)

    def pend(self, marks: int, ns: int) -> None:
        self.pending = Pending(marks, ns)

    def take(self) -> Pending | None:
        pending, self.pending = self.pending, None
        return pending
