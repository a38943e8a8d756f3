#!/usr/bin/env bash
# A result set whose failed run carries a 20 MB error message, opened in the window: the
# empty plots' hint and the status line show its start, and a frame stays quick (issue 56:
# the window hung inside one frame, its cost growing with the square of the length).
# Usage: gui_long_error.sh LMPROF LMPROF_CLI WORKDIR PYTHON
set -euo pipefail
headless=$(cd "$(dirname "$0")/../.." && pwd)/scripts/headless.sh
lmprof=$1 cli=$2 work=$3 python=$4
rm -rf "$work" && mkdir -p "$work"
export LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1
"$cli" run --model tiny --ctx 16 --batch 1 --warmup 0 --steps 1 --device cpu -q \
  --json "$work/run.json" > /dev/null
"$python" - "$work/run.json" <<'PY'
import json, sys
path = sys.argv[1]
doc = json.load(open(path))
run = doc["runs"][0]
run["status"], run["steps"] = "error", []
run["config"]["warmup_steps"], run["config"]["measure_steps"] = 0, 1
run["error"] = "RuntimeError: " + "the loss diverged; " * ((20 << 20) // 19)
json.dump(doc, open(path, "w"))
PY
# The limit only catches a hang: the launch takes seconds.
timeout 240 "$headless" 1280x720 "$lmprof" --window-size 1280x720 \
  --open "$work/run.json" --screenshot "$work/window.png" --exit-when-done > "$work/log" 2>&1 ||
  { cat "$work/log"; echo "the window with a 20 MB error did not finish its launch"; exit 1; }
test -s "$work/window.png" || { echo "no screenshot"; exit 1; }
echo "a 20 MB error message opens quickly: ok"
