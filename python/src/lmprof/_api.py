"""The package's entry point, :func:`lmprof.watch`: a Run (``_run.py``) for a loop the user
names, with its arguments documented where users read them."""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.nn as nn

from ._run import Run


def watch(model: nn.Module, optimizer: torch.optim.Optimizer | None = None, *,
          name: str | None = None, tokens_per_step: int | None = None,
          listen: str | None = None, token_file: str | None = None,
          save: os.PathLike[str] | str | None = None, memory_hz: float = 0.0,
          config: dict[str, Any] | None = None) -> Run:
    """Starts watching a training loop and returns its Run.

    Args:
        model: the model the loop trains; its forward starts each forward phase (one per
            micro-batch with gradient accumulation).
        optimizer: its ``step()`` is the optimizer phase; ``None`` watches every
            optimizer's ``step()``.
        name: the run's id in result sets and the window (default: the model's class).
        tokens_per_step: tokens one step trains on (batch × context), for tokens/s.
        listen: ``"HOST:PORT"`` to serve the steps live to lmprof's window or CLI.
        token_file: the token viewers must present (with ``listen``).
        save: a result-set file written by ``close()``; until then each finished step is
            appended to ``<save>.steps.jsonl``, which ``lmprof.recover()`` reads after a kill.
        memory_hz: samples of the memory a second, on a thread of their own, plus one at each
            phase boundary: the Memory view's timeline (0: none).
        config: the model's CS336 dimensions (``d_model``, ``num_layers``, ``num_heads``,
            ``d_ff``, ``vocab_size``, ``context_length``, ``batch_size``, ``rope_theta``),
            where lmprof cannot find them, for ``lmprof-cli watch --against-reference``.

    Use ``with run.step():`` around each step, then ``run.close()`` (or use the Run as a
    context manager). Raises ValueError naming the argument that is wrong.
    """
    return Run(model, optimizer, name=name, tokens_per_step=tokens_per_step, listen=listen,
               token_file=token_file, save=save, memory_hz=memory_hz, config=config)
