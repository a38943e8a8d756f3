"""lmprof in Hugging Face's Trainer, as a TrainerCallback (docs/WATCH.md, "Frameworks")::

    Trainer(..., callbacks=[lmprof.huggingface.Watch(save="run.json")])

The run is the zero-code watcher's (`lmprof-cli watch -- python train.py`): the same steps,
phases and records, from the training's start to its end. Importing this module imports
transformers; the lmprof package itself needs only torch."""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from ._framework_run import Watching


class Watch(Watching, TrainerCallback):
    """Watches the steps of `Trainer.train`; `run` is the Run once training has begun.

    Args: as :func:`lmprof.watch`'s, less the model and optimizer, which are found.
    """

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._start()

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._close()
