#!/usr/bin/env bash
# How long a finished step takes to reach the screen, with the engine in the window's own
# process and with it behind an lmprof-cli serve on loopback (docs/REMOTE.md). The window
# records, for each step it draws, the time from the engine publishing the step to the
# end of the frame that drew it (--frame-stats "step_latency_ms"). On loopback the server
# and the window read the same steady clock. Local and remote runs alternate in one run.
# Usage: bench/remote_latency.sh [rounds] [max fps]   (defaults 3, 30)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
fps=${2:-30}
work=$(mktemp -d)
display=:$((90 + RANDOM % 50))
Xvfb "$display" -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
export DISPLAY=$display LIBGL_ALWAYS_SOFTWARE=1
LMPROF_CONFIG_DIR="$work/server" build/app/lmprof-cli serve --listen 127.0.0.1:0 \
  2> "$work/serve.log" &
serve=$!
trap 'kill $xvfb 2>/dev/null; kill -INT $serve 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q "listening on" "$work/serve.log" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log")
run_args=(--model tiny --ctx 64 --batch 4 --warmup 2 --steps 30 --device cpu -q
          --max-fps "$fps" --autorun --exit-when-done --discard-last)

for round in $(seq "$rounds"); do
  LMPROF_CONFIG_DIR="$work/local" build/app/lmprof "${run_args[@]}" \
    --frame-stats "$work/local-$round.json"
  LMPROF_CONFIG_DIR="$work/remote" build/app/lmprof "${run_args[@]}" \
    --connect "127.0.0.1:$port" --token-file "$work/server/server/token" \
    --frame-stats "$work/remote-$round.json"
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
for kind in ("local", "remote"):
    ms = []
    for r in range(1, rounds + 1):
        ms += json.load(open(f"{work}/{kind}-{r}.json"))["step_latency_ms"]
    ms.sort()
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    print(f"{kind:6s}: {len(ms)} steps, step to screen median {statistics.median(ms):.1f} ms, "
          f"p95 {p95:.1f} ms, max {ms[-1]:.1f} ms")
PY
