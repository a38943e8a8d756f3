#!/usr/bin/env bash
# What the lmprof window costs the machine it measures on: the CPU the whole process uses
# while idle (Mesa's software rasteriser draws on threads of its own), and while a CPU run
# streams, under Xvfb with Mesa's software OpenGL; and the run's ms per step in the window
# against the same run in lmprof-cli, alternating, so the ratio shows what drawing steals.
# Each round runs the window at each frame cap in FPS_LIST (--max-fps), then the CLI.
# Usage: bench/window_cpu.sh [rounds] [fps list]   (defaults 2, "30 10"; 0 rounds: idle only)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
fps_list=${2:-30 10}
work=$(mktemp -d)
display=:$((90 + RANDOM % 50))
Xvfb "$display" -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; rm -rf "$work"' EXIT
sleep 1
export DISPLAY=$display LMPROF_CONFIG_DIR="$work/config" LIBGL_ALWAYS_SOFTWARE=1
run_args=(--model tiny --ctx 64 --batch 4 --warmup 2 --steps 30 --device cpu --threads 2 -q)

# CPU seconds (user + system) of one thread so far.
thread_cpu() { awk '{print ($14 + $15) / 100}' "/proc/$1/task/$1/stat"; }
# CPU seconds of the whole process (engine, samplers, Mesa's rasteriser threads).
proc_cpu() { awk '{print ($14 + $15) / 100}' "/proc/$1/stat"; }

# Idle: the whole process (the main thread, Mesa's rasteriser threads, the engine's worker)
# over 30 s, 5 s after the start, at the size a person would use.
echo "idle window (1600x1000), 30 s after a 5 s start:"
build/app/lmprof --device cpu --discard-last --window-size 1600x1000 &
pid=$!
sleep 5
a=$(thread_cpu $pid); pa=$(proc_cpu $pid); sleep 30; b=$(thread_cpu $pid); pb=$(proc_cpu $pid)
kill -TERM $pid; wait $pid || true
echo "  whole process: $(awk -v a="$pa" -v b="$pb" 'BEGIN{printf "%.2f%% of a core", (b-a)*100/30}')," \
  "main thread: $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f%%", (b-a)*100/30}')"

for r in $(seq "$rounds"); do
  for fps in $fps_list; do
    rm -f "$work"/window.json
    build/app/lmprof "${run_args[@]}" --discard-last --autorun --exit-when-done --max-fps "$fps" \
      --save-on-exit "$work/window.json" &
    pid=$!
    start=$(date +%s.%N); a=$(thread_cpu $pid); pa=$(proc_cpu $pid); b=$a; pb=$pa
    while kill -0 $pid 2>/dev/null; do
      b=$(thread_cpu $pid 2>/dev/null || echo "$b"); pb=$(proc_cpu $pid 2>/dev/null || echo "$pb")
      sleep 0.2
    done
    wait $pid
    end=$(date +%s.%N)
    cp "$work/window.json" "$work/window-$fps.json"
    echo "$fps $a $b $pa $pb $start $end" >> "$work/rounds-$r.txt"
  done
  build/app/lmprof-cli run "${run_args[@]}" --json "$work/cli.json" >/dev/null
  .venv/bin/python - "$work" "$r" <<'PY'
import json, sys
work, r = sys.argv[1], sys.argv[2]
step = lambda p: json.load(open(p))["runs"][0]["summary"]["total_ms"]["mean"]
cli = step(f"{work}/cli.json")
for line in open(f"{work}/rounds-{r}.txt"):
    fps, a, b, pa, pb, start, end = line.split()
    a, b, pa, pb, start, end = map(float, (a, b, pa, pb, start, end))
    w = step(f"{work}/window-{fps}.json")
    wall = end - start
    print(f"round {r}, --max-fps {fps}: main thread {100 * (b - a) / wall:.1f}% of a core, "
          f"process {100 * (pb - pa) / wall:.0f}%, over {wall:.1f} s; step ms window {w:.2f} "
          f"/ cli {cli:.2f} = {w / cli:.3f}x")
PY
done
