#!/usr/bin/env bash
# Frame time of the lmprof window while a run is in progress and the charts hold up to
# 10,000 steps, under Xvfb with Mesa's software OpenGL (so drawing competes with the
# engine for the same cores). Prints median and p99 of (a) the UI's own work per frame
# (ImGui NewFrame, the views, Render: what the app costs on a machine with a real GPU) and
# (b) the whole frame (events, UI, Mesa's software rasterisation, buffer swap; the frame
# limiter's sleep excluded), idle, during the run, and when the charts held >= 90% of it.
# Usage: bench/gui_frame_time.sh [steps]   (default 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
headless=scripts/headless.sh
steps=${1:-10000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1
start=$(date +%s)
"$headless" 1600x1000 build/app/lmprof --model tiny --ctx 16 --batch 1 \
  --warmup 0 --steps "$steps" --device cpu -q --autorun --exit-when-done \
  --frame-stats "$work/frames.json"
echo "run of $steps steps took $(( $(date +%s) - start )) s (window included)"
.venv/bin/python - "$work/frames.json" "$steps" <<'PY'
import json, statistics, sys
frames = json.load(open(sys.argv[1]))["frames"]
steps = int(sys.argv[2])
def report(name, xs):
    xs = sorted(xs)
    if not xs:
        print(f"{name}: no frames"); return
    p99 = xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]
    print(f"{name}: {len(xs)} frames, median {statistics.median(xs):.2f} ms, "
          f"p99 {p99:.2f} ms, max {xs[-1]:.2f} ms")
for key, what in (("ui_ms", "UI work (NewFrame + views + Render)"),
                  ("ms", "whole frame (with software rasterisation and swap)")):
    print(what)
    report("  idle before the run", [f[key] for f in frames if not f["running"] and f["steps_held"] == 0])
    report("  while running", [f[key] for f in frames if f["running"]])
    report(f"  while running, >= {int(0.9 * steps)} steps held",
           [f[key] for f in frames if f["running"] and f["steps_held"] >= 0.9 * steps])
PY
