"""The op profile of one watched step (docs/WATCH.md, "Inside your model"): PyTorch's
profiler (Kineto) records the step's ops, and kernels on a GPU; each op is attributed to a
phase and to a region, the module it ran in cut at a chosen depth, and the result is the
result set's `op_profile` record (docs/OP_PROFILE.md), so that lmprof's Ops view, `ops`
subcommand and headline read a user's model as they read the engine's.

How an op finds its region:
- forward: the innermost region range around it on its thread. Regions are ranges this
  module opens around each module's forward (named by its path, `blocks.3.attn`), and the
  script's own `record_function` ranges;
- backward: the region of the forward op that made its autograd node, found by the node's
  sequence number and forward thread (AccumulateGrad nodes: `autograd.accumulate_grad`);
- an op under no region is `unattributed`, never dropped.
"""

from __future__ import annotations

import math
import os
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn as nn
from torch.autograd.profiler import record_function

# The profile's phases are the engine's three; the watcher's other two are folded into them
# as the engine folds the time between its phases: "rest" goes to the phase that ran last
# (to the first phase when it comes before any), and "data" lies outside the profiled step.
PROFILE_PHASES: tuple[str, ...] = ("forward", "backward", "optimizer")
PHASE_RANGE = "lmprof."  # the profiled step's phases are ranges "lmprof.forward", ...
STEP_RANGE = "lmprof.step"
ACCUMULATE_GRAD = "autograd.accumulate_grad"
UNATTRIBUTED = "unattributed"
NODE_PREFIX = "autograd::engine::evaluate_function: "
# The engine's list (isMatmulOp in op_profile.cpp), so that "matmul" means the same in both.
MATMUL_OPS = frozenset({"aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "aten::addbmm",
                        "aten::matmul", "aten::linear", "aten::_scaled_mm"})
SOFTMAX_OPS = frozenset({"aten::softmax", "aten::_softmax", "aten::_safe_softmax",
                         "aten::special_softmax"})
FUSED_ATTENTION = re.compile(r"aten::(_)?scaled_dot_product|flash_attention|efficient_attention")
SOFTMAX_FLOPS_PER_SCORE = 5.0  # max, subtract, exp, sum, divide: the engine's count
MAX_TIMELINE_EVENTS = 60_000  # the engine's bound on a kept timeline (docs/OP_PROFILE.md)
DEFAULT_DEPTH = 3


def optimizer_region(optimizer: torch.optim.Optimizer | None) -> str | None:
    """The optimizer step's region, named as the engine names its own (`optimizer.adamw`):
    the optimizer's class in lower case. None for an unknown optimizer."""
    if optimizer is None:
        return None
    return "optimizer." + type(optimizer).__name__.lower()


def region_name(path: str, depth: int, fold: bool, root: str) -> str:
    """A module's region: its path cut to `depth` names (`blocks.3.attn.q` at depth 3 is
    `blocks.3.attn`), with layer indices folded to `*` when `fold` (`blocks.*.attn`). The
    model itself is its class name."""
    if not path:
        return root
    parts = path.split(".")[:depth]
    if fold:
        parts = ["*" if p.isdigit() else p for p in parts]
    return ".".join(parts)


def unwrapped(model: nn.Module) -> tuple[nn.Module, str]:
    """The user's module inside DDP/FSDP/compile wrappers, and the prefix their paths add."""
    prefix = ""
    for _ in range(8):
        for attr in ("_orig_mod", "module"):
            inner = getattr(model, attr, None)
            if isinstance(inner, nn.Module):
                model, prefix = inner, prefix + attr + "."
                break
        else:
            break
    return model, prefix


@dataclass(frozen=True)
class OpsRequest:
    """`Run.profile_ops()`: which step, how regions are named, and where the trace goes."""

    step: int
    depth: int = DEFAULT_DEPTH
    fold: bool = False
    trace: Path | None = None


