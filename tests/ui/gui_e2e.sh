#!/usr/bin/env bash
# End to end: the real lmprof window under Xvfb (Mesa software GL) with the scriptable
# launch; the screenshot must be full-size and not blank. Then the no-display fallback.
# Usage: gui_e2e.sh LMPROF PNG_CHECK WORKDIR
set -euo pipefail
lmprof=$1 png_check=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
export LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1

xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$lmprof" --model tiny --ctx 64 --steps 8 --warmup 2 --device cpu -q \
  --autorun --screenshot "$work/window.png" --exit-when-done
"$png_check" "$work/window.png" 1600 1000
test -f "$work/config/imgui.ini" || { echo "layout was not saved"; exit 1; }

# A run that fails makes --exit-when-done exit non-zero (and still writes the screenshot).
set +e
LMPROF_FAULT_OOM=backward xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$lmprof" --model tiny --ctx 32 --steps 2 --warmup 0 --device cpu -q \
  --autorun --screenshot "$work/oom.png" --exit-when-done
rc=$?
set -e
[ "$rc" -ne 0 ] || { echo "an OOM autorun must exit non-zero"; exit 1; }
"$png_check" "$work/oom.png" 1600 1000

# Without a display the window falls back to the CLI benchmark and says why.
out=$(env -u DISPLAY -u WAYLAND_DISPLAY "$lmprof" --model tiny --ctx 16 --batch 1 \
      --steps 1 --warmup 0 --device cpu -q 2>&1)
echo "$out" | grep -q "cannot open a window" || { echo "no fallback message: $out"; exit 1; }
echo "$out" | grep -q "| tiny " || { echo "no benchmark table: $out"; exit 1; }
echo "gui_e2e: 3 passed, 0 failed"
