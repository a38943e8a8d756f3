#!/usr/bin/env bash
# The GPU check kit keeps working where there is no GPU (docs/GPU_CHECK.md): its GPU stages
# run on the CPU with --cpu-smoke and pass (their checks read real result sets), and without
# it each says it was skipped and why. A broken stage shows here, not on a lent machine.
# Usage: kit_smoke.sh LMPROF_CLI WORKDIR   (run from anywhere; check.sh finds the source tree)
set -euo pipefail
cli=$1 work=$2
kit="$(cd "$(dirname "$0")/../../scripts/gpu" && pwd)/check.sh"
rm -rf "$work" && mkdir -p "$work"

OUT="$work/smoke" bash "$kit" profile lab ddp remote watch --cpu-smoke --cli "$cli" > "$work/smoke.log" 2>&1 ||
  { cat "$work/smoke.log"; echo "kit_smoke: the CPU smoke run failed"; exit 1; }
report="$work/smoke/report.md"
for stage in profile lab ddp remote watch; do
  grep -q "^| $stage | passed |" "$report" || { cat "$report"; echo "kit_smoke: $stage did not pass"; exit 1; }
done
grep -q "0 failing stage(s)" "$report" || { cat "$report"; exit 1; }
# What a loan brings back: the report and one archive with every stage's files.
tar -tzf "$work/smoke/artifacts.tar.gz" > "$work/artifacts.txt"
for f in profile.json profile-kernels.md lab-accumulate.json lab-dtypes.json ddp-2.json remote.json \
  watched.json watch-engine.json watched-inside.json; do
  grep -q "artifacts/$f$" "$work/artifacts.txt" ||
    { echo "kit_smoke: $f is not in artifacts.tar.gz"; exit 1; }
done

# Without a GPU and without --cpu-smoke every GPU stage is skipped with its reason.
if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  exit 0 # a GPU machine: the stages run for real in check.sh itself
fi
OUT="$work/skip" bash "$kit" profile lab ddp remote variants watch study bench --cli "$cli" > "$work/skip.log" 2>&1 ||
  { cat "$work/skip.log"; echo "kit_smoke: a skipping run failed"; exit 1; }
for stage in profile lab ddp remote variants watch study bench; do
  grep -q "^| $stage | skipped | – | no GPU here" "$work/skip/report.md" ||
    { cat "$work/skip/report.md"; echo "kit_smoke: $stage was not skipped with its reason"; exit 1; }
done
echo "kit_smoke: the GPU stages pass on the CPU and skip without a GPU"