class StepProfiler:
    """Profiles one step: started at the step's first mark, told of each phase switch,
    stopped at the step's end, then turned into the `op_profile` record."""

    def __init__(self, request: OpsRequest, model: nn.Module | None,
                 device: torch.device | None) -> None:
        self.request = request
        self._regions: dict[int, str] = {}
        self._root = "model"
        if model is not None:
            inner, prefix = unwrapped(model)
            self._root = type(inner).__qualname__
            for path, module in model.named_modules():
                path = path[len(prefix):] if path.startswith(prefix) else path
                if module is model or module is inner:
                    path = ""
                self._regions[id(module)] = region_name(path, request.depth, request.fold,
                                                        self._root)
        self._open: list[tuple[int, Any]] = []  # (module id, its range), innermost last
        self._phase: Any | None = None
        self._phase_region: Any | None = None
        self._step: Any | None = None
        self._hooks: list[Any] = []
        activities = [torch.profiler.ProfilerActivity.CPU]
        self._cuda = device is not None and device.type == "cuda"
        if self._cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        elif not torch.cuda.is_available():
            # Kineto logs each start and stop, and its failed GPU probe, on stderr: quiet on a
            # machine without a GPU, as the engine is (docs/OP_PROFILE.md), unless set.
            os.environ.setdefault("KINETO_LOG_LEVEL", "6")
        self._profile = torch.profiler.profile(activities=activities, record_shapes=True,
                                               with_flops=True)

    @property
    def cuda(self) -> bool:
        return self._cuda

    def start(self, phase: str, inside: nn.Module | None = None) -> None:
        """Starts recording in `phase`; `inside` is a module whose forward is under way (the
        zero-code mode begins a step in the model's own forward hook)."""
        self._hooks = [
            nn.modules.module.register_module_forward_pre_hook(self._enter),
            nn.modules.module.register_module_forward_hook(self._leave, always_call=True),
        ]
        self._profile.__enter__()
        self._step = record_function(STEP_RANGE).__enter__()
        self.switch(phase)
        if inside is not None:
            self._enter(inside, ())

    def _enter(self, module: nn.Module, args: Any) -> None:
        name = self._regions.get(id(module))
        if name is not None and (not self._open or self._regions[self._open[-1][0]] != name):
            self._open.append((id(module), record_function(name).__enter__()))

    def _leave(self, module: nn.Module, args: Any, output: Any) -> None:
        if self._open and self._open[-1][0] == id(module):
            self._open.pop()[1].__exit__(None, None, None)

    def switch(self, phase: str, region: str | None = None) -> None:
        """Ends the current phase's range and opens `phase`'s, with a region range `region`
        inside it when given (the optimizer's step, which no module's forward covers)."""
        self._close_phase()
        self._phase = record_function(PHASE_RANGE + phase).__enter__()
        if region is not None:
            self._phase_region = record_function(region).__enter__()

    def _close_phase(self) -> None:
        for scope in (self._phase_region, self._phase):
            if scope is not None:
                scope.__exit__(None, None, None)
        self._phase_region = self._phase = None

    def stop(self) -> Any:
        """Ends every range and the profiler; returns its events."""
        for handle in self._hooks:
            handle.remove()
        self._hooks = []
        while self._open:
            self._open.pop()[1].__exit__(None, None, None)
        self._close_phase()
        if self._step is not None:
            self._step.__exit__(None, None, None)
        self._step = None
        self._profile.__exit__(None, None, None)
        return self._profile.events()

    def abandon(self) -> None:
        """Stops without a record (the step raised, or the run is closing)."""
        try:
            self.stop()
        except Exception:  # noqa: BLE001 - nothing to keep either way
            pass

    def write_trace(self) -> tuple[str, str | None]:
        """(the Chrome trace's path, why there is none)."""
        if self.request.trace is None:
            return "", "no trace path: watch(save=...) or profile_ops(trace=...) names one"
        try:
            self._profile.export_chrome_trace(str(self.request.trace))
        except Exception as exc:  # noqa: BLE001 - the profile stands without its trace
            return "", f"{type(exc).__name__}: {exc}"
        return str(self.request.trace), None


# ---------------------------------------------------------------------------------------
# From the profiler's events to the op_profile record


@dataclass
class _Span:
    start: float  # µs, the profiler's clock
    end: float
    name: str
    depth: int = 0


def _numel(shape: Sequence[int]) -> int:
    return math.prod(shape) if shape else 0


