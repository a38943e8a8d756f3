#!/usr/bin/env bash
# Closing the window while the script it watches trains (issue 56, items 27 and 28): the
# window sends the script a Ctrl+C, goes on drawing until the script's run has ended
# `cancelled` with every step it showed, and only then closes: the run is in
# --save-on-exit's file and in the autosave. Before, it saved "runs": [] and no autosave.
# The close is a SIGTERM, sent once the script has trained 20 steps (it says so in a file)
# and the window has connected to it (its demo writes a file then): no clock decides when.
# A run the script could not end in time (its server closed first) is kept as the window
# saw it, ended `cancelled` all the same.
# Usage: gui_watch_close.sh LMPROF WORKDIR PYTHON
set -euo pipefail
lmprof=$1 work=$2 python=$3
rm -rf "$work" && mkdir -p "$work"
export LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1
cat > "$work/train.py" <<PY
import pathlib, time, torch

torch.manual_seed(0)
model = torch.nn.Linear(16, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = 0
while True:  # until the window stops it
    model(torch.randn(4, 16)).square().mean().backward()
    opt.step()
    opt.zero_grad()
    step += 1
    time.sleep(0.005)
    if step == 20:
        pathlib.Path("$work/trained").touch()
PY
Xvfb -displayfd 3 -screen 0 1280x720x24 3> "$work/display" 2> /dev/null &
xvfb_pid=$!
window_pid=""
cleanup() {
  [ -z "$window_pid" ] || kill -KILL "$window_pid" 2>/dev/null || true
  kill "$xvfb_pid" 2>/dev/null || true
}
trap cleanup EXIT
until [ -s "$work/display" ]; do sleep 0.1; done
cat > "$work/demo.json" <<JSON
{"lmprof_demo": 1, "steps": [{"do": "wait", "for": "engine", "timeout_s": 600},
                             {"do": "layout", "path": "$work/connected.json"}]}
JSON
DISPLAY=":$(cat "$work/display")" "$lmprof" --window-size 1280x720 --discard-last \
  --save-on-exit "$work/saved.json" --demo "$work/demo.json" -- "$python" "$work/train.py" \
  > "$work/log" 2>&1 &
window_pid=$!
until [ -f "$work/trained" ] && [ -f "$work/connected.json" ]; do
  kill -0 "$window_pid" 2>/dev/null || { cat "$work/log"; echo "the window ended early"; exit 1; }
  sleep 0.2
done
kill -TERM "$window_pid"
set +e
wait "$window_pid"
rc=$?
set -e
window_pid=""
[ -f "$work/saved.json" ] || { cat "$work/log"; echo "nothing saved (rc $rc)"; exit 1; }
"$python" - "$work/saved.json" "$work/config/autosave.jsonl" <<'PY' || { cat "$work/log"; exit 1; }
import json, sys
(run,) = json.load(open(sys.argv[1]))["runs"]
assert run["status"] == "cancelled", run["status"]
assert len(run["steps"]) >= 20, f"{len(run['steps'])} steps saved"
lines = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
autosaved = [r for r in lines if r.get("source")]
assert autosaved and len(autosaved[-1]["steps"]) == len(run["steps"]), "not autosaved"
print(f"closed mid-run: {len(run['steps'])} steps saved and autosaved, cancelled")
PY

# Cancel (a demo's "cancel" step once the window is connected) stops the script the same way:
# its run ends `cancelled` and --exit-when-done ends the launch (before, the script trained
# on and the window waited for it forever).
rm -f "$work/trained"
cat > "$work/cancel.json" <<JSON
{"lmprof_demo": 1, "steps": [{"do": "wait", "for": "engine", "timeout_s": 600},
                             {"do": "pause", "seconds": 1},
                             {"do": "cancel"},
                             {"do": "wait", "for": "script", "timeout_s": 600}]}
JSON
set +e
DISPLAY=":$(cat "$work/display")" LMPROF_CONFIG_DIR="$work/config-cancel" timeout 300 "$lmprof" \
  --window-size 1280x720 --discard-last --exit-when-done --save-on-exit "$work/cancelled.json" \
  --demo "$work/cancel.json" -- "$python" "$work/train.py" > "$work/cancel.log" 2>&1
rc=$?
set -e
[ "$rc" -ne 124 ] || { cat "$work/cancel.log"; echo "Cancel did not stop the script"; exit 1; }
"$python" - "$work/cancelled.json" <<'PY' || { cat "$work/cancel.log"; exit 1; }
import json, sys
(run,) = json.load(open(sys.argv[1]))["runs"]
assert run["status"] == "cancelled" and run["steps"], (run["status"], len(run["steps"]))
print(f"Cancel: the script stopped, {len(run['steps'])} steps kept, cancelled")
PY
