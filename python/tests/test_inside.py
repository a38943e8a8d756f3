"""Inside a watched model (docs/WATCH.md, "Inside your model"): the op profile of one step
by module, on the small Transformer written in conftest.py (not the engine's)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import lmprof
from conftest import BATCH, CTX, VOCAB, Block, TinyGPT, batches, loss_of, train_steps

HEADS, LAYERS, D = 4, 2, 64


def profiled(model: nn.Module, tmp_path: Path, steps: int = 8, **options: Any) -> dict[str, Any]:
    """Trains `steps` steps with step 6 profiled; returns the saved run."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    save = tmp_path / "run.json"
    run = lmprof.watch(model, opt, save=save)
    run.profile_ops(6, **options)
    train_steps(run, model, opt, steps)
    run.close()
    (record,) = json.loads(save.read_text())["runs"]
    return record


def self_ms_by(rows: list[dict[str, Any]], *keys: str) -> dict[tuple[str, ...], float]:
    out: dict[tuple[str, ...], float] = defaultdict(float)
    for row in rows:
        out[tuple(row[k] for k in keys)] += row["self_ms"]
    return out


def test_every_op_of_the_step_lands_in_a_module_region(model: TinyGPT, tmp_path: Path) -> None:
    record = profiled(model, tmp_path)
    profile = record["op_profile"]
    assert record["config"]["op_profile"]["first_step"] == 6
    # The profiled step is flagged and left out of the statistics: 5 warmup, 3 measured.
    assert [s.get("op_profiled", False) for s in record["steps"]] == [False] * 6 + [True, False]
    assert record["summary"]["total_ms"]["n"] == 2
    regions = {(r["phase"], r["region"]) for r in profile["rows"]}
    for layer in range(LAYERS):
        for part in ("qkv", "proj", "norm1", "mlp"):
            # Forward in the module; backward by the autograd node's forward op.
            assert ("forward", f"blocks.{layer}.{part}") in regions
            assert ("backward", f"blocks.{layer}.{part}") in regions
        assert ("forward", f"blocks.{layer}") in regions  # attention's math in Block.forward
    assert ("forward", "embed") in regions and ("forward", "head") in regions
    assert ("backward", "autograd.accumulate_grad") in regions
    assert ("optimizer", "Optimizer.step#AdamW.step") in regions  # PyTorch's own range
    # Depth 3 cuts blocks.0.mlp.0 to blocks.0.mlp.
    assert not any(region.count(".") > 2 for _, region in regions)
    # Each op is counted once, by its self time: a phase's ops fit in its wall time.
    for phase, ms in self_ms_by([r for r in profile["rows"] if r["kind"] == "op"],
                                "phase").items():
        assert 0 < ms <= profile["phase_ms"][phase[0]] * 1.001, (phase, ms)
    # Matmuls in the backward of a Linear are the Linear's.
    mm = self_ms_by(profile["rows"], "phase", "region", "name")
    assert mm[("backward", "blocks.0.qkv", "aten::mm")] > 0
    assert profile["unattributed_ms"]["forward"] < profile["phase_ms"]["forward"]


def test_softmax_and_the_attention_matmuls_are_found_by_names_and_shapes(
        model: TinyGPT, tmp_path: Path) -> None:
    profile = profiled(model, tmp_path)["op_profile"]
    attention = profile["headline"]["attention"]
    scores = BATCH * HEADS * CTX * CTX * LAYERS
    assert attention["softmax_flops"] == 5 * scores
    # QKᵀ and P·V: 2·T·d_h multiply-adds per score each, as the profiler counts them.
    assert attention["matmul_flops"] == 2 * 2 * scores * (D // HEADS)
    assert attention["softmax_ms"] > 0 and attention["matmul_ms"] > 0
    assert attention["time_ratio"] == pytest.approx(attention["softmax_ms"] / attention["matmul_ms"])
    assert attention["flop_ratio"] == pytest.approx(5 / (4 * (D // HEADS)))
    headline = profile["headline"]
    assert headline["kind"] == "op" and headline["top_forward"]["name"].startswith("aten::")
    assert 0 < headline["matmul_forward_share"] <= 1
    assert profile["notes"] == []


class FusedBlock(Block):
    """The same block with PyTorch's fused attention."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        y = F.scaled_dot_product_attention(*(z.transpose(1, 2) for z in (q, k, v)), is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


def test_fused_attention_is_said_not_guessed(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = TinyGPT(vocab=VOCAB, ctx=CTX)
    model.blocks = nn.ModuleList(FusedBlock(D, HEADS) for _ in range(LAYERS))
    profile = profiled(model, tmp_path)["op_profile"]
    attention = profile["headline"]["attention"]
    assert attention["time_ratio"] is None and attention["softmax_ms"] == 0
    assert any("fused" in note for note in profile["notes"])


def test_fold_depth_and_the_scripts_own_ranges_make_the_regions(model: TinyGPT,
                                                                 tmp_path: Path) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    run.profile_ops(2, depth=2, fold=True)
    for x, y in batches(4):
        with run.step():
            with torch.profiler.record_function("my.loss"):
                loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
            loss.backward()
            opt.step()
    run.close()
    profile = run.result_set()["runs"][0]["op_profile"]
    regions = {r["region"] for r in profile["rows"] if r["phase"] == "forward"}
    assert "blocks.*" in regions and not any(r.startswith("blocks.0") for r in regions)
    assert "my.loss" in regions  # the loss, outside the model, in the script's own range
    by_op = self_ms_by(profile["rows"], "region", "name")
    assert by_op[("my.loss", "aten::_log_softmax")] > 0


def test_the_trace_opens_as_chrome_trace_json(model: TinyGPT, tmp_path: Path) -> None:
    record = profiled(model, tmp_path)
    trace = Path(record["op_profile"]["trace"])
    assert trace == tmp_path / "run.TinyGPT.trace.json"
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e.get("name") for e in events}
    assert {"lmprof.step", "lmprof.forward", "lmprof.backward", "blocks.0.qkv"} <= names
    timeline = record["op_profile"]["timeline"]
    assert timeline["step"] == 6 and timeline["lanes"][0].endswith("(main)")
    starts = [e["start_ms"] for e in timeline["events"] if e["lane"] == 0]
    assert starts == sorted(starts) and all(e["dur_ms"] >= 0 for e in timeline["events"])


def test_bad_requests_name_the_argument(model: TinyGPT) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    with pytest.raises(ValueError, match="^step:"):
        run.profile_ops(-1)
    with pytest.raises(ValueError, match="^depth:"):
        run.profile_ops(3, depth=0)
    with pytest.raises(ValueError, match="^trace:"):
        run.profile_ops(3, trace="/no/such/folder/t.json")
    train_steps(run, model, opt, 2)
    with pytest.raises(ValueError, match="already begun"):
        run.profile_ops(1)
    run.close()
    assert math.isfinite(run.summary()["total_ms"]["mean"])