def _matmul_output(shapes: Sequence[Sequence[int]]) -> tuple[int, ...] | None:
    """The output shape of a matmul of its first two inputs' shapes (batch dims broadcast)."""
    if len(shapes) < 2 or len(shapes[0]) < 2 or len(shapes[1]) < 2:
        return None
    a, b = list(shapes[0]), list(shapes[1])
    batch_a, batch_b = a[:-2], b[:-2]
    width = max(len(batch_a), len(batch_b))
    batch_a = [1] * (width - len(batch_a)) + batch_a
    batch_b = [1] * (width - len(batch_b)) + batch_b
    return (*(max(x, y) for x, y in zip(batch_a, batch_b, strict=True)), a[-2], b[-1])


def _scores_key(shape: Sequence[int]) -> tuple[int, int, int] | None:
    """A score matrix's (elements, rows, columns) when its last two dims are square: the
    same key for (B, h, T, T) and the (B·h, T, T) of a script that reshapes for bmm."""
    if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] < 2:
        return None
    return _numel(shape), shape[-2], shape[-1]


class _Analysis:
    """One pass over a profiled step's events."""

    def __init__(self, events: Iterable[Any]) -> None:
        self.events = [e for e in events if getattr(e, "device_type", None) is None
                       or str(e.device_type).endswith("CPU")]
        self.notes: list[str] = []
        main = [e for e in self.events if e.name == STEP_RANGE]
        self.main_thread = main[0].thread if main else None
        self.step_start = main[0].time_range.start if main else min(
            (e.time_range.start for e in self.events), default=0.0)
        self.phases = sorted((_Span(e.time_range.start, e.time_range.end, e.name[len(PHASE_RANGE):])
                              for e in self.events
                              if e.thread == self.main_thread and e.name.startswith(PHASE_RANGE)
                              and e.name != STEP_RANGE), key=lambda s: s.start)
        self.phase_starts = [span.start for span in self.phases]
        self.regions: dict[int, list[_Span]] = defaultdict(list)
        self.ops: list[Any] = []
        for e in self.events:
            if e.name.startswith(PHASE_RANGE):
                continue
            if getattr(e, "is_user_annotation", False):
                self.regions[e.thread].append(_Span(e.time_range.start, e.time_range.end, e.name))
            else:
                self.ops.append(e)
        for spans in self.regions.values():
            spans.sort(key=lambda s: (s.start, -s.end))
            _nest(spans)
        self.region_starts = {t: [s.start for s in spans] for t, spans in self.regions.items()}
        self.ops.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
        self.region: dict[int, str] = {}
        self.phase: dict[int, str] = {}
        self._attribute()

    def _innermost(self, op: Any) -> str | None:
        """The innermost region range around the op's start on its thread: of the spans
        that started before it (nested, sorted by start), the last that has not ended."""
        spans = self.regions.get(op.thread)
        if not spans:
            return None
        at = op.time_range.start
        for j in range(bisect_right(self.region_starts[op.thread], at) - 1, -1, -1):
            span = spans[j]
            if at < span.end:
                return span.name
            if span.depth == 0:
                break  # every span before it ended before it began
        return None

    def _phase_at(self, at: float) -> str:
        """The profile phase of a moment: the phase range around it, with "rest" folded into
        the phase that ran last (into the first, before any)."""
        for j in range(max(0, bisect_right(self.phase_starts, at) - 1), -1, -1):
            if self.phases[j].name in PROFILE_PHASES:
                return self.phases[j].name
        return next((s.name for s in self.phases if s.name in PROFILE_PHASES), "forward")

    def _phase_of_span(self, span: _Span) -> str:
        """A phase range's profile phase: its own, or, for "rest", the one it folds into."""
        return span.name if span.name in PROFILE_PHASES else self._phase_at(span.start)

    def _node(self, op: Any) -> Any | None:
        """The autograd node an op of the backward runs in (itself or an ancestor)."""
        e = op
        while e is not None:
            if e.name.startswith(NODE_PREFIX):
                return e
            e = e.cpu_parent
        return None

    def _attribute(self) -> None:
        by_sequence: dict[tuple[int, int], str] = {}
        for op in self.ops:
            phase = self._phase_at(op.time_range.start)
            node = self._node(op) if phase != "forward" else None
            if node is not None:
                if "AccumulateGrad" in node.name:
                    region = ACCUMULATE_GRAD
                else:
                    region = by_sequence.get((node.fwd_thread, node.sequence_nr), UNATTRIBUTED)
                phase = "backward"
            else:
                region = self._innermost(op) or UNATTRIBUTED
                if phase == "forward" and op.sequence_nr >= 0:
                    by_sequence[(op.thread, op.sequence_nr)] = region
            self.region[id(op)] = region
            self.phase[id(op)] = phase

    # --- rows, phase times and the headline -----------------------------------------------

    def phase_ms(self) -> dict[str, float]:
        out = dict.fromkeys(PROFILE_PHASES, 0.0)
        for span in self.phases:
            out[self._phase_of_span(span)] += (span.end - span.start) / 1e3
        return out

    def rows(self) -> tuple[list[dict[str, Any]], dict[str, float]]:
        groups: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        kernel_ms = dict.fromkeys(PROFILE_PHASES, 0.0)

        def add(phase: str, region: str, name: str, kind: str, self_ms: float,
                total_ms: float, flops: float, matmul: bool) -> None:
            row = groups.setdefault((phase, region, name, kind), {
                "phase": phase, "region": region, "name": name, "kind": kind, "calls": 0.0,
                "self_ms": 0.0, "total_ms": 0.0, "flops": 0.0, "matmul": matmul})
            row["calls"] += 1
            row["self_ms"] += self_ms
            row["total_ms"] += total_ms
            row["flops"] += flops

        for op in self.ops:
            phase, region = self.phase[id(op)], self.region[id(op)]
            add(phase, region, op.name, "op", max(0.0, op.self_cpu_time_total) / 1e3,
                op.cpu_time_total / 1e3, float(op.flops or 0), op.name in MATMUL_OPS)
            kernels = getattr(op, "kernels", []) or []
            launcher = _launching_op(op) if kernels else None
            for kernel in kernels:
                ms = kernel.duration / 1e3
                kernel_ms[phase] += ms
                add(phase, region, kernel.name, "kernel", ms, ms, 0.0,
                    launcher is not None and launcher.name in MATMUL_OPS)
        rows = sorted(groups.values(), key=lambda r: (PROFILE_PHASES.index(r["phase"]),
                                                     -r["self_ms"]))
        return rows, kernel_ms

    def attention(self, kind: str) -> dict[str, float]:
        """Softmax against the attention matmuls of the forward pass, found by names and
        shapes: a softmax over square scores, the matmul whose output has the scores'
        shape (QKᵀ) and the matmul whose first input does (P·V)."""
        forward = [op for op in self.ops if self.phase[id(op)] == "forward"]
        softmaxes = [op for op in forward if op.name in SOFTMAX_OPS and not _under(op, SOFTMAX_OPS)
                     and op.input_shapes and _scores_key(op.input_shapes[0])]
        empty = dict.fromkeys(("softmax_ms", "scores_ms", "value_ms", "matmul_ms", "softmax_flops",
                               "scores_flops", "value_flops", "matmul_flops"), 0.0)
        if not softmaxes:
            if any(FUSED_ATTENTION.search(op.name) for op in forward):
                self.notes.append("Attention runs fused (scaled_dot_product_attention): its "
                                  "softmax and matmuls are one op, so they are not timed apart.")
            else:
                self.notes.append("No softmax over square scores was found in the forward pass, "
                                  "so softmax is not compared with the attention matmuls.")
            return empty
        # Per softmax: QKᵀ is the last matmul before it whose output has its shape, P·V the
        # first after it whose first input does (by order, since d_h may equal T).
        matmuls = [op for op in forward if op.name in MATMUL_OPS and not _under(op, MATMUL_OPS)
                   and len(op.input_shapes) >= 2]
        scores, values = [], []
        for softmax in softmaxes:
            key = _scores_key(softmax.input_shapes[0])
            before = [op for op in matmuls if op.time_range.end <= softmax.time_range.start
                      and _scores_key(_matmul_output(op.input_shapes) or ()) == key]
            after = [op for op in matmuls if op.time_range.start >= softmax.time_range.end
                     and _scores_key(op.input_shapes[0]) == key]
            if before and before[-1] not in scores:
                scores.append(before[-1])
            if after and after[0] not in values:
                values.append(after[0])
        if not scores or not values:
            missing = "QKᵀ" if not scores else "P·V"
            self.notes.append(f"A softmax over square scores was found, but no {missing} matmul "
                              "of the same shape, so softmax is not compared with the "
                              "attention matmuls.")
            return empty

        def time(op: Any) -> float:
            return _kernel_ms(op) if kind == "kernel" else float(op.cpu_time_total) / 1e3

        parts = {
            "softmax_ms": sum(time(op) for op in softmaxes),
            "scores_ms": sum(time(op) for op in scores),
            "value_ms": sum(time(op) for op in values),
            "softmax_flops": SOFTMAX_FLOPS_PER_SCORE * sum(_numel(op.input_shapes[0])
                                                         for op in softmaxes),
            "scores_flops": sum(_flops(op) for op in scores),
            "value_flops": sum(_flops(op) for op in values),
        }
        return {**parts, "matmul_ms": parts["scores_ms"] + parts["value_ms"],
                "matmul_flops": parts["scores_flops"] + parts["value_flops"]}

    # --- the timeline ----------------------------------------------------------------------

    def timeline(self, step: int) -> dict[str, Any]:
        threads = sorted({e.thread for e in self.events},
                         key=lambda t: (t != self.main_thread, t))
        lanes = [f"thread {t}" + (" (main)" if t == self.main_thread else "") for t in threads]
        lane_of = {t: i for i, t in enumerate(threads)}
        events: list[dict[str, Any]] = []

        def to_ms(us: float) -> float:
            return (us - self.step_start) / 1e3

        for span in self.phases:
            events.append({"name": span.name, "region": "", "phase": self._phase_of_span(span),
                           "kind": "op", "lane": 0, "depth": 0, "start_ms": to_ms(span.start),
                           "dur_ms": (span.end - span.start) / 1e3, "range": True})
        for thread, spans in self.regions.items():
            for span in spans:
                events.append({"name": span.name, "region": span.name,
                               "phase": self._phase_at(span.start), "kind": "op",
                               "lane": lane_of[thread], "depth": span.depth + 1,
                               "start_ms": to_ms(span.start),
                               "dur_ms": (span.end - span.start) / 1e3, "range": True})
        for op in self.ops:
            event = {"name": op.name, "region": self.region[id(op)], "phase": self.phase[id(op)],
                     "kind": "op", "lane": lane_of[op.thread], "depth": _op_depth(op),
                     "start_ms": to_ms(op.time_range.start),
                     "dur_ms": (op.time_range.end - op.time_range.start) / 1e3}
            if op.flops:
                event["flops"] = float(op.flops)
            shapes = ", ".join(str(list(s)) for s in op.input_shapes or [] if s)
            if shapes:
                event["shapes"] = shapes
            events.append(event)
        if len(events) > MAX_TIMELINE_EVENTS:
            self.notes.append(f"The timeline keeps the step's first {MAX_TIMELINE_EVENTS} "
                              f"events of {len(events)}.")
            events.sort(key=lambda e: e["start_ms"])
            events = events[:MAX_TIMELINE_EVENTS]
        events.sort(key=lambda e: (e["lane"], e["start_ms"]))
        return {"step": step, "lanes": lanes, "events": events}


