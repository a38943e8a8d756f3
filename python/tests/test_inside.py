"""Inside a watched model (docs/WATCH.md, "Inside your model"): the op profile of one step
by module, the memory timeline and snapshot, on the small Transformer written in
conftest.py (not the engine's). The CUDA side is in test_gpu.py."""

from __future__ import annotations

import json
import math
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import lmprof
from conftest import BATCH, CTX, VOCAB, Block, TinyGPT, batches, loss_of, train_steps
from lmprof import _timeline

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
    # The optimizer's step is named as the engine names its own, so regions compare.
    assert ("optimizer", "optimizer.adamw") in regions
    assert ("optimizer", "unattributed") not in regions
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


def test_the_optimizer_region_ends_with_its_step(model: TinyGPT, tmp_path: Path) -> None:
    """Work after opt.step() (here a plain op outside any range) is the optimizer phase's, by
    the engine's rule for time between phases, but not the optimizer's region."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    save = tmp_path / "run.json"
    run = lmprof.watch(model, opt, save=save)
    run.profile_ops(3)
    for x, y in batches(5):
        with run.step():
            loss_of(model, x, y).backward()
            opt.step()
            torch.full((64,), 2.0).cumprod(0)  # after the step: not the optimizer's work
            opt.zero_grad()
    run.close()
    rows = json.loads(save.read_text())["runs"][0]["op_profile"]["rows"]
    cumprod = {(r["phase"], r["region"]) for r in rows if r["name"] == "aten::cumprod"}
    assert cumprod == {("optimizer", "unattributed")}
    assert any(r["region"] == "optimizer.adamw" for r in rows)


def test_softmax_and_the_attention_matmuls_are_found_by_names_and_shapes(
        model: TinyGPT, tmp_path: Path) -> None:
    profile = profiled(model, tmp_path)["op_profile"]
    attention = profile["headline"]["attention"]
    scores = BATCH * HEADS * CTX * CTX * LAYERS
    assert attention["softmax_flops"] == 5 * scores
    # QKᵀ and P·V: 2·T·d_h multiply-adds per score each, as the profiler counts them.
    assert attention["matmul_flops"] == 2 * 2 * scores * (D // HEADS)
    assert attention["softmax_ms"] > 0 and attention["matmul_ms"] > 0
    ratio = attention["softmax_ms"] / attention["matmul_ms"]
    assert attention["time_ratio"] == pytest.approx(ratio)
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
    with pytest.raises(ValueError, match=r"^step:"):
        run.profile_ops(-1)
    with pytest.raises(ValueError, match=r"^depth:"):
        run.profile_ops(3, depth=0)
    with pytest.raises(ValueError, match=r"^trace:"):
        run.profile_ops(3, trace="/no/such/folder/t.json")
    train_steps(run, model, opt, 2)
    with pytest.raises(ValueError, match="already begun"):
        run.profile_ops(1)
    run.close()
    assert math.isfinite(run.summary()["total_ms"]["mean"])


def test_the_memory_timeline_has_each_phase_with_its_peaks(model: TinyGPT, tmp_path: Path) -> None:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    save = tmp_path / "run.json"
    run = lmprof.watch(model, opt, save=save, memory_hz=200)
    train_steps(run, model, opt, 6)
    run.close()
    assert not any(t.name == "lmprof-memory" for t in threading.enumerate())  # joined
    (record,) = json.loads(save.read_text())["runs"]
    columns = record["memory_columns"]
    assert record["config"]["sample_hz"] == 200
    n = len(columns["t_ms"])
    assert all(len(values) == n for values in columns.values())
    assert columns["t_ms"] == sorted(columns["t_ms"])
    assert set(columns["step"]) == set(range(6)) and set(columns["phase"]) == {
        "forward", "backward", "optimizer"}
    # A boundary sample at each step's start and at each phase's end: at least 4 a step.
    assert sum(columns["boundary"]) >= 4 * 6
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    for phase in ("forward", "backward", "optimizer"):
        pairs = zip(columns["allocated"], columns["phase"], strict=True)
        peak = max(a for a, p in pairs if p == phase)
        assert peak >= weights  # on a CPU, the resident set
    assert record["sampler_cpu_ms"] >= 0 and "sampler_error" not in record


def test_no_instrument_runs_unless_asked(model: TinyGPT, tmp_path: Path) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    train_steps(run, model, opt, 3)
    assert not any(t.name == "lmprof-memory" for t in threading.enumerate())
    run.close()
    record = run.result_set()["runs"][0]
    for key in ("memory_columns", "op_profile", "memory_snapshot", "module_times"):
        assert key not in record
    assert "sample_hz" not in record["config"]


def test_a_cpu_snapshot_says_why_there_is_none(model: TinyGPT, tmp_path: Path) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt, save=tmp_path / "run.json")
    run.memory_snapshot(2)
    train_steps(run, model, opt, 4)
    run.close()
    (record,) = json.loads((tmp_path / "run.json").read_text())["runs"]
    assert "trains on cpu" in record["memory_snapshot"]["error"]
    assert not any(s.get("memory_snapshot") for s in record["steps"])  # nothing perturbed


def test_largest_allocations_come_largest_first_with_their_lifetimes() -> None:
    events = [{"action": "alloc", "addr": 1, "size": 100, "time_us": 0},
              {"action": "alloc", "addr": 2, "size": 300, "time_us": 1000},
              {"action": "free_requested", "addr": 1, "size": 100, "time_us": 5000},
              {"action": "free_completed", "addr": 1, "size": 100, "time_us": 5001},
              {"action": "alloc", "addr": 1, "size": 200, "time_us": 6000}]
    largest = _timeline.largest_allocations(events)
    assert [(a["bytes"], a["lifetime_ms"]) for a in largest] == [(300, -1.0), (200, -1.0),
                                                                  (100, 5.0)]


def test_bad_instrument_requests_name_the_argument(model: TinyGPT) -> None:
    with pytest.raises(ValueError, match=r"^memory_hz:"):
        lmprof.watch(model, memory_hz=-1)
    with pytest.raises(ValueError, match=r"^memory_hz:"):
        lmprof.watch(model, memory_hz=float("nan"))
    run = lmprof.watch(model)
    with pytest.raises(ValueError, match=r"^path:"):
        run.memory_snapshot(3)  # no save to put it beside
    run.profile_ops(3)
    with pytest.raises(ValueError, match="another instrument"):
        run.memory_snapshot(3, path="snap.pickle")
    with pytest.raises(ValueError, match=r"^max_entries:"):
        run.memory_snapshot(4, path="snap.pickle", max_entries=0)
    run.close()


def test_module_times_fit_in_their_phase(model: TinyGPT, tmp_path: Path) -> None:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    run = lmprof.watch(model, opt)
    run.time_modules(depth=2)
    train_steps(run, model, opt, 9)
    run.close()
    record = run.result_set()["runs"][0]
    times = record["module_times"]
    assert times["depth"] == 2 and times["steps"] == 4
    # The cut at depth 2: the blocks, and the leaves above them; ModuleList is not a call.
    assert [m["name"] for m in times["modules"]] == ["embed", "blocks.0", "blocks.1", "norm",
                                                      "head"]
    assert all(m["forward_calls"] == 1 and m["backward_calls"] == 1 for m in times["modules"])
    measured = [s for s in record["steps"] if not s["warmup"]]
    for phase in ("forward", "backward"):
        whole = sum(s[f"{phase}_ms"] for s in measured) / len(measured)
        parts = sum(m[f"{phase}_ms"] for m in times["modules"])
        assert 0 < parts <= whole, (phase, parts, whole)
        assert all(m[f"{phase}_ms"] > 0 for m in times["modules"])


def test_module_times_count_micro_batches_and_leave_in_place_ops_alone(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(inplace=True), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    run.time_modules(depth=1)
    for _ in range(7):
        with run.step():
            for _ in range(3):  # ReLU(inplace) changes Linear's output: no hook may object
                model(torch.randn(4, 8)).sum().backward()
            opt.step()
            opt.zero_grad()
    run.close()
    times = run.result_set()["runs"][0]["module_times"]["modules"]
    assert [m["name"] for m in times] == ["0", "1", "2"]
    assert all(m["forward_calls"] == 3 for m in times)
    assert times[0]["backward_calls"] == 3 and times[0]["backward_ms"] > 0


REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "reference"


def test_a_cs336_model_has_its_dimensions_found(tmp_path: Path) -> None:
    import sys
    sys.path.insert(0, str(REFERENCE))
    from reference_model import TransformerLM, lm_loss

    torch.manual_seed(0)
    model = TransformerLM(64, 256, 2, 4, 500)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    run = lmprof.watch(model, opt)
    for _ in range(2):
        with run.step():
            x = torch.randint(0, 500, (3, 16))
            lm_loss(model(x), x).backward()
            opt.step()
    run.close()
    source = run.result_set()["runs"][0]["source"]
    assert source["model"] == {"vocab_size": 500, "d_model": 64, "num_layers": 2, "num_heads": 4,
                               "d_ff": 256, "context_length": 16, "batch_size": 3,
                               "rope_theta": 10000.0, "from": "detected"}


def test_another_model_is_said_not_guessed_unless_stated(model: TinyGPT) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    train_steps(run, model, opt, 2)
    run.close()
    source = run.result_set()["runs"][0]["source"]
    assert "model" not in source and "CS336 architecture" in source["model_note"]
    stated = lmprof.watch(model, opt, config={"d_ff": 256})
    train_steps(stated, model, opt, 2)
    stated.close()
    shape = stated.result_set()["runs"][0]["source"]["model"]
    assert shape["from"] == "stated" and shape["d_ff"] == 256 and shape["context_length"] == CTX
    with pytest.raises(ValueError, match=r"^config: 'd_modl' is not a dimension"):
        lmprof.watch(model, config={"d_modl": 64})
    with pytest.raises(ValueError, match=r"^config: num_heads: expected a positive int"):
        lmprof.watch(model, config={"num_heads": 0})
