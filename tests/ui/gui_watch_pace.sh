#!/usr/bin/env bash
# The window watching a CPU script draws at most the CPU-run rate (2 frames a second on a
# software renderer, docs/WINDOW.md "Drawing"), so the script's steps keep their cores. It
# drew about 20 a second and the script ran 2.7-3.0x slower than under `lmprof-cli watch`
# (issue 56): the watched script's engine is a "remote" one, and remote CPU runs were
# drawn at full rate. A machine's speed only lowers the count: each step sleeps 0.1 s, so
# the script trains at least 4 s whatever the load.
# Usage: gui_watch_pace.sh LMPROF WORKDIR PYTHON
set -euo pipefail
headless=$(cd "$(dirname "$0")/../.." && pwd)/scripts/headless.sh
lmprof=$1 work=$2 python=$3
rm -rf "$work" && mkdir -p "$work"
export LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1
cat > "$work/train.py" <<'PY'
import time
import torch

model = torch.nn.Linear(16, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(40):
    model(torch.randn(4, 16)).square().mean().backward()
    opt.step()
    opt.zero_grad()
    time.sleep(0.1)
PY
"$headless" 1280x720 "$lmprof" --window-size 1280x720 --exit-when-done \
  --discard-last --frame-stats "$work/frames.json" --save-on-exit "$work/saved.json" \
  -- "$python" "$work/train.py" > "$work/log" 2>&1 || { cat "$work/log"; exit 1; }
"$python" - "$work/frames.json" "$work/saved.json" <<'PY'
import json, sys

frames = json.load(open(sys.argv[1]))["frames"]
steps = json.load(open(sys.argv[2]))["runs"][0]["steps"]
assert len(steps) == 40, f"{len(steps)} steps saved, expected 40"
drawn = sum(1 for f in frames if f["running"])
seconds = sum(s["total_ms"] for s in steps) / 1000
# 2 a second, and a few frames more as the run starts and ends.
limit = 2 * seconds + 6
print(f"{drawn} frames while the run streamed, over {seconds:.1f} s of steps (limit {limit:.0f})")
assert drawn <= limit, f"the window drew {drawn} frames while a CPU script trained {seconds:.1f} s"
PY
echo "the window draws a watched CPU script at the CPU-run rate: ok"
