"""lmprof in Hugging Face's Trainer, as a TrainerCallback (docs/WATCH.md, "Frameworks")::

    Trainer(..., callbacks=[lmprof.huggingface.Watch(save="run.json")])

The run is the zero-code watcher's (`lmprof-cli watch -- python train.py`): the same steps,
phases and records, from the training's start to its end. Importing this module imports
transformers; the lmprof package itself needs only torch."""

from __future__ import annotations

import os
from typing import Any, Optional

from transformers import TrainerCallback

from ._framework_run import framework_run
from ._run import Run


class Watch(TrainerCallback):
    """Watches the steps of `Trainer.train`; `run` is the Run once training has begun.

    Args: as :func:`lmprof.watch`'s, less the model and optimizer, which are found.
    """

    def __init__(self, *, name: Optional[str] = None,
                 save: Optional["os.PathLike[str] | str"] = None, listen: Optional[str] = None,
                 token_file: Optional[str] = None, tokens_per_step: Optional[int] = None,
                 memory_hz: float = 0.0) -> None:
        self._options = dict(name=name, save=save, listen=listen, token_file=token_file,
                             tokens_per_step=tokens_per_step, memory_hz=memory_hz)
        self.run: Optional[Run] = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.run is None:
            self.run = framework_run(**self._options)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.run is not None:
            self.run.close()
