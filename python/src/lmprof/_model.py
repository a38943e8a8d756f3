"""What the watcher learns of the user's model: the device it is on, its class inside the
wrappers PyTorch puts around it, the autocast its forward runs under, and how many graphs
torch.compile has made."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn
from torch.utils.hooks import RemovableHandle


def device_of(model: nn.Module | None) -> torch.device | None:
    if model is None:
        return None
    for tensor in model.parameters():
        return tensor.device
    for buffer in model.buffers():
        return buffer.device
    return torch.device("cpu")


def model_class(model: nn.Module) -> str:
    """The class of the user's model inside the wrappers PyTorch puts around it:
    DistributedDataParallel, DataParallel and FSDP (``.module``), torch.compile
    (``._orig_mod``)."""
    for _ in range(8):  # wrappers nest (compile around DDP), never deeply
        inner = getattr(model, "_orig_mod", None) or getattr(model, "module", None)
        if not isinstance(inner, nn.Module):
            break
        model = inner
    return type(model).__qualname__


def compiled_graphs() -> int:
    """Graphs torch.compile has made so far (0 before torch._dynamo is imported)."""
    utils = sys.modules.get("torch._dynamo.utils")
    if utils is None:
        return 0
    try:
        return int(utils.counters["stats"]["unique_graphs"])
    except (AttributeError, KeyError, TypeError):
        return 0


def autocast_dtype(device: torch.device | None) -> str | None:
    """The autocast dtype in force here ("bfloat16"), or None when autocast is off."""
    device_type = device.type if device is not None else "cpu"
    if torch.is_autocast_enabled(device_type):
        return str(torch.get_autocast_dtype(device_type)).replace("torch.", "")
    return None


def probe_autocast(model: nn.Module, device: torch.device | None,
                   seen: Callable[[str], None]) -> RemovableHandle | None:
    """Hears, once, the autocast in force inside the model's forward: accelerate (Hugging
    Face's Trainer, bf16=True) enters it in a wrapper of `forward`, after the model's own
    forward pre-hook has run. A one-shot pre-hook on the first submodule with parameters
    tells `seen` its dtype when autocast is on there. Returns the hook's handle, or None when
    the model has no such submodule."""
    inner = next((m for m in model.modules()
                  if m is not model and next(m.parameters(recurse=False), None) is not None),
                 None)
    if inner is None:
        return None

    def once(module: nn.Module, args: Any) -> None:
        handle.remove()
        try:
            dtype = autocast_dtype(device)
        except Exception:  # noqa: BLE001 - the watcher's failure never stops the training
            return
        if dtype is not None:
            seen(dtype)

    handle = inner.register_forward_pre_hook(once)
    return handle

