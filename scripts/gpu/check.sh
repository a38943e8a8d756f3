#!/usr/bin/env bash
# GPU check kit, step 2 (on the lent GPU machine, which has CUDA's nvcc, CMake, ninja and a
# Python with torch, but no network): builds lmprof-cli and the tests against that
# machine's torch, runs the whole test suite (GPU tests one at a time, after the others),
# runs the GPU benchmark set (bench/gpu_bench.py), and writes under $OUT:
#   report.md   what ran, how long, pass/fail, the benchmark tables
#   build.log ctest.log bench.log   full logs
#   bench.md results-cpp.json results-python.json   the benchmark set's tables and results
#   lmprof-cli  (with --save-cli) the built CLI, stripped, for a second call's bench stage
# Usage: bash scripts/gpu/check.sh [build] [test] [bench] [--save-cli] [--budget SECONDS]
#   no stage named: all three. Needs .gpu-carry/ from scripts/gpu/prepare.sh (carried).
# See docs/GPU_CHECK.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out="${OUT:-$root/gpu-out}"
mkdir -p "$out"
carry=.gpu-carry
build=build-gpu
prefix=/tmp/lmprof-gpu-deps
start=$(date +%s)
budget=570
stages=()
save_cli=0
while [ $# -gt 0 ]; do
  case "$1" in
    build | test | bench) stages+=("$1") ;;
    --save-cli) save_cli=1 ;;
    --budget)
      [ $# -ge 2 ] || { echo "check.sh: --budget needs a number of seconds" >&2; exit 2; }
      budget="$2"; shift ;;
    *) echo "check.sh: unknown argument '$1' (stages: build test bench; --save-cli, --budget S)" >&2
       exit 2 ;;
  esac
  shift
