#!/usr/bin/env bash
# What a command that touches no tensor costs (issue 59): lmprof-cli --help, --version and
# show of a one-run file, and lmprof --version, as built (the engine a module loaded by the
# first run) against the same command with LibTorch preloaded (LD_PRELOAD), which is what
# linking it cost every start before. Alternating rounds, the order flipped each round;
# wall time (with /usr/bin/time's own start) and peak resident memory of the whole process,
# median and range.
# Usage: bench/startup.sh [rounds] [build dir]   (defaults 10, build)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
build=${2:-build}
cli=$build/app/lmprof-cli gui=$build/app/lmprof
torch_lib=$(.venv/bin/python -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
preload="$torch_lib/libtorch_cpu.so:$torch_lib/libtorch.so"
one_run=tests/fuzz/corpus/result_set/run.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LMPROF_CONFIG_DIR="$work/config"

declare -A commands=(
  [help]="$cli --help" [version]="$cli --version" [show]="$cli show $one_run"
  [window-version]="$gui --version")
names=(help version show window-version)

measure() { # NAME KIND: appends "seconds kilobytes" to $work/NAME.KIND
  local env=(env) # inside time, so that time itself never loads the preload
  [ "$2" = preloaded ] && env=(env LD_PRELOAD="$preload")
  local start=$EPOCHREALTIME # wall time in µs (time's %e counts in 10 ms); time's start too
  # shellcheck disable=SC2086
  /usr/bin/time -f "%M" -o "$work/t" "${env[@]}" ${commands[$1]} > /dev/null 2>&1
  local end=$EPOCHREALTIME
  echo "$(echo "${end/./} - ${start/./}" | bc | awk '{printf "%.4f", $1 / 1e6}') $(cat "$work/t")" >> "$work/$1.$2"
}
for ((r = 0; r < rounds; r++)); do
  for name in "${names[@]}"; do
    if ((r % 2 == 0)); then measure "$name" built; measure "$name" preloaded
    else measure "$name" preloaded; measure "$name" built; fi
  done
done

summary() { # FILE: "median ms (min-max), median MB (min-max)"
  sort -n -k1 "$1" | awk '{t[NR]=$1*1000} END {printf "%.0f ms (%.0f-%.0f)", t[int((NR+1)/2)], t[1], t[NR]}'
  printf ', '
  sort -n -k2 "$1" | awk '{m[NR]=$2/1024} END {printf "%.0f MB (%.0f-%.0f)", m[int((NR+1)/2)], m[1], m[NR]}'
}
printf '%d rounds, %s\n' "$rounds" "$(nproc) cores"
printf '%-16s %-34s %s\n' command "as built" "LibTorch preloaded"
for name in "${names[@]}"; do
  printf '%-16s %-34s %s\n' "$name" "$(summary "$work/$name.built")" "$(summary "$work/$name.preloaded")"
done
