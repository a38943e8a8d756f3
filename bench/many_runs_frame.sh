#!/usr/bin/env bash
# The window with a night's sweep (issue 43): opens FILE through File › Open (its reading on
# a thread behind a progress bar), selects the last N of its runs, and keeps them on screen
# for a few seconds, at 1920x1080 under Xvfb with Mesa's software OpenGL. Prints the frame
# times with the N runs selected (the UI's own work, and the whole frame with rasterisation
# and swap: median and p99), how long the process took, and its peak RSS against the file.
#   bench/many_runs_frame.sh FILE N     e.g. a set of bench/big_sets.sh (LMPROF_BIG_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
headless=scripts/headless.sh
file=$(realpath "$1")
count=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/demo.json" <<JSON
{"lmprof_demo": 1, "steps": [
  {"do": "open", "path": "$file"},
  {"do": "wait", "for": "open", "timeout_s": 600},
  {"do": "select", "last": $count},
  {"do": "pause", "seconds": 6},
  {"do": "screenshot", "path": "$work/shot.png"}
]}
JSON
export LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1
/usr/bin/time -f "%e %M" -o "$work/time" "$headless" 1920x1080 \
  build/app/lmprof --window-size 1920x1080 --demo "$work/demo.json" --exit-when-done \
  --frame-stats "$work/frames.json" > "$work/out" 2>&1 || { cat "$work/out"; exit 1; }
[ -z "${KEEP_SHOT:-}" ] || cp "$work/shot.png" "$KEEP_SHOT"
.venv/bin/python - "$work/frames.json" "$count" "$work/time" "$file" <<'PY'
import json, os, statistics, sys
frames = json.load(open(sys.argv[1]))["frames"]
count = int(sys.argv[2])
wall, rss_kb = open(sys.argv[3]).read().split()
shown = [f for f in frames if f["selected"] == count][2:]  # the first frames build caches
def line(name, xs):
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]
    print(f"  {name}: median {statistics.median(xs):.1f} ms, p99 {p99:.1f} ms ({len(xs)} frames)")
print(f"{count} runs selected:")
line("UI work", [f["ui_ms"] for f in shown])
line("whole frame", [f["ms"] for f in shown])
mb = os.path.getsize(sys.argv[4]) / 2**20
print(f"  process: {float(wall):.1f} s, peak RSS {int(rss_kb) / 1024:.0f} MB "
      f"({int(rss_kb) / 1024 / mb:.2f} x the {mb:.0f} MB file)")
PY
