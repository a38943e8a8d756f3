"""The watcher's CUDA path on a real GPU (docs/WATCH.md, "What a step records"): a watched
loop never synchronizes the device, the CUDA event phases agree with a synchronized wall
clock, the data phase is the device's idle time between steps, and each phase's allocator
peak is its own. Skipped without a GPU; the GPU check kit's `watch` stage runs this file
(scripts/gpu/check.sh), with pytest or, where the lent machine has none, as a script."""

from __future__ import annotations

import json
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).parent))
import lmprof
from conftest import VOCAB, TinyGPT, loss_of

try:
    import pytest

    cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
except ImportError:  # the kit's python may lack pytest: __main__ below runs the tests
    def cuda(test):  # type: ignore[no-redef]
        return test


def device_batches(count: int, batch: int, ctx: int):
    for _ in range(count):
        tokens = torch.randint(0, VOCAB, (batch, ctx + 1), device="cuda")
        yield tokens[:, :-1], tokens[:, 1:]


@cuda
def test_a_watched_loop_never_synchronizes_the_device() -> None:
    torch.manual_seed(0)
    model = TinyGPT(d=128, layers=2, ctx=64).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    run = lmprof.watch(model, opt, tokens_per_step=8 * 64)
    batches = list(device_batches(20, 8, 64))
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")  # any synchronizing call raises
    try:
        for x, y in batches:
            with run.step():
                loss = loss_of(model, x, y)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                run.log(loss=loss)  # a pinned non-blocking copy, read later
    finally:
        torch.cuda.set_sync_debug_mode(0)
    run.close()  # waits for the last events: outside the debug mode
    assert len(run.steps) == 20
    assert all(s["forward_ms"] > 0 and s["backward_ms"] > 0 for s in run.steps)
    assert all(isinstance(s["loss"], float) for s in run.steps)


@cuda
def test_event_phases_agree_with_a_synchronized_wall_clock() -> None:
    torch.manual_seed(0)
    model = TinyGPT(d=512, heads=8, layers=4, ctx=256).cuda()  # forward of a few ms
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    run = lmprof.watch(model, opt)
    walls: list[tuple[float, float]] = []
    for x, y in device_batches(12, 16, 256):
        with run.step():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            loss = loss_of(model, x, y)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            loss.backward()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            opt.step()
            opt.zero_grad()
        walls.append(((t1 - t0) * 1e3, (t2 - t1) * 1e3))
    run.close()
    for step, (forward_wall, backward_wall) in list(zip(run.steps, walls, strict=True))[5:]:
        # The events sit where the hooks fire: launch overhead either side of the clock.
        assert abs(step["forward_ms"] - forward_wall) <= 0.15 * forward_wall + 0.5, step
        assert abs(step["backward_ms"] - backward_wall) <= 0.15 * backward_wall + 0.5, step


@cuda
def test_the_data_phase_is_the_devices_idle_gap() -> None:
    # A loader that sleeps while the device still runs the previous step is hidden: its
    # time is not the device's. One that the device waits for (the script synchronizes
    # first) is the data phase. The steps then tile the device's timeline.
    torch.manual_seed(0)
    model = TinyGPT(d=1024, heads=8, layers=6, ctx=256).cuda()  # a step of tens of ms
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    batches = list(device_batches(16, 16, 256))
    for synchronize in (False, True):
        run = lmprof.watch(model, opt)
        for x, y in batches:
            if synchronize:
                torch.cuda.synchronize()
            time.sleep(0.005)  # the loader
            with run.step():
                loss_of(model, x, y).backward()
                opt.step()
                opt.zero_grad()
        torch.cuda.synchronize()
        run.close()
        measured = [s for s in run.steps[5:]]
        hidden_or_exposed = [s["data_ms"] for s in measured]
        busy = min(s["forward_ms"] + s["backward_ms"] for s in measured)
        assert busy > 10.0, busy  # the loader's 5 ms fits in one step's kernels
        if synchronize:
            assert all(d >= 5.0 for d in hidden_or_exposed), hidden_or_exposed
        else:
            assert all(d < 1.0 for d in hidden_or_exposed), hidden_or_exposed


class WithScratch(nn.Module):
    """A model whose forward holds a known scratch tensor, so the forward phase's peak is
    at least that much above the others'."""

    def __init__(self, inner: nn.Module, scratch_bytes: int) -> None:
        super().__init__()
        self.inner = inner
        self.scratch_elements = scratch_bytes // 4

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scratch = torch.ones(self.scratch_elements, device=x.device)
        return self.inner(x) + scratch[:1].sum() * 0


