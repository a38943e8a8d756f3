"""lmprof in PyTorch Lightning, as a Callback (docs/WATCH.md, "Frameworks")::

    trainer = L.Trainer(..., callbacks=[lmprof.lightning.Watch(save="run.json")])

The run is the zero-code watcher's (`lmprof-cli watch -- python train.py`): the same steps,
phases and records, from the first fit's start to its end. Importing this module imports
Lightning; the lmprof package itself needs only torch."""

from __future__ import annotations

import os
from typing import Any, Optional

from lightning.pytorch import Callback

from ._framework_run import framework_run
from ._run import Run


class Watch(Callback):
    """Watches the steps of `Trainer.fit`; `run` is the Run once fitting has started.

    Args: as :func:`lmprof.watch`'s, less the model and optimizer, which are found.
    """

    def __init__(self, *, name: Optional[str] = None,
                 save: Optional["os.PathLike[str] | str"] = None, listen: Optional[str] = None,
                 token_file: Optional[str] = None, tokens_per_step: Optional[int] = None,
                 memory_hz: float = 0.0) -> None:
        self._options = dict(name=name, save=save, listen=listen, token_file=token_file,
                             tokens_per_step=tokens_per_step, memory_hz=memory_hz)
        self.run: Optional[Run] = None

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        if self.run is None:
            self.run = framework_run(**self._options)

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        if self.run is not None:
            self.run.close()

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        if self.run is not None:
            self.run.__exit__(type(exception), exception, None)  # ends it failed, steps kept
