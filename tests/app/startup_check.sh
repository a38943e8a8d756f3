#!/usr/bin/env bash
# A command that touches no tensor never loads LibTorch (issue 59, docs/INSTALL.md): the
# dynamic loader's own record (LD_DEBUG=files) of lmprof-cli --help, --version, show and
# compare, of lmprof --version, and of the window opening a result set names no libtorch. A
# local run does load it through lmprof-engine.so: the check can tell the two apart.
# Usage: startup_check.sh LMPROF_CLI LMPROF WORKDIR
set -euo pipefail
headless=$(cd "$(dirname "$0")/../.." && pwd)/scripts/headless.sh
cli=$1 gui=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
corpus="$(cd "$(dirname "$0")/../fuzz/corpus/result_set" && pwd)"
export LMPROF_CONFIG_DIR="$work/config"

loads() { # NAME COMMAND...: the files the loader opened, in $work/NAME.log; it must exit 0
  local name=$1 rc=0
  shift
  LD_DEBUG=files LD_DEBUG_OUTPUT="$work/$name.ld" "$@" > "$work/$name.out" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { echo "FAILED: $name exited $rc:"; tail -n 20 "$work/$name.out"; exit 1; }
  cat "$work/$name".ld.* > "$work/$name.log" 2>/dev/null || : > "$work/$name.log"
}
no_torch() {
  if grep -q 'libtorch' "$work/$1.log"; then
    echo "FAILED: $1 loaded LibTorch:"
    grep -m 3 'libtorch' "$work/$1.log"
    exit 1
  fi
  grep -q 'calling init' "$work/$1.log" || { echo "FAILED: $1 left no loader record"; exit 1; }
}

loads help "$cli" --help
loads version "$cli" --version
loads show "$cli" show "$corpus/sweep.json"
loads compare "$cli" compare "$corpus/run.json" "$corpus/sweep.json"
loads window_version "$gui" --version
for name in help version show compare window_version; do
  no_torch "$name"
done
grep -q "lmprof.results/" "$work/version.out" || { echo "FAILED: --version"; cat "$work/version.out"; exit 1; }

if command -v Xvfb > /dev/null; then
  LIBGL_ALWAYS_SOFTWARE=1 loads window "$headless" 1280x720 "$gui" \
    --window-size 1280x720 --discard-last --open "$corpus/sweep.json" \
    --screenshot "$work/window.png" --exit-when-done
  [ -s "$work/window.png" ] || { echo "FAILED: the window did not open"; cat "$work/window.out"; exit 1; }
  no_torch window
fi

# The control: a local run loads the engine module, and LibTorch with it.
loads run "$cli" run --model tiny --ctx 16 --batch 2 --warmup 1 --steps 1 --device cpu --quiet
grep -q 'lmprof-engine.so' "$work/run.log" && grep -q 'libtorch' "$work/run.log" ||
  { echo "FAILED: a local run did not load the engine"; cat "$work/run.out"; exit 1; }
echo "startup: no LibTorch for --help, --version, show, compare and the window opening a file"
