#!/usr/bin/env bash
# A watched script of many steps (issue 56): the peak resident memory of the script (the
# watcher inside it) and of lmprof-cli watch, the result set's size, and what `show` of it
# takes. Both processes keep the ring's steps and a summary in bounded memory
# (docs/WATCH.md, "Long runs"), so their peaks should not grow with the steps.
# Usage: [LOOP=bare] [KEEP=DIR] bench/long_run.sh [steps ...]   (default: 100000 1000000)
# KEEP=DIR keeps each result set there, as DIR/long-STEPS.json.
set -euo pipefail
cd "$(dirname "$0")/.."
python=$PWD/.venv/bin/python
cli=$PWD/build/app/lmprof-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# LOOP=linear (the default): the smallest loop that still crosses every phase, a 16-wide
# linear layer and SGD, about 0.5 ms a step. LOOP=bare: empty `with run.step()` blocks, about
# 40 us a step, for ten million steps in minutes. The script reports its own peak once
# lmprof has closed its run (the two-line API, so that the close comes before the report).
# (A bare loop has no optimizer step for the zero-code run to see: it saves where
# lmprof-cli watch asks, itself.)
watch='lmprof.watch(model, opt)'
if [ "${LOOP:-linear}" = bare ]; then
  watch='lmprof.watch(model, save=os.environ["LMPROF_WATCH_SAVE"])'
  body='    with run.step():
        pass'
else
  body='    model(x).square().mean().backward()
    opt.step()
    opt.zero_grad()'
fi
cat > "$work/train.py" <<PY
import os, resource, sys, torch
import lmprof
torch.set_num_threads(1)
model = torch.nn.Linear(16, 16)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(4, 16)
run = $watch
for _ in range(int(sys.argv[1])):
$body
run.close()
with open(sys.argv[2], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024))
PY

for steps in "${@:-100000 1000000}"; do
  rm -f "$work/long.json"
  start=$(date +%s.%N)
  "$cli" watch --quiet --json "$work/long.json" -- "$python" "$work/train.py" "$steps" \
    "$work/python_mb" >"$work/watch.log" 2>&1 &
  pid=$!
  cli_kb=0
  while kill -0 $pid 2>/dev/null; do
    kb=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    cli_kb=$((kb > cli_kb ? kb : cli_kb))
    sleep 0.5
  done
  wait $pid || { tail -5 "$work/watch.log"; exit 1; }
  end=$(date +%s.%N)
  [ -f "$work/long.json" ] || { tail -5 "$work/watch.log"; exit 1; }
  size=$(stat -c %s "$work/long.json")
  show=$( { /usr/bin/time -f "%e s, %M KB" "$cli" show "$work/long.json" >"$work/show.txt"; } 2>&1 )
  [ -z "${KEEP:-}" ] || cp "$work/long.json" "$KEEP/long-$steps.json"
  kept=$(grep -o '[0-9]* of [0-9]* steps kept' "$work/show.txt" || echo "all steps kept")
  awk -v n="$steps" -v p="$(cat "$work/python_mb")" -v c="$cli_kb" -v s="$size" \
    -v w="$(awk -v a="$start" -v b="$end" 'BEGIN{print b - a}')" -v show="$show" -v k="$kept" \
    'BEGIN{printf "%d steps in %.0f s: script peak %d MB, lmprof-cli watch peak %.0f MB; result set %.1f MB (%s); show: %s\n", n, w, p, c / 1024, s / 1e6, k, show}'
done