done
[ ${#stages[@]} -eq 0 ] && stages=(build test bench)
wants() { [[ " ${stages[*]} " == *" $1 "* ]]; }
elapsed() { echo $(($(date +%s) - start)); }
report="$out/report.md"
say() { printf '%s\n' "$*" | tee -a "$report"; }
failures=0

: > "$report"
say "# lmprof GPU check ($(date -u +%Y-%m-%dT%H:%M:%SZ), stages: ${stages[*]})"
say ""
say "## Machine"
say '```'
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id,clocks.max.sm,power.limit \
    --format=csv 2>&1
  python3 -c "import torch, sys; print('python', sys.version.split()[0], '| torch', torch.__version__, \
'| CUDA', torch.version.cuda, '| device', torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none')" 2>&1
  nvcc --version 2>&1 | tail -1
  g++ --version 2>&1 | head -1
  cmake --version 2>&1 | head -1
  echo "cores $(nproc), revision $(cat "$carry/revision" 2>/dev/null || echo unknown)"
} | tee -a "$report"
say '```'

# --- dependencies: the carried Debian packages, unpacked into a prefix -------------------
rm -rf "$prefix" && mkdir -p "$prefix"
debs=("$carry"/debs/*.deb)
if [ -e "${debs[0]}" ]; then
  for f in "${debs[@]}"; do dpkg-deb -x "$f" "$prefix"; done
  say "- dependencies: ${#debs[@]} carried packages unpacked into $prefix"
else
  say "- dependencies: none carried (run scripts/gpu/prepare.sh here first); using the system's"
fi

# --- configure and build -------------------------------------------------------------------
cli="$root/$build/app/lmprof-cli"
# TORCH_CUDA_ARCH_LIST only tells LibTorch's CMake not to probe the GPU (lmprof compiles no
# kernels of its own); 9.0 is the lent machines' Hopper.
configure_and_build() { # targets...
  local torch_prefix
  torch_prefix=$(python3 -c "import torch.utils; print(torch.utils.cmake_prefix_path)") || return 1
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLMPROF_BUILD_GUI=OFF \
    -DLMPROF_BUILD_TESTS=ON -DTorch_DIR="$torch_prefix/Torch" -DLMPROF_PYTHON="$(command -v python3)" \
    -DCMAKE_PREFIX_PATH="$prefix/usr" -DTORCH_CUDA_ARCH_LIST=9.0 -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
    -DLMPROF_GIT_REVISION_OVERRIDE="$(cat "$carry/revision" 2>/dev/null || echo unknown)" &&
    cmake --build "$build" -j"$(nproc)" ${1:+--target "$@"}
}
if wants build; then
  t0=$(date +%s)
  if configure_and_build > "$out/build.log" 2>&1; then
    say "- build: ok in $(($(date +%s) - t0)) s ($(grep -c 'Building CXX' "$out/build.log") C++ files)"
    # torch 2.11's libtorch.so exports part of libstdc++ (docs/GPU_CHECK.md): every
    # std::filesystem reference of our executables must carry libstdc++'s symbol version,
    # or it may bind to that copy at run time.
    unversioned=()
    for exe in "$build"/app/lmprof-cli "$build"/tests/*; do
      [ -f "$exe" ] && [ -x "$exe" ] || continue
      nm -D --undefined-only "$exe" 2>/dev/null | grep 'St10filesystem' | grep -qv '@GLIBCXX' &&
        unversioned+=("${exe##*/}")
    done
    if [ ${#unversioned[@]} -eq 0 ]; then
      say "- std::filesystem references: all bound to libstdc++ (@GLIBCXX)"
    else
      say "- std::filesystem references without libstdc++'s version in: ${unversioned[*]}"
      failures=$((failures + 1))
    fi
  else
    say "- build: FAILED after $(($(date +%s) - t0)) s; the end of build.log:"
    say '```'; grep -E "error|Error" "$out/build.log" | head -40 | tee -a "$report"; say '```'
    failures=$((failures + 1))
  fi
elif wants bench && [ ! -x "$cli" ]; then
  if [ -x "$carry/prebuilt/lmprof-cli" ]; then
    cli="$root/$carry/prebuilt/lmprof-cli"
    say "- lmprof-cli: the carried build from an earlier call"
  else
    t0=$(date +%s)
    configure_and_build lmprof-cli > "$out/build.log" 2>&1 &&
      say "- build (lmprof-cli only): ok in $(($(date +%s) - t0)) s" ||
      { say "- build (lmprof-cli only): FAILED, see build.log"; failures=$((failures + 1)); }
  fi
fi

# --- tests: everything else in parallel, then the GPU tests one at a time ----------------
if wants test && [ ! -d "$build" ]; then
  say "- tests: not run, there is no build (name the build stage too)"
  failures=$((failures + 1))
elif wants test; then
  t0=$(date +%s)
  : > "$out/ctest.log"
  # Many CPU tests at once: two intra-op threads each, or they oversubscribe the cores.
  OMP_NUM_THREADS=2 ctest --test-dir "$build" -LE gpu -j"$(nproc)" --output-on-failure \
    --timeout 300 >> "$out/ctest.log" 2>&1
  cpu_rc=$?
  ctest --test-dir "$build" -L gpu -j1 --output-on-failure --timeout 300 -V \
    >> "$out/ctest.log" 2>&1
  gpu_rc=$?
  say "- tests: $(($(date +%s) - t0)) s; other tests exit $cpu_rc, GPU tests exit $gpu_rc"
  say '```'
  grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)|\(Subprocess|Not Run|\*\*\*Skipped|SKIPPED \]" \
    "$out/ctest.log" | sed 's/^[0-9]*: //' | sort -u | head -60 | tee -a "$report"
  say '```'
  [ $cpu_rc -ne 0 ] && failures=$((failures + 1))
  [ $gpu_rc -ne 0 ] && failures=$((failures + 1))
fi

if [ $save_cli -eq 1 ] && [ -x "$cli" ]; then
  strip -o "$out/lmprof-cli" "$cli" && say "- saved a stripped lmprof-cli ($(du -h "$out/lmprof-cli" | cut -f1))"
fi

# --- the GPU benchmark set -----------------------------------------------------------------
if wants bench; then
  left=$((budget - $(elapsed) - 15))
  if [ ! -x "$cli" ]; then
    say "- bench: skipped, no lmprof-cli"
    failures=$((failures + 1))
  elif [ $left -lt 30 ]; then
    say "- bench: skipped, $left s of the budget left"
  else
    # The precision lab's tables on the GPU (docs/PRECISION_LAB.md): seconds, first.
    t0=$(date +%s)
    lab=$(mktemp) # into the report: only 8 files come back from \$OUT
    { "$cli" precision accumulate --device cuda --format markdown &&
        "$cli" precision dtypes --model toy --device cuda --format markdown; } > "$lab" 2>&1
    rc=$?
    say "- precision lab: exit $rc in $(($(date +%s) - t0)) s"
    [ $rc -ne 0 ] && failures=$((failures + 1))
    say ""; cat "$lab" >> "$report"; say ""; rm -f "$lab"
    left=$((budget - $(elapsed) - 15))
    t0=$(date +%s)
    PYTHONUNBUFFERED=1 python3 bench/gpu_bench.py --cli "$cli" --out "$out" --budget-s "$left" \
      > "$out/bench.log" 2>&1
    rc=$?
    say "- bench: exit $rc in $(($(date +%s) - t0)) s"
    [ $rc -ne 0 ] && { failures=$((failures + 1)); tail -20 "$out/bench.log" | tee -a "$report"; }
    [ -f "$out/bench.md" ] && { say ""; cat "$out/bench.md" >> "$report"; }
  fi
fi

# What the device tool brings back: at most 8 files of at most 16 MiB each.
files=$(find "$out" -maxdepth 1 -type f | wc -l)
large=$(find "$out" -maxdepth 1 -type f -size +16M -printf '%f ')
[ "$files" -gt 8 ] && say "- warning: $files files under \$OUT; only 8 come back"
[ -n "$large" ] && say "- warning: over 16 MiB, will not come back: $large"

say ""
say "Total $(elapsed) s, $failures failing stage(s)."
[ $failures -eq 0 ]
