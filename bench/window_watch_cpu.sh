#!/usr/bin/env bash
# What watching a CPU training script in the window costs the script: its median step in
# the window (`lmprof -- python train.py`) against the same script under `lmprof-cli watch`,
# in alternating rounds, under Xvfb with Mesa's software OpenGL (every frame rasterised on
# the cores the script trains on). Also the frames the window drew a second while it watched.
# Usage: bench/window_watch_cpu.sh [rounds] [steps]   (defaults 4, 200)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-4}
steps=${2:-200}
work=$(mktemp -d)
display=:$((90 + RANDOM % 50))
Xvfb "$display" -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; rm -rf "$work"' EXIT
sleep 1
export DISPLAY=$display LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1
python=.venv/bin/python
window=${LMPROF_WINDOW:-build/app/lmprof} # another build of the window, to compare

# A small language model on the CPU, about 20 ms a step on two cores.
cat > "$work/train.py" <<PY
import torch, torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(512, 256), nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 512))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range($steps):
    x = torch.randint(0, 512, (16, 64))
    loss = nn.functional.cross_entropy(model(x).flatten(0, 1), x.roll(-1, 1).flatten())
    loss.backward(); opt.step(); opt.zero_grad()
PY

median_ms() {
  "$python" - "$1" <<'PY'
import json, statistics, sys
run = json.load(open(sys.argv[1]))["runs"][0]
print(f'{statistics.median(s["total_ms"] for s in run["steps"] if not s["warmup"]):.2f}')
PY
}

for r in $(seq "$rounds"); do
  rm -f "$work/window.json" "$work/cli.json" "$work/frames.json"
  start=$(date +%s.%N)
  "$window" --discard-last --window-size 1600x1000 --exit-when-done \
    --frame-stats "$work/frames.json" --save-on-exit "$work/window.json" -- "$python" "$work/train.py" \
    >"$work/window.out" 2>&1
  end=$(date +%s.%N)
  # Frames drawn while the run streamed, a second of its steps (the script's start, while
  # the window waits for its first step, is left out).
  fps=$("$python" - "$work/frames.json" "$work/window.json" <<'PY'
import json, sys
frames = json.load(open(sys.argv[1]))["frames"]
steps = json.load(open(sys.argv[2]))["runs"][0]["steps"]
print(sum(1 for f in frames if f["running"]) / (sum(s["total_ms"] for s in steps) / 1000))
PY
)
  build/app/lmprof-cli watch --quiet --json "$work/cli.json" -- "$python" "$work/train.py" \
    >/dev/null 2>&1
  w=$(median_ms "$work/window.json")
  c=$(median_ms "$work/cli.json")
  awk -v r="$r" -v w="$w" -v c="$c" -v f="$fps" -v s="$start" -v e="$end" \
    'BEGIN{printf "round %d: median step window %.2f ms / watch %.2f ms = %.3fx; %.1f frames a second while it trained; window launch %.1f s\n", r, w, c, w / c, f, e - s}'
done
