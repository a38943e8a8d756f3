"""Time per module (docs/WATCH.md, "Time per module"): the forward and backward time of the
model's modules cut at a depth, from hooks, without a profiler. Off unless asked.

Which modules: those whose path has `depth` names, and shallower ones with no submodules
(`embed`, `head`): the modules a cut at `depth` leaves as leaves. They do not nest, so their
times within a phase add up to no more than the phase.

How a call is timed, with the step's clock (host time, or CUDA events on a GPU):
- forward: a mark in the module's forward pre-hook and one in its forward hook;
- backward: a mark when autograd reaches the node that made the module's output (a prehook
  on that node), and one when it reaches the node that made its input, or, for a module
  whose inputs come from no node (token ids), when its last parameter's gradient has been
  accumulated. These are hooks on autograd's own nodes, added for the call and removed when
  they fire: unlike `register_full_backward_hook`, they add nothing to the graph, so a
  script's in-place ops on a module's output are unaffected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn
from torch.autograd.graph import Node
from torch.utils.hooks import RemovableHandle

from ._clocks import Clock
from ._steps import OpenStep


def frontier(model: nn.Module, depth: int) -> list[tuple[str, nn.Module]]:
    """The modules a cut at `depth` leaves as leaves, in model order, with their paths."""
    out = []
    for path, module in model.named_modules():
        if not path:
            continue
        names = path.count(".") + 1
        if names == depth or (names < depth and next(module.children(), None) is None):
            out.append((path, module))
    return out


def _first_node(value: Any) -> Node | None:
    """The autograd node of the first tensor in a module's inputs or outputs that has one."""
    if isinstance(value, torch.Tensor):
        return value.grad_fn
    items = value.values() if isinstance(value, dict) else value
    if isinstance(items, (list, tuple)) or isinstance(value, dict):
        for item in items:
            node = _first_node(item)
            if node is not None:
                return node
    return None


def _accumulate_node(module: nn.Module) -> Node | None:
    """The AccumulateGrad node of the module's last parameter that trains, if any: where a
    module whose inputs come from no node (token ids) ends its backward."""
    params = [p for p in module.parameters() if p.requires_grad]
    if not params:
        return None
    node = params[-1].view_as(params[-1]).grad_fn
    assert node is not None  # a view of a parameter that trains, with gradients on
    return node.next_functions[0][0]


class ModuleTimer:
    """The hooks of one run's module timing, and the per-step sums they lead to."""

    def __init__(self, model: nn.Module, depth: int, clock: Callable[[], Clock],
                 open_step: Callable[[], OpenStep | None]) -> None:
        self.depth = depth
        self._clock = clock
        self._open_step = open_step
        timed = frontier(model, depth)
        self.names = [path for path, _ in timed]
        self._handles: list[RemovableHandle] = []
        self._forward_start: dict[int, list[object]] = {}
        # Kept, so that each call finds the same node (a parameter's accumulator lives as
        # long as something holds it).
        self._accumulators: dict[int, Node | None] = {}
        for index, (_, module) in enumerate(timed):
            self._handles.append(module.register_forward_pre_hook(self._pre(index)))
            self._handles.append(module.register_forward_hook(self._post(index)))
            self._accumulators[index] = _accumulate_node(module)
        n = len(self.names)
        self.sums = {"forward": [0.0] * n, "backward": [0.0] * n}
        self.calls = {"forward": [0] * n, "backward": [0] * n}
        self.steps = 0

    def _pre(self, index: int) -> Callable[..., None]:
        def hook(module: nn.Module, args: Any) -> None:
            step = self._open_step()
            if step is not None and step.phase == "forward" and torch.is_grad_enabled():
                self._forward_start.setdefault(index, []).append(self._clock().mark())
        return hook

    def _post(self, index: int) -> Callable[..., None]:
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            starts = self._forward_start.get(index)
            step = self._open_step()
            if not starts or step is None:
                return
            clock = self._clock()
            step.spans.append((index, "forward", starts.pop(), clock.mark()))
            self._watch_backward(index, args, output, step)
        return hook

    def _watch_backward(self, index: int, args: Any, output: Any, step: OpenStep) -> None:
        """Hooks this call's backward: its output's node starts it, its input's ends it."""
        start_node = _first_node(output)
        if start_node is None:
            return
        end_node = _first_node(args) or self._accumulators[index]
        if end_node is None:
            return
        started: list[object] = []
        handles: list[RemovableHandle] = []

        def begin(grad_outputs: Any) -> None:
            handles.pop(0).remove()
            started.append(self._clock().mark())

        def end(*grads: Any) -> None:
            handles.pop().remove()
            if started:
                step.spans.append((index, "backward", started[0], self._clock().mark()))

        handles.append(start_node.register_prehook(begin))
        if end_node.name().endswith("AccumulateGrad"):
            handles.append(end_node.register_hook(end))  # after the gradient is added
        else:
            handles.append(end_node.register_prehook(end))

    def read(self, step: OpenStep, clock: Clock, measured: bool) -> None:
        """Adds a step's spans to the sums (its marks are readable); called before the
        step's marks are released."""
        if not measured:
            return
        self.steps += 1
        for index, phase, start, end in step.spans:
            self.sums[phase][index] += clock.elapsed_ms(start, end)
            self.calls[phase][index] += 1

    def record(self) -> dict[str, Any]:
        """The run's `module_times`: per module, the mean per measured step."""
        n = max(self.steps, 1)
        return {"depth": self.depth, "steps": self.steps, "modules": [
            {"name": name,
             "forward_ms": self.sums["forward"][i] / n, "backward_ms": self.sums["backward"][i] / n,
             "forward_calls": self.calls["forward"][i] / n,
             "backward_calls": self.calls["backward"][i] / n}
            for i, name in enumerate(self.names)]}

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
