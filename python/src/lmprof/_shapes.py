"""The CS336 shapes of a watched model (docs/WATCH.md, "Against the reference"): the
dimensions lmprof's engine needs to run its own Transformer at the same size, found from
the model's parameters and the first batch, or stated by the script (`watch(config=...)`).

A model has the CS336 architecture's shapes when its parameter count is the architecture's
for the dimensions found: token embeddings (V, d), per layer four d×d attention
projections, a SwiGLU of three d×d_ff matrices and two norms, a final norm, and an untied
head (V, d)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch
import torch.nn as nn

# What the engine's configuration needs, as the result set names it (docs/RESULTS.md).
KEYS = ("vocab_size", "d_model", "num_layers", "num_heads", "d_ff", "context_length",
        "batch_size")
HEAD_ATTRIBUTES = ("num_heads", "n_heads", "n_head", "heads", "nhead", "num_attention_heads")
THETA_ATTRIBUTES = ("rope_theta", "theta")
DEFAULT_THETA = 10000.0
# Where a model called with keywords (Hugging Face's) takes its token ids.
TOKEN_KEYWORDS = ("input_ids", "idx", "tokens", "x")


def first_input(args: Any, kwargs: dict[str, Any] | None) -> torch.Tensor | None:
    """The shape and dtype of a forward's first input (its first positional tensor, else a
    keyword's: `input_ids` first), as a tensor on the meta device: it holds no data."""
    found = args[0] if args and isinstance(args[0], torch.Tensor) else None
    if found is None and kwargs:
        named = [kwargs.get(k) for k in TOKEN_KEYWORDS] + list(kwargs.values())
        found = next((t for t in named if isinstance(t, torch.Tensor)), None)
    return None if found is None else torch.empty(found.shape, dtype=found.dtype, device="meta")


def tokens_per_step(given: int | None, batch: torch.Tensor | None, micro_batches: int,
                    most: int) -> tuple[int | None, str | None]:
    """Tokens a step trains on: as given, else the first batch's (batch, context) token ids
    times the first step's micro-batches; else None and why."""
    if given is not None or batch is None:
        return given, None if given is not None else "no batch seen yet"
    if batch.dim() == 2 and not batch.dtype.is_floating_point and not batch.is_complex():
        tokens = batch.shape[0] * batch.shape[1] * max(1, micro_batches)
        return (tokens, None) if 0 < tokens <= most else (None, f"{tokens} is out of range")
    return None, (f"the model's first input is a {str(batch.dtype).replace('torch.', '')} "
                  f"tensor of shape {tuple(batch.shape)}, not (batch, context) token ids: "
                  "give tokens_per_step (LMPROF_TOKENS_PER_STEP, --tokens-per-step)")


def check_stated(config: Any) -> dict[str, Any]:
    """`watch(config=...)`: the keys it may state, each a positive int (rope_theta a number)."""
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ValueError(f"config: expected a dict of the model's dimensions, got "
                         f"{type(config).__name__}")
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key == "rope_theta":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"config: rope_theta: expected a positive number, got {value!r}")
            out[key] = float(value)
        elif key in KEYS:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"config: {key}: expected a positive int, got {value!r}")
            out[key] = value
        else:
            raise ValueError(f"config: {key!r} is not a dimension lmprof knows (it knows "
                             f"{', '.join((*KEYS, 'rope_theta'))})")
    return out


def cs336_parameters(v: int, d: int, layers: int, d_ff: int) -> int:
    return 2 * v * d + layers * (4 * d * d + 3 * d * d_ff + 2 * d) + d


def _layers(model: nn.Module) -> nn.ModuleList | None:
    """The longest ModuleList of one class: the repeated blocks."""
    best: nn.ModuleList | None = None
    for module in model.modules():
        if isinstance(module, nn.ModuleList) and len(module) > 0 and \
                len({type(m) for m in module}) == 1 and (best is None or len(module) > len(best)):
            best = module
    return best


