"""A CUDA memory snapshot from lmprof-cli, read the way a user reads it: Python's pickle
loads it, PyTorch's torch.cuda._memory_viz summarises its segments, walks its trace and
turns it into its HTML pages, and the result
set names the file and the run's largest allocations.

Exits 77 (ctest: skipped) where torch sees no CUDA device.
Usage: check_snapshot.py --cli PATH/lmprof-cli --workdir DIR
"""
import argparse
import json
import pathlib
import pickle
import subprocess
import sys

import torch

SKIP = 77


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("skipped: torch sees no CUDA device")
        sys.exit(SKIP)

    work = pathlib.Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    snap_path = work / "tiny-train.pickle"
    result_path = work / "tiny-train.json"
    for p in (snap_path, result_path):
        p.unlink(missing_ok=True)
    subprocess.run([args.cli, "run", "--model", "tiny", "--ctx", "128", "--batch", "4",
                    "--mode", "train", "--device", "cuda", "--warmup", "1", "--steps", "2",
                    "--memory-snapshot", str(snap_path), "--snapshot-step", "1",
                    "--json", str(result_path), "-q"], check=True)

    with open(snap_path, "rb") as f:
        snapshot = pickle.load(f)
    if not isinstance(snapshot, dict) or "segments" not in snapshot:
        fail(f"not a memory snapshot: top-level keys {list(snapshot)[:10]}")
    traces = snapshot.get("device_traces") or []
    events = sum(len(t) for t in traces)
    if not snapshot["segments"] or events == 0:
        fail(f"empty snapshot: {len(snapshot['segments'])} segments, {events} trace events")
    actions = {e.get("action") for t in traces for e in t}
    if "alloc" not in actions:
        fail(f"no allocation in the trace (actions {sorted(map(str, actions))})")

    # The HTML pages only embed the pickle; segsum and trace walk every segment, block and
    # trace event, so a malformed snapshot fails (or comes out empty) there.
    from torch.cuda import _memory_viz
    summary = _memory_viz.segsum(snapshot)
    if f"segments: {len(snapshot['segments'])}\n" not in summary:
        fail(f"_memory_viz.segsum summarised too little:\n{summary[:500]}")
    text = _memory_viz.trace(snapshot)
    if f"{len(traces[0])} entries" not in text:
        fail(f"_memory_viz.trace did not walk the {len(traces[0])} trace events:\n{text[:500]}")
    pages = {"trace_plot": _memory_viz.trace_plot(snapshot),
             "segment_plot": _memory_viz.segment_plot(snapshot)}
    for name, html in pages.items():
        if not isinstance(html, str) or len(html) < 1000 or "<html" not in html.lower():
            fail(f"_memory_viz.{name} did not produce a page")
        (work / f"{name}.html").write_text(html)

    run = json.loads(result_path.read_text())["runs"][0]
    info = run.get("memory_snapshot") or {}
    if info.get("format") != "cuda-pickle" or pathlib.Path(info.get("path", "")) != snap_path:
        fail(f"result set does not name the pickle: {info}")
    if not info.get("largest_allocations"):
        fail("result set lists no largest allocations (allocator trace tracker)")
    print(f"ok: {len(snapshot['segments'])} segments, {events} trace events, "
          f"{len(info['largest_allocations'])} largest allocations, pages "
          f"{', '.join(f'{k} {len(v)} B' for k, v in pages.items())}")


if __name__ == "__main__":
    main()
