"""What the watcher learns of the user's model: the device it is on, its class inside the
wrappers PyTorch puts around it, and how many graphs torch.compile has made."""

from __future__ import annotations

import sys
from typing import Optional

import torch
import torch.nn as nn


def device_of(model: Optional[nn.Module]) -> Optional[torch.device]:
    if model is None:
        return None
    for tensor in model.parameters():
        return tensor.device
    for tensor in model.buffers():
        return tensor.device
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