def _attribute(module: nn.Module, names: tuple[str, ...]) -> Any | None:
    for m in module.modules():
        for name in names:
            value = getattr(m, name, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return value
    return None


def _embedding(model: nn.Module) -> torch.Tensor | None:
    for module in model.modules():
        if isinstance(module, nn.Embedding) or "Embedding" in type(module).__name__:
            weight = getattr(module, "weight", None)
            if isinstance(weight, torch.Tensor) and weight.dim() == 2:
                return weight
    return None


def _d_ff(block: nn.Module, d: int) -> int | None:
    """The feed-forward width: the other side of the block's matrices that are not d×d."""
    widths: Counter[int] = Counter()
    for p in block.parameters():
        if p.dim() == 2 and d in p.shape and tuple(p.shape) != (d, d):
            other = p.shape[0] if p.shape[1] == d else p.shape[1]
            if other != 3 * d:  # a fused QKV projection
                widths[int(other)] += 1
    return widths.most_common(1)[0][0] if widths else None


def detect(model: nn.Module, tokens: torch.Tensor | None) -> tuple[dict[str, Any], list[str]]:
    """The dimensions found, and what could not be found (each a reason)."""
    found: dict[str, Any] = {}
    missing: list[str] = []
    embedding = _embedding(model)
    if embedding is None:
        missing.append("no token embedding (a 2-D weight of an Embedding)")
    else:
        found["vocab_size"], found["d_model"] = int(embedding.shape[0]), int(embedding.shape[1])
    layers = _layers(model)
    if layers is None:
        missing.append("no ModuleList of repeated blocks")
    else:
        found["num_layers"] = len(layers)
        heads = _attribute(layers[0], HEAD_ATTRIBUTES)
        if heads is None:
            missing.append(f"no attribute with the number of heads ({', '.join(HEAD_ATTRIBUTES)})")
        else:
            found["num_heads"] = int(heads)
        if "d_model" in found:
            d_ff = _d_ff(layers[0], found["d_model"])
            if d_ff is None:
                missing.append("no feed-forward matrix in the first block")
            else:
                found["d_ff"] = d_ff
        theta = _attribute(layers[0], THETA_ATTRIBUTES)
        found["rope_theta"] = float(theta) if theta is not None else DEFAULT_THETA
    if tokens is None or tokens.dim() != 2 or tokens.is_floating_point():
        missing.append("the first batch is not a (batch, context) tensor of token ids")
    else:
        found["batch_size"], found["context_length"] = int(tokens.shape[0]), int(tokens.shape[1])
    return found, missing


def model_block(model: nn.Module, tokens: torch.Tensor | None,
                stated: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The run's `source.model` (or None) and, when there is none, why."""
    found, missing = detect(model, tokens)
    shape = {**found, **stated}
    absent = [key for key in KEYS if key not in shape]
    if absent:
        reasons = "; ".join(missing) or "not found"
        return None, f"the model's {', '.join(absent)} could not be found ({reasons}): state " \
                     f"them with lmprof.watch(config={{...}})"
    if shape["d_model"] % shape["num_heads"]:
        return None, (f"d_model {shape['d_model']} is not a multiple of num_heads "
                      f"{shape['num_heads']}")
    parameters = sum(p.numel() for p in model.parameters())
    expected = cs336_parameters(shape["vocab_size"], shape["d_model"], shape["num_layers"],
                                shape["d_ff"])
    if parameters != expected and not stated:
        return None, (f"the model has {parameters} parameters, where the CS336 architecture at "
                      f"these dimensions has {expected}: not the same model (state the "
                      f"dimensions with watch(config=...) to compare anyway)")
    block = {key: shape[key] for key in (*KEYS, "rope_theta") if key in shape}
    block["from"] = "stated" if stated else "detected"
    return block, None


class FirstBatch:
    """What a run learns from its first training batch: tokens per step (unless given) and
    the model's CS336 shape (unless stated), each with why when it cannot be found."""

    def __init__(self, tokens_per_step: int | None, config: dict[str, Any] | None,
                 most: int) -> None:
        self._given = tokens_per_step
        self._stated = check_stated(config)  # ValueError naming the key
        self._most = most
        self.tensor: torch.Tensor | None = None  # its shape and dtype (meta device)
        self._micro_batches = 0  # the first step's
        self._shape: tuple[dict[str, Any] | None, str | None] | None = None

    def note(self, args: Any, kwargs: dict[str, Any] | None) -> None:
        """A training forward's inputs: the first one's are kept."""
        if self.tensor is None:
            self.tensor = first_input(args, kwargs)

    def step_ended(self, micro_batches: int) -> None:
        self._micro_batches = self._micro_batches or micro_batches

    def tokens(self) -> tuple[int | None, str | None]:
        return tokens_per_step(self._given, self.tensor, self._micro_batches, self._most)

    def source(self, model: nn.Module | None) -> dict[str, Any]:
        """The source block's `tokens_per_step` (and `tokens_note`), and its `model` (the
        CS336 dimensions) or `model_note` once the first batch has been seen; `model`
        unwrapped (DDP, compile)."""
        tokens, why = self.tokens()
        record: dict[str, Any] = {"tokens_per_step": tokens}
        record.update({"tokens_note": why} if why else {})
        if model is None or self.tensor is None:
            return record
        if self._shape is None:
            self._shape = model_block(model, self.tensor, self._stated)
        block, note = self._shape
        return {**record, **({"model": block} if block is not None else {"model_note": note})}