def _nest(spans: list[_Span]) -> None:
    """Sets each span's depth among the spans of its thread (sorted by start, outer first)."""
    stack: list[_Span] = []
    for span in spans:
        while stack and stack[-1].end <= span.start:
            stack.pop()
        span.depth = len(stack)
        stack.append(span)


def _under(op: Any, names: frozenset[str]) -> bool:
    parent = op.cpu_parent
    while parent is not None:
        if parent.name in names:
            return True
        parent = parent.cpu_parent
    return False


def _op_depth(op: Any) -> int:
    depth, parent = 0, op.cpu_parent
    while parent is not None:
        if not getattr(parent, "is_user_annotation", False):
            depth += 1
        parent = parent.cpu_parent
    return min(depth, 255)


def _descendants(op: Any) -> Iterable[Any]:
    yield op
    for child in op.cpu_children:
        yield from _descendants(child)


def _kernel_ms(op: Any) -> float:
    kernels = (k for e in _descendants(op) for k in (getattr(e, "kernels", []) or []))
    return float(sum(k.duration for k in kernels)) / 1e3


def _flops(op: Any) -> float:
    return float(sum(e.flops or 0 for e in _descendants(op)))


def _launching_op(op: Any) -> Any | None:
    """The innermost aten op at or above a kernel's launch (the launch itself may be a
    runtime call such as cudaLaunchKernel)."""
    e = op
    while e is not None and not e.name.startswith("aten::"):
        e = e.cpu_parent
    return e


