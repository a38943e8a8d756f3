"""Where a watched loop's phases are seen: hooks on the model and the optimizer, and
wrappers around `torch.autograd.backward` and `GradScaler.step` shared by every open run
(PyTorch has no hook for the start and end of a backward pass, and a GradScaler that skips
a step after an inf calls no optimizer hook). Everything here is removed when the last run
closes."""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol

import torch
import torch.nn as nn
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)


class PhaseListener(Protocol):
    """What a run's recorder (_recorder.py) hears from the hooks."""

    def on_forward(self, module: nn.Module, args: Any,
                   kwargs: dict[str, Any] | None = None) -> None: ...
    def on_forward_end(self, module: nn.Module) -> None: ...
    def on_backward(self, starting: bool) -> None: ...
    def on_optimizer(self, starting: bool, optimizer: torch.optim.Optimizer | None = None,
                     frame: FrameType | None = None) -> None: ...


_lock = threading.Lock()
_listeners: list[PhaseListener] = []
_original_backward: Callable[..., Any] | None = None
_original_scaler_step: Callable[..., float | None] | None = None
# How deep this thread is in backward() calls: a backward started inside another (from a
# hook, or a gradient penalty's own backward) is part of the outer one's phase.
_depth = threading.local()


def _watched_backward(*args: Any, **kwargs: Any) -> Any:
    assert _original_backward is not None
    depth = getattr(_depth, "value", 0)
    if depth:
        _depth.value = depth + 1
        try:
            return _original_backward(*args, **kwargs)
        finally:
            _depth.value = depth
    listeners = list(_listeners)
    for listener in listeners:
        listener.on_backward(True)
    _depth.value = 1
    try:
        return _original_backward(*args, **kwargs)
    finally:
        _depth.value = 0
        for listener in listeners:
            listener.on_backward(False)


def _watched_scaler_step(self: torch.amp.grad_scaler.GradScaler,
                         optimizer: torch.optim.Optimizer, *args: Any,
                         **kwargs: Any) -> float | None:
    """GradScaler.step is the optimizer phase, and ends a zero-code step, also when it skips
    the optimizer's step after an inf (the optimizer's own hooks then never fire). It
    replaces the method, so its first argument is the GradScaler."""
    assert _original_scaler_step is not None
    listeners = list(_listeners)
    for listener in listeners:
        listener.on_optimizer(True, optimizer)
    try:
        return _original_scaler_step(self, optimizer, *args, **kwargs)
    finally:
        for listener in listeners:
            listener.on_optimizer(False, optimizer)


class Removable(Protocol):
    def remove(self) -> None: ...


class _Unhook:
    def __init__(self, remove: Callable[[], None]) -> None:
        self.remove = remove


def listen_to_backward(listener: PhaseListener) -> Removable:
    """Calls `listener.on_backward` around every `backward()` of this process (Tensor.backward
    goes through torch.autograd.backward), and `listener.on_optimizer` around every
    `GradScaler.step()`."""
    global _original_backward, _original_scaler_step
    scaler = torch.amp.grad_scaler.GradScaler
    with _lock:
        if _original_backward is None:
            _original_backward = torch.autograd.backward
            torch.autograd.backward = functools.wraps(_original_backward)(_watched_backward)
            _original_scaler_step = scaler.step
            functools.update_wrapper(_watched_scaler_step, scaler.step)  # its name and docs
            # Patching the class's method is the point: every GradScaler is heard.
            scaler.step = _watched_scaler_step  # type: ignore[method-assign]
        _listeners.append(listener)

    def remove() -> None:
        global _original_backward, _original_scaler_step
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)
            if not _listeners and _original_backward is not None:
                torch.autograd.backward = _original_backward
                _original_backward = None
                assert _original_scaler_step is not None  # patched with backward, above
                scaler.step = _original_scaler_step  # type: ignore[method-assign]
                _original_scaler_step = None

    return _Unhook(remove)


def hook_model(model: nn.Module, listener: PhaseListener) -> list[Removable]:
    """The outermost module's forward starts a forward phase (one per micro-batch). Its
    keywords too: a model called as model(input_ids=...) has its batch there. Its end is
    heard too, where an evaluation's forward ends (_evals.py)."""
    def pre(module: nn.Module, args: Any, kwargs: dict[str, Any]) -> None:
        listener.on_forward(module, args, kwargs)

    def post(module: nn.Module, args: Any, output: Any) -> None:
        listener.on_forward_end(module)
    return [model.register_forward_pre_hook(pre, with_kwargs=True),
            model.register_forward_hook(post, always_call=True)]


def hook_optimizer(optimizer: torch.optim.Optimizer | None,
                   listener: PhaseListener) -> list[Removable]:
    """The optimizer's step() is the optimizer phase; without an optimizer, every
    optimizer's step() in the process is. The pre-hook passes its caller's frame (torch's
    wrapper around step()): a step() that raises calls no post-hook, and its frame gone from
    the stack says it ended (_boundaries.py)."""
    def pre(opt: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        listener.on_optimizer(True, opt, sys._getframe(1))

    def post(opt: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        listener.on_optimizer(False, opt)

    if optimizer is None:
        return [register_optimizer_step_pre_hook(pre), register_optimizer_step_post_hook(post)]
    return [optimizer.register_step_pre_hook(pre), optimizer.register_step_post_hook(post)]


class OutermostModule:
    """Finds the model of a script that names none (the zero-code mode): process-wide
    forward hooks see every module call, and the first module with parameters called at
    depth 0 with gradients on is the model. Once a step has ended, the process-wide hooks
    are removed (they cost a call per module) and the model gets hooks of its own. A module
    with parameters called at depth 0 with gradients off is heard too: an evaluation's
    forward, the run's if that module turns out to be the model (_evals.py)."""

    def __init__(self, listener: PhaseListener) -> None:
        self._listener = listener
        self._depth = 0
        self.found: nn.Module | None = None
        self._handles = [
            nn.modules.module.register_module_forward_pre_hook(self._pre),
            nn.modules.module.register_module_forward_hook(self._post, always_call=True),
        ]

    def _pre(self, module: nn.Module, args: Any) -> None:
        self._depth += 1
        if self._depth != 1:
            return
        if self.found is None and next(module.parameters(), None) is not None:
            if not torch.is_grad_enabled():
                self._listener.on_forward(module, args)  # an evaluation's, perhaps
                return
            self.found = module
        if module is self.found:
            self._listener.on_forward(module, args)

    def _post(self, module: nn.Module, args: Any, output: Any) -> None:
        self._depth = max(0, self._depth - 1)
        if self._depth == 0:
            self._listener.on_forward_end(module)

    def settle(self) -> list[Removable]:
        """Hands over to the model's own hook once it is known; call between steps."""
        if self.found is None or not self._handles:
            return []
        self.remove()
        return hook_model(self.found, self._listener)

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
