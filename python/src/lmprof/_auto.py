"""The zero-code mode: `lmprof-cli watch -- python train.py` starts the script with
`_bootstrap/` on PYTHONPATH, whose sitecustomize calls `arm()`. Once the script imports
torch, a Run watches it with no model or optimizer named: the first module with parameters
called at the top is the model, and each optimizer step ends a step (docs/WATCH.md).

The environment carries the options: LMPROF_WATCH=1, LMPROF_WATCH_SAVE (the result set;
under torchrun `.rank<N>` is added before its suffix), LMPROF_WATCH_NAME,
LMPROF_TOKENS_PER_STEP, LMPROF_WARMUP_STEPS, LMPROF_WATCH_LISTEN,
LMPROF_WATCH_TOKEN_FILE, the op profile's LMPROF_PROFILE_OPS (the step),
LMPROF_OPS_DEPTH, LMPROF_OPS_FOLD and LMPROF_OPS_TRACE, and the memory's LMPROF_MEMORY_HZ,
LMPROF_MEMORY_SNAPSHOT (the step) and LMPROF_SNAPSHOT_PATH, and LMPROF_MODULE_DEPTH (time
per module).

The bootstrap loads this file on its own, before the package (whose import would import
torch): it imports nothing of lmprof until torch is there."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any


def _tokens() -> int | None:
    text = os.environ.get("LMPROF_TOKENS_PER_STEP", "")
    if not text:
        return None
    if not text.isdigit() or int(text) <= 0:
        raise ValueError(f"LMPROF_TOKENS_PER_STEP: {text!r} is not a positive token count")
    return int(text)


def _count(variable: str, least: int) -> int | None:
    text = os.environ.get(variable, "")
    if not text:
        return None
    if not text.isdigit() or int(text) < least:
        raise ValueError(f"{variable}: {text!r} is not a whole number of at least {least}")
    return int(text)


def _rate(variable: str) -> float:
    text = os.environ.get(variable, "")
    try:
        return float(text) if text else 0.0
    except ValueError:
        raise ValueError(f"{variable}: {text!r} is not a rate (samples a second)") from None


def start() -> None:
    """Watches this process's training loop (torch is imported)."""
    from lmprof._framework_run import framework_run  # under torchrun: per rank

    run = framework_run(name=os.environ.get("LMPROF_WATCH_NAME") or None,
                        save=os.environ.get("LMPROF_WATCH_SAVE") or None,
                        listen=os.environ.get("LMPROF_WATCH_LISTEN") or None,
                        token_file=os.environ.get("LMPROF_WATCH_TOKEN_FILE") or None,
                        tokens_per_step=_tokens(), memory_hz=_rate("LMPROF_MEMORY_HZ"))
    depth = _count("LMPROF_MODULE_DEPTH", 1)
    if depth is not None:
        run.time_modules(depth)
    snapshot = _count("LMPROF_MEMORY_SNAPSHOT", 0)
    if snapshot is not None:
        path = os.environ.get("LMPROF_SNAPSHOT_PATH") or None
        run.memory_snapshot(snapshot, path=path)
    step = _count("LMPROF_PROFILE_OPS", 0)
    if step is not None:
        ops_depth = _count("LMPROF_OPS_DEPTH", 1)
        run.profile_ops(step, **({"depth": ops_depth} if ops_depth is not None else {}),
                        fold=os.environ.get("LMPROF_OPS_FOLD", "") == "1",
                        trace=os.environ.get("LMPROF_OPS_TRACE") or None)


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Runs start() right after `import torch` completes, so that a script that never
    imports torch pays nothing, and one that does is watched from its first step."""

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader: Any = spec.loader
        run_module = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            try:
                start()
            except Exception as exc:  # noqa: BLE001 - never stop the user's script
                warnings.warn(f"lmprof could not watch this script: {exc}", RuntimeWarning,
                              stacklevel=1)

        loader.exec_module = exec_module
        return spec


def arm() -> None:
    """Called at interpreter start-up when LMPROF_WATCH is set."""
    if "torch" in sys.modules:
        start()
    else:
        sys.meta_path.insert(0, _AfterTorch())