def headline(rows: list[dict[str, Any]], totals: dict[str, float],
             attention: dict[str, float], kind: str) -> dict[str, Any]:
    """The seeds' questions answered from the rows of `kind`: the engine's computeHeadline
    (docs/OP_PROFILE.md, "The headline"), with attention found by names and shapes."""

    def share(part: float, whole: float) -> float:
        return part / whole if whole > 0 else 0.0

    by_name: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        if r["kind"] != kind:
            continue
        g = by_name.setdefault((r["phase"], r["name"]), {"phase": r["phase"], "name": r["name"],
                                                         "self_ms": 0.0, "calls": 0.0,
                                                         "matmul": r["matmul"]})
        g["self_ms"] += r["self_ms"]
        g["calls"] += r["calls"]
    ordered = sorted(by_name.values(), key=lambda g: (PROFILE_PHASES.index(g["phase"]),
                                                      -g["self_ms"]))
    forward = totals["forward"]
    top: dict[str, Any] = {"name": "", "region": "", "share": 0.0, "calls": 0.0}
    non_matmul: list[dict[str, Any]] = []
    matmul_forward = matmul_all = 0.0
    for g in ordered:
        if g["matmul"]:
            matmul_all += g["self_ms"]
            matmul_forward += g["self_ms"] if g["phase"] == "forward" else 0.0
        if g["phase"] != "forward":
            continue
        if not top["name"]:
            top = {"name": g["name"], "region": "", "share": share(g["self_ms"], forward),
                   "calls": g["calls"]}
        if not g["matmul"] and len(non_matmul) < 3:
            non_matmul.append({"name": g["name"], "share": share(g["self_ms"], forward)})
    top["region"] = next((r["region"] for r in rows if r["kind"] == kind
                          and r["phase"] == "forward" and r["name"] == top["name"]), "")
    top["share"] = min(1.0, top["share"])

    def ratio(a: float, b: float) -> float | None:
        return a / b if b > 0 else None

    return {
        "kind": kind,
        "top_forward": top,
        "matmul_forward_share": min(1.0, share(matmul_forward, forward)),
        "matmul_step_share": min(1.0, share(matmul_all, sum(totals.values()))),
        "top_non_matmul_forward": [{**i, "share": min(1.0, i["share"])} for i in non_matmul],
        "attention": {**attention,
                      "time_ratio": ratio(attention["softmax_ms"], attention["matmul_ms"]),
                      "flop_ratio": ratio(attention["softmax_flops"], attention["matmul_flops"])},
    }


