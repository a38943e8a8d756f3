#!/usr/bin/env bash
# The verdict strip (docs/VERDICTS.md) in the real window: a watched script whose loader
# takes 5 ms an item, watched live at 1280x720 and opened again at 1920x1080. Each time the
# strip names the run input-bound with its interval, lies along the bottom under every
# plot, and a click on the verdict (a demo's "verdict" step) brings Step times forward from
# behind Telemetry with the verdict's steps marked. A kind the run does not have stops the
# demo, naming the kinds it has.
# Usage: gui_verdicts.sh LMPROF WORKDIR PYTHON
set -euo pipefail
headless=$(cd "$(dirname "$0")/../.." && pwd)/scripts/headless.sh
lmprof=$1 work=$2 python=$3
rm -rf "$work" && mkdir -p "$work"
export LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1
cat > "$work/train.py" <<'PY'
import time
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.set_num_threads(1)
torch.manual_seed(0)


class Slow(Dataset):
    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        time.sleep(0.005)  # decoding, say, with no workers
        return torch.randint(0, 128, (16,))


model = nn.Sequential(nn.Embedding(128, 64), nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 128))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, x in enumerate(DataLoader(Slow(), batch_size=8)):
    loss = nn.functional.cross_entropy(model(x).flatten(0, 1), x.roll(-1, 1).flatten())
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step == 30:
        break
PY
demo() { # demo FILE WAIT_FOR KIND LAYOUT
  cat > "$1" <<JSON
{"lmprof_demo": 1, "steps": [
  $2
  {"do": "show", "window": "Telemetry"},
  {"do": "pause", "seconds": 0.3},
  {"do": "verdict", "kind": "$3"},
  {"do": "pause", "seconds": 0.3},
  {"do": "layout", "path": "$4"},
  {"do": "screenshot", "path": "${4%.json}.png"}
]}
JSON
}
check() { # check LAYOUT
  "$python" - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v, problems = r["verdicts"], []
if not v["chips"] or not v["chips"][0].split(" ", 2)[1] == "input-bound":
    problems.append(f"the strip's first chip is not input-bound: {v['chips']}")
elif v["chips"][0].split(" ")[0] not in ("warn", "critical"):
    problems.append(f"input-bound is not a firm warning: {v['chips'][0]}")
if v["mark"] != "input-bound":
    problems.append(f"the marked verdict is {v['mark']}")
if "Step times" not in [w["window"] for w in r["windows"]]:
    problems.append("Step times did not come forward")
if abs(v["y"] + v["height"] - r["height"]) > 1:
    problems.append(f"the strip is not along the bottom: y {v['y']} + {v['height']}")
for p in r["plots"]:
    if p["y"] + p["height"] > v["y"] + 0.5:
        problems.append(f"{p['chart']} reaches under the strip: {p}")
print(f"{sys.argv[1]}: {v['chips']}, mark {v['mark']}" if not problems else "\n".join(problems))
sys.exit(1 if problems else 0)
PY
}

# Live: the window watches the script, the strip judges it as its steps arrive.
demo "$work/live.json" '{"do": "wait", "for": "script", "timeout_s": 240},' input-bound \
  "$work/live-layout.json"
timeout 280 "$headless" 1280x720 "$lmprof" --window-size 1280x720 \
  --discard-last --demo "$work/live.json" --exit-when-done --save-on-exit "$work/run.json" \
  -- "$python" "$work/train.py" > "$work/live.log" 2>&1 ||
  { cat "$work/live.log"; echo "the live demo failed"; exit 1; }
check "$work/live-layout.json"

# Afterwards: the saved run opened in a larger window.
demo "$work/open.json" "{\"do\": \"open\", \"path\": \"$work/run.json\"}, {\"do\": \"wait\", \"for\": \"open\"}, {\"do\": \"select\", \"last\": 1}," \
  input-bound "$work/open-layout.json"
timeout 200 "$headless" 1920x1080 "$lmprof" --window-size 1920x1080 \
  --discard-last --demo "$work/open.json" --exit-when-done > "$work/open.log" 2>&1 ||
  { cat "$work/open.log"; echo "the demo on the opened run failed"; exit 1; }
check "$work/open-layout.json"

# A kind the run does not have: the demo stops and says what the strip has.
demo "$work/absent.json" "{\"do\": \"open\", \"path\": \"$work/run.json\"}, {\"do\": \"wait\", \"for\": \"open\"}, {\"do\": \"select\", \"last\": 1}," \
  recompiles "$work/absent-layout.json"
set +e
timeout 200 "$headless" 1280x720 "$lmprof" --window-size 1280x720 \
  --discard-last --demo "$work/absent.json" --exit-when-done > "$work/absent.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "no 'recompiles' verdict.*input-bound" "$work/absent.log" ||
  { cat "$work/absent.log"; echo "expected exit 1 naming the kinds shown, got $rc"; exit 1; }
echo "the verdict strip: ok"
