#!/usr/bin/env bash
# The window watching a script whose run ends `error` (it raises after three steps): with
# --exit-when-done it exits 1, and the run it saves says why (issue 56: it exited 0, or
# waited forever when the script ended before the window connected).
# Usage: gui_watch_error.sh LMPROF WORKDIR PYTHON
set -euo pipefail
headless=$(cd "$(dirname "$0")/../.." && pwd)/scripts/headless.sh
lmprof=$1 work=$2 python=$3
rm -rf "$work" && mkdir -p "$work"
export LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1
cat > "$work/train.py" <<'PY'
import torch

torch.manual_seed(0)
model = torch.nn.Linear(16, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    model(torch.randn(4, 16)).square().mean().backward()
    opt.step()
    opt.zero_grad()
raise RuntimeError("the loss diverged")
PY
set +e
"$headless" 1280x720 "$lmprof" --window-size 1280x720 --exit-when-done \
  --discard-last --save-on-exit "$work/saved.json" -- "$python" "$work/train.py" \
  > "$work/log" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$work/log"; echo "expected exit 1 after an error run, got $rc"; exit 1; }
# The window saw the run end (then it is saved, ended `error`) or saw the script end first.
if [ -f "$work/saved.json" ] && grep -q '"model_class"' "$work/saved.json"; then
  grep -q '"status": "error"' "$work/saved.json" && grep -q 'the loss diverged' "$work/saved.json" ||
    { cat "$work/log"; echo "the saved run does not say it ended in error"; exit 1; }
else
  grep -q "the watched script exited with status 1" "$work/log" ||
    { cat "$work/log"; echo "neither the run's error nor the script's end was reported"; exit 1; }
fi

# A script that ends before its first step (it raises on import): the window does not wait
# for it forever; the autorun fails, saying how the script ended, and the launch exits 1.
printf 'import torch\nraise SystemExit("no data here")\n' > "$work/crash.py"
set +e
LMPROF_CONFIG_DIR="$work/config2" "$headless" 1280x720 "$lmprof" \
  --window-size 1280x720 --exit-when-done --discard-last -- "$python" "$work/crash.py" \
  > "$work/crash.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$work/crash.log"; echo "expected exit 1 after a crash, got $rc"; exit 1; }
grep -q "the watched script exited with status 1 before lmprof saw its run end" "$work/crash.log" ||
  { cat "$work/crash.log"; echo "the crash was not reported"; exit 1; }
echo "a watched run that ends in error, or never starts, fails --exit-when-done: ok"