def op_profile(events: Iterable[Any], request: OpsRequest, *, cuda: bool, trace: str,
               trace_error: str | None) -> dict[str, Any]:
    """The result set's `op_profile` record of one profiled step (docs/OP_PROFILE.md)."""
    analysis = _Analysis(events)
    rows, kernel_ms = analysis.rows()
    phase_ms = analysis.phase_ms()
    kind = "kernel" if any(r["kind"] == "kernel" for r in rows) else "op"
    if cuda and kind == "op":
        analysis.notes.append("The profiler recorded no GPU kernels (CUPTI missing or busy): "
                              "the profile is of CPU ops.")
    unattributed = dict.fromkeys(PROFILE_PHASES, 0.0)
    for r in rows:
        if r["kind"] == kind and r["region"] == UNATTRIBUTED:
            unattributed[r["phase"]] += r["self_ms"]
    totals = kernel_ms if kind == "kernel" else phase_ms
    top = headline(rows, totals, analysis.attention(kind), kind)
    timeline = analysis.timeline(request.step)
    return {
        "first_step": request.step,
        "step_count": 1,
        "trace": trace or None,
        "trace_error": trace_error,
        "phase_ms": phase_ms,
        "kernel_ms": kernel_ms,
        "unattributed_ms": unattributed,
        "headline": top,
        "notes": analysis.notes,
        "rows": rows,
        "timeline": timeline,
    }
