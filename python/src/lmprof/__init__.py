"""lmprof: watch a PyTorch training loop's steps and phases, with no change to the script
(``lmprof-cli watch -- python train.py``) or with two lines (docs/WATCH.md)::

    run = lmprof.watch(model, optimizer, name="my-gpt", tokens_per_step=batch * ctx)
    for x, y in loader:
        with run.step():
            ...
    run.close()
"""

from ._api import watch
from ._records import PhaseStats, ResultSet, RunRecord, RunSummary, StepRecord
from ._results import SCHEMA, VERSION as __version__, recover
from ._run import Run

__all__ = ["SCHEMA", "PhaseStats", "ResultSet", "Run", "RunRecord", "RunSummary", "StepRecord",
           "__version__", "recover", "watch"]