@cuda
def test_each_phase_has_its_own_allocator_peak() -> None:
    torch.manual_seed(0)
    scratch = 512 << 20
    model = WithScratch(TinyGPT(d=128, layers=2, ctx=64), scratch).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    run = lmprof.watch(model, opt)
    for x, y in device_batches(8, 8, 64):
        with run.step():
            loss = loss_of(model, x, y)
            loss.backward()
            opt.step()
            opt.zero_grad()
    run.close()
    for step in run.steps[2:]:
        peaks = step["peak_allocated_by_phase"]
        assert peaks["forward"] >= scratch, peaks
        assert peaks["optimizer"] < peaks["forward"] - scratch // 2, peaks
        assert step["peak_allocated_bytes"] >= max(peaks.values())  # data, rest: no peaks


def _cuda_record(folder: Path, ask: Callable[[lmprof.Run], None] = lambda run: None,
                 **options: object) -> tuple[dict, TinyGPT]:
    """Eight steps of the tiny model on CUDA, saved in `folder`, with `ask(run)` made before
    the first (an instrument's request) and `options` given to watch(); the saved run."""
    torch.manual_seed(0)
    model = TinyGPT(d=128, layers=2, ctx=64).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    run = lmprof.watch(model, opt, save=folder / "run.json", **options)  # type: ignore[arg-type]
    ask(run)
    for x, y in device_batches(8, 8, 64):
        with run.step():
            loss_of(model, x, y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    run.close()
    return json.loads((folder / "run.json").read_text())["runs"][0], model


@cuda
def test_the_op_profile_has_each_modules_kernels() -> None:
    with tempfile.TemporaryDirectory() as folder:
        record, _ = _cuda_record(Path(folder), lambda run: run.profile_ops(6))
    profile = record["op_profile"]
    assert profile["headline"]["kind"] == "kernel", profile["notes"]
    kernels = [r for r in profile["rows"] if r["kind"] == "kernel"]
    assert {("forward", "blocks.0.qkv"), ("backward", "blocks.0.qkv")} <= {
        (r["phase"], r["region"]) for r in kernels}
    assert profile["kernel_ms"]["forward"] > 0 and profile["kernel_ms"]["backward"] > 0
    attention = profile["headline"]["attention"]
    assert attention["scores_ms"] > 0 and attention["value_ms"] > 0 and attention["softmax_ms"] > 0


@cuda
def test_a_memory_snapshot_opens_in_memory_viz() -> None:
    from torch.cuda import _memory_viz

    with tempfile.TemporaryDirectory() as folder:
        record, _ = _cuda_record(Path(folder), lambda run: run.memory_snapshot(6))
        snapshot = record["memory_snapshot"]
        assert snapshot["error"] is None and snapshot["entries"] > 0
        with open(snapshot["path"], "rb") as f:
            html = _memory_viz.trace_plot(pickle.load(f))
    assert "<html" in html.lower() or "<script" in html.lower()
    largest = snapshot["largest_allocations"]
    assert largest and largest[0]["bytes"] >= largest[-1]["bytes"] > 0
    assert record["steps"][6].get("memory_snapshot") is True


@cuda
def test_the_cuda_timeline_peaks_hold_the_parameters() -> None:
    with tempfile.TemporaryDirectory() as folder:
        record, model = _cuda_record(Path(folder), memory_hz=500)
    columns = record["memory_columns"]
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    for phase in ("forward", "backward", "optimizer"):
        pairs = zip(columns["allocated"], columns["phase"], strict=True)
        peak = max(a for a, p in pairs if p == phase)
        assert peak >= weights, (phase, peak, weights)
    assert all(r >= a for a, r in zip(columns["allocated"], columns["reserved"], strict=True))


@cuda
def test_module_times_on_cuda_fit_in_their_phase() -> None:
    with tempfile.TemporaryDirectory() as folder:
        record, _ = _cuda_record(Path(folder), lambda run: run.time_modules(2))
    modules = record["module_times"]["modules"]
    measured = [s for s in record["steps"] if not s["warmup"]]
    for phase in ("forward", "backward"):
        whole = sum(s[f"{phase}_ms"] for s in measured) / len(measured)
        assert 0 < sum(m[f"{phase}_ms"] for m in modules) <= whole * 1.01


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        sys.exit(0)
    failed = 0
    for name, test in sorted(globals().items()):
        if name.startswith("test_") and callable(test):
            try:
                test()
                print(f"passed: {name}")
            except Exception as exc:  # noqa: BLE001 - reported, then the next test
                failed += 1
                print(f"FAILED: {name}: {type(exc).__name__}: {exc}")
    sys.exit(1 if failed else 0)
