"""lmprof in PyTorch Lightning, as a Callback (docs/WATCH.md, "Frameworks")::

    trainer = L.Trainer(..., callbacks=[lmprof.lightning.Watch(save="run.json")])

The run is the zero-code watcher's (`lmprof-cli watch -- python train.py`): the same steps,
phases and records, from the first fit's start to its end. Importing this module imports
Lightning; the lmprof package itself needs only torch."""

from __future__ import annotations

from typing import Any

from lightning.pytorch import Callback

from ._framework_run import Watching


class Watch(Watching, Callback):
    """Watches the steps of `Trainer.fit`; `run` is the Run once fitting has started.

    Args: as :func:`lmprof.watch`'s, less the model and optimizer, which are found.
    """

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        self._start()

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        self._close()

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        if self.run is not None:
            self.run.__exit__(type(exception), exception, None)  # ends it failed, steps kept
