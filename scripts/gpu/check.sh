#!/usr/bin/env bash
# GPU check kit, step 2 (on the lent GPU machine, which has CUDA's nvcc, CMake, ninja and a
# Python with torch, but no network). Stages, in this order (docs/GPU_CHECK.md lists every
# CUDA path and the stage that runs it):
#   build    lmprof-cli and the tests against that machine's torch (GUI off)
#   test     the whole test suite: the others in parallel, then the GPU tests one at a time
#   gputest  the GPU-labelled tests alone; without `build`, builds only lmprof-cli and
#            gpu_test (for a short loan; never run unless named)
#   profile  a profiled `small` training step on CUDA: kernel table, headline and trace;
#            kernel time per phase within 10% of the phase's CUDA event time, softmax and
#            matmul kernels named (scripts/gpu/stage_checks.py)
#   lab      the precision lab on CUDA: the seeds' four loops, the ToyModel's dtype table
#   ddp      lmprof-cli ddp --backend nccl, world size 1 (and 2 with two GPUs), the three
#            strategies
#   remote   lmprof-cli serve on loopback and run --connect --device cuda --precision bf16:
#            the result set names the GPU
#   variants the execution variants (issue 28's GPU set): lmprof-cli sweeps of batch ×
#            context for small, xl and 2.7B over attention naive/sdpa, eager/graphs, fp32,
#            TF32 and bf16 (tokens/s, MFU, busy share), then small at context 128 against
#            Python (idiomatic, SDPA, torch.compile, reduce-overhead) in alternating rounds
#   watch    the Python watcher on CUDA: python/tests/test_gpu.py (no device synchronization,
#            event phases against a synchronized wall clock, per-phase peaks), then a
#            CS336-style script of small's size under lmprof-cli watch, compared by id with
#            the engine's run of small at the same batch and context
#   study    lmprof-cli study --device cuda --budget 5m: the whole study and its report
#            (docs/STUDY.md), kept in the archive for bench/results/
#   bench    bench/gpu_bench.py: C++ and the Python reference in alternating rounds (fresh
#            processes, the order flipped each round), the ratio's 95% interval from
#            lmprof-cli ratio
# and writes under $OUT (the device tool brings back at most 8 files):
#   report.md          each stage: passed, FAILED (with the end of its log) or skipped and why
#   artifacts.tar.gz   logs, result sets, the kernel tables, the trace, bench.md
#   lmprof-cli         (with --save-cli) the built CLI, stripped, for a later call's stages,
#   lmprof-engine.so   and the engine module it loads (docs/ARCHITECTURE.md), stripped
# Usage: bash scripts/gpu/check.sh [STAGE...] [--save-cli] [--budget S] [--rounds N]
#                                  [--cli PATH] [--cpu-smoke]
#   no stage named: all of them. Needs .gpu-carry/ from scripts/gpu/prepare.sh (carried).
#   --cli PATH   use this lmprof-cli instead of building one (or the carried prebuilt one);
#                its lmprof-engine.so must be beside it
#   --cpu-smoke  run profile, lab, ddp, remote and bench on this machine's CPU with tiny
#                configurations: checks the kit itself where there is no GPU
set -uo pipefail
start_dir=$PWD
cd "$(dirname "$0")/../.."
root=$PWD
out="${OUT:-$root/gpu-out}"
mkdir -p "$out"
art="$out/artifacts"
rm -rf "$art" && mkdir -p "$art"
carry=.gpu-carry
build=build-gpu
prefix=/tmp/lmprof-gpu-deps
start=$(date +%s)
budget=570
rounds=3
stages=()
save_cli=0
smoke=0
cli=""
all_stages="build test profile lab ddp remote variants watch study bench"
# gputest is never implied: with `test` it would run the GPU tests twice.
while [ $# -gt 0 ]; do
  case "$1" in
    build | test | gputest | profile | lab | ddp | remote | variants | watch | study | bench) stages+=("$1") ;;
    --save-cli) save_cli=1 ;;
    --cpu-smoke) smoke=1 ;;
    --budget | --rounds | --cli)
      [ $# -ge 2 ] || { echo "check.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --budget) budget="$2" ;;
        --rounds) rounds="$2" ;;
        --cli) case "$2" in /*) cli="$2" ;; *) cli="$start_dir/$2" ;; esac ;;
      esac
      shift ;;
    *) echo "check.sh: unknown argument '$1' (stages: $all_stages gputest; --save-cli, --budget S," \
            "--rounds N, --cli PATH, --cpu-smoke)" >&2
       exit 2 ;;
  esac
  shift
done
[ ${#stages[@]} -eq 0 ] && read -r -a stages <<< "$all_stages"
wants() { [[ " ${stages[*]} " == *" $1 "* ]]; }
elapsed() { echo $(($(date +%s) - start)); }
# Every long command runs under what is left of the budget (at least 10 s), so that the
# machine's own limit never cuts the call before the report and the archive are written.
tmo() {
  local left=$((budget - $(elapsed) - 20))
  [ $left -lt 10 ] && left=10
  timeout -k 10 "$left" "$@"
}
report="$out/report.md"
say() { printf '%s\n' "$*" | tee -a "$report"; }
failures=0
summary=() # one table row per stage

# A stage's outcome: a line now and a row of the summary table at the end.
#   outcome STAGE passed|FAILED|skipped SECONDS DETAIL [LOG]
outcome() {
  local stage=$1 result=$2 secs=$3 detail=$4 log=${5:-}
  say "- **$stage**: $result${secs:+ in $secs s}${detail:+: $detail}"
  summary+=("| $stage | $result | ${secs:-–} | ${detail:-} |")
  if [ "$result" = FAILED ]; then
    failures=$((failures + 1))
    if [ -n "$log" ] && [ -f "$log" ]; then
      say '```'; tail -25 "$log" | cut -c1-300 | tee -a "$report"; say '```'
    fi
  fi
}

: > "$report"
trap finish EXIT
trap 'exit 143' TERM INT # the EXIT trap then writes the archive and the summary
say "# lmprof GPU check ($(date -u +%Y-%m-%dT%H:%M:%SZ), stages: ${stages[*]}$(
  [ $smoke -eq 1 ] && echo ', CPU smoke'))"
say ""

# A Python with torch: the machine's, else the project's virtual environment (here).
py=python3
python3 -c "import torch" 2>/dev/null || { [ -x .venv/bin/python ] && py=$root/.venv/bin/python; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
say "## Machine"
say '```'
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id,clocks.max.sm,power.limit \
    --format=csv 2>&1
  "$py" -c "import torch, sys; print('python', sys.version.split()[0], '| torch', torch.__version__, \
'| CUDA', torch.version.cuda, '| device', torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none')" 2>&1
  nvcc --version 2>&1 | tail -1
  g++ --version 2>&1 | head -1
  cmake --version 2>&1 | head -1
  echo "cores $(nproc), GPUs $gpus, revision $(cat "$carry/revision" 2>/dev/null || git describe --always --dirty 2>/dev/null || echo unknown)"
} | tee -a "$report"
say '```'
say ""
say "## Stages"

# Where the GPU stages run: the GPU, or with --cpu-smoke this machine's CPU.
if [ $smoke -eq 1 ]; then
  device=cpu
  device_name=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
  no_device=""
elif [ "$gpus" -gt 0 ]; then
  device=cuda
  device_name=$gpu_name
  no_device=""
else
  device=cuda
  no_device="no GPU here (nvidia-smi lists none); --cpu-smoke runs it on the CPU"
fi

# --- dependencies: the carried Debian packages, unpacked into a prefix -------------------
# Always: lmprof-cli (built here or carried) loads glvnd's libEGL and libOpenGL from it, and
# they load libGLdispatch, which a RUNPATH does not reach (LD_LIBRARY_PATH below does).
if true; then
  rm -rf "$prefix" && mkdir -p "$prefix"
  debs=("$carry"/debs/*.deb)
  if [ -e "${debs[0]}" ]; then
    for f in "${debs[@]}"; do dpkg-deb -x "$f" "$prefix"; done
    say "- dependencies: ${#debs[@]} carried packages unpacked into $prefix"
  else
    say "- dependencies: none carried (run scripts/gpu/prepare.sh here first); using the system's"
  fi
fi
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The report's charts need an EGL vendor (the NVIDIA driver's); a machine without one writes
# the report without them, which the CLI's study test then accepts (docs/STUDY.md).
export LMPROF_TEST_CHARTS_MAY_BE_MISSING=1

# --- build ---------------------------------------------------------------------------------
# TORCH_CUDA_ARCH_LIST only tells LibTorch's CMake not to probe the GPU (lmprof compiles no
# kernels of its own); 9.0 is the lent machines' Hopper.
configure_and_build() { # targets...
  local torch_prefix
  torch_prefix=$("$py" -c "import torch.utils; print(torch.utils.cmake_prefix_path)") || return 1
  # The charts without the window (the study's report): ImGui's sources carried, EGL's and
  # OpenGL's headers and libraries among the carried packages (the build's RUNPATH names
  # them); the GPU driver's EGL draws, when the machine has it (docs/STUDY.md).
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLMPROF_BUILD_GUI=OFF \
    -DLMPROF_BUILD_CHARTS=ON -DLMPROF_IMGUI_BUNDLE_DIR="$root/$carry/imgui-bundle" \
    -DLMPROF_BUILD_TESTS=ON -DTorch_DIR="$torch_prefix/Torch" -DLMPROF_PYTHON="$(command -v "$py")" \
    -DCMAKE_PREFIX_PATH="$prefix/usr" -DTORCH_CUDA_ARCH_LIST=9.0 -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
    -DLMPROF_GIT_REVISION_OVERRIDE="$(cat "$carry/revision" 2>/dev/null || echo unknown)" &&
    tmo cmake --build "$build" -j"$(nproc)" ${1:+--target "$@"}
}
# torch 2.11's libtorch.so exports part of libstdc++ (docs/GPU_CHECK.md): every
# std::filesystem reference of our executables must carry libstdc++'s symbol version, or it
# may bind to that copy at run time. Sets `unversioned` to the executables that do not.
check_filesystem_binding() {
  unversioned=()
  for exe in "$build"/app/lmprof-cli "$build"/app/lmprof-engine.so "$build"/tests/*; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    nm -D --undefined-only "$exe" 2>/dev/null | grep 'St10filesystem' | grep -qv '@GLIBCXX' &&
      unversioned+=("${exe##*/}")
  done
}
built=0 # this call built the tests (gputest runs no binary an earlier call left)
if wants build; then
  t0=$(date +%s)
  if configure_and_build > "$art/build.log" 2>&1; then
    built=1
    check_filesystem_binding
    if [ ${#unversioned[@]} -eq 0 ]; then
      outcome build passed $(($(date +%s) - t0)) \
        "$(grep -c 'Building CXX' "$art/build.log") C++ files; std::filesystem bound to libstdc++"
    else
      outcome build FAILED $(($(date +%s) - t0)) \
        "std::filesystem references without libstdc++'s version in: ${unversioned[*]}"
    fi
  else
    outcome build FAILED $(($(date +%s) - t0)) "the end of build.log:" "$art/build.log"
  fi
fi
# gputest without the build stage: only what the GPU tests run, lmprof-cli and gpu_test
# (about 2.5 minutes on 16 cores, against over 3 for everything).
if wants gputest && ! wants build; then
  t0=$(date +%s)
  if configure_and_build lmprof-cli gpu_test > "$art/build.log" 2>&1; then
    built=1
    check_filesystem_binding
    if [ ${#unversioned[@]} -eq 0 ]; then
      say "- build (lmprof-cli and gpu_test): ok in $(($(date +%s) - t0)) s"
    else
      outcome build FAILED $(($(date +%s) - t0)) \
        "std::filesystem references without libstdc++'s version in: ${unversioned[*]}"
    fi
  else
    outcome build FAILED $(($(date +%s) - t0)) "lmprof-cli and gpu_test" "$art/build.log"
  fi
fi
if [ -z "$cli" ]; then
  cli="$root/$build/app/lmprof-cli"
  if [ ! -x "$cli" ] && [ -x "$carry/prebuilt/lmprof-cli" ]; then
    cli="$root/$carry/prebuilt/lmprof-cli"
    say "- lmprof-cli: the carried build from an earlier call"
  elif [ ! -x "$cli" ] && ! wants build && [ -n "$(printf '%s\n' "${stages[@]}" | grep -v test)" ]; then
    t0=$(date +%s)
    if configure_and_build lmprof-cli > "$art/build.log" 2>&1; then
      say "- build (lmprof-cli only): ok in $(($(date +%s) - t0)) s"
    else
      outcome build FAILED $(($(date +%s) - t0)) "lmprof-cli only" "$art/build.log"
    fi
  fi
fi

# Saved before the tests, so that a call cut short still brings it back.
if [ $save_cli -eq 1 ] && [ -x "$cli" ]; then
  strip -o "$out/lmprof-cli" "$cli" && say "- saved a stripped lmprof-cli ($(du -h "$out/lmprof-cli" | cut -f1))"
  strip -o "$out/lmprof-engine.so" "$(dirname "$cli")/lmprof-engine.so" &&
    say "- saved its stripped engine module ($(du -h "$out/lmprof-engine.so" | cut -f1))"
fi

# --- tests: everything else in parallel, then the GPU tests one at a time ----------------
# The GPU-labelled tests, one at a time, appended to LOG.
gpu_ctest() {
  tmo ctest --test-dir "$build" -L gpu -j1 --no-tests=error --output-on-failure --timeout 300 -V \
    >> "$1" 2>&1
}
# A ctest log's outcome lines, for the report.
ctest_lines() {
  grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)|\(Subprocess|Not Run|\*\*\*Skipped|SKIPPED \]" \
    "$1" | sed 's/^[0-9]*: //' | sort -u | head -60
}
if wants test && [ ! -d "$build" ]; then
  outcome test skipped "" "there is no build (name the build stage too)"
elif wants test; then
  t0=$(date +%s)
  : > "$art/ctest.log"
  # Many CPU tests at once: two intra-op threads each, or they oversubscribe the cores.
  OMP_NUM_THREADS=2 tmo ctest --test-dir "$build" -LE gpu -j"$(nproc)" --no-tests=error --output-on-failure \
    --timeout 300 >> "$art/ctest.log" 2>&1
  cpu_rc=$?
  gpu_ctest "$art/ctest.log"
  gpu_rc=$?
  lines=$(ctest_lines "$art/ctest.log")
  if [ $cpu_rc -eq 0 ] && [ $gpu_rc -eq 0 ]; then
    outcome test passed $(($(date +%s) - t0)) "other tests and GPU tests exit 0"
  else
    outcome test FAILED $(($(date +%s) - t0)) "other tests exit $cpu_rc, GPU tests exit $gpu_rc"
  fi
  say '```'; printf '%s\n' "$lines" | tee -a "$report"; say '```'
fi
if wants gputest && [ "$gpus" -eq 0 ]; then
  outcome gputest skipped "" "no GPU here (nvidia-smi lists none): every GPU test would skip"
elif wants gputest && { [ $built -eq 0 ] || [ ! -x "$build/tests/gpu_test" ]; }; then
  outcome gputest skipped "" "gpu_test was not built by this call"
elif wants gputest; then
  t0=$(date +%s)
  : > "$art/gpu-ctest.log"
  gpu_ctest "$art/gpu-ctest.log"
  rc=$?
  if [ $rc -eq 0 ]; then
    outcome gputest passed $(($(date +%s) - t0)) "the GPU-labelled tests exit 0"
  else
    outcome gputest FAILED $(($(date +%s) - t0)) "the GPU-labelled tests exit $rc"
  fi
  say '```'; ctest_lines "$art/gpu-ctest.log" | tee -a "$report"; say '```'
fi


# Runs one GPU stage's body (a function) with its log, or says why it cannot run.
#   gpu_stage NAME FUNCTION
gpu_stage() {
  local name=$1 body=$2 t0 rc
  wants "$name" || return 0
  if [ -n "$no_device" ]; then
    outcome "$name" skipped "" "$no_device"; return 0
  fi
  if [ ! -x "$cli" ]; then
    outcome "$name" skipped "" "no lmprof-cli (the build failed, or name the build stage)"; return 0
  fi
  local left=$((budget - $(elapsed) - 15))
  if [ $left -lt 30 ]; then
    outcome "$name" skipped "" "$left s of the --budget left"; return 0
  fi
  t0=$(date +%s)
  "$body" > "$art/$name.log" 2>&1
  rc=$?
  say ""
  say "### $name"
  say ""
  sed -n '/^==REPORT==$/,$p' "$art/$name.log" | sed 1d | tee -a "$report" > /dev/null
  say ""
  if [ $rc -eq 0 ]; then
    outcome "$name" passed $(($(date +%s) - t0)) "$(cat "$art/$name.detail" 2>/dev/null)"
  else
    outcome "$name" FAILED $(($(date +%s) - t0)) "exit $rc (artifacts/$name.log)" "$art/$name.log"
  fi
  rm -f "$art/$name.detail"
}
# In a stage body: what follows goes into the report too.
to_report() { echo "==REPORT=="; }
checks() { "$py" "$root/scripts/gpu/stage_checks.py" "$@"; }

# The configurations: a real one on the GPU, a tiny one for --cpu-smoke.
if [ $smoke -eq 1 ]; then
  profile_cfg=(--model tiny --ctx 64 --batch 2 --precision fp32 --warmup 1 --steps 2)
  run_cfg=(--model tiny --ctx 32 --batch 2 --warmup 1 --steps 3)
  ddp_cfg=(--backend gloo --model tiny --ctx 32 --batch 2 --warmup 1 --steps 3)
  ddp_sizes=(2)
else
  # GPU-bound (batch 16 × 512 tokens in fp32), so that kernels fill the phases' event time.
  profile_cfg=(--model small --ctx 512 --batch 16 --precision fp32 --warmup 2 --steps 3)
  run_cfg=(--model small --ctx 128 --batch 4 --warmup 2 --steps 5)
  ddp_cfg=(--backend nccl --model small --ctx 128 --batch 4 --warmup 2 --steps 5)
  ddp_sizes=(1)
  [ "$gpus" -ge 2 ] && ddp_sizes+=(2)
fi
smoke_flag=()
[ $smoke -eq 1 ] && smoke_flag=(--cpu)

stage_profile() {
  tmo "$cli" run "${profile_cfg[@]}" --mode train --profile-ops --profile-steps 2 --device "$device" \
    --json "$art/profile.json" -q 2> "$art/profile.stderr"
  local rc=$?
  cat "$art/profile.stderr" >&2
  [[ $rc == 0 ]] || return $rc
  # Kineto's thread error (op_profiler.cpp registers its client on the engine's thread).
  if grep -q "must run in same thread" "$art/profile.stderr"; then
    echo "Kineto printed its thread error: $(grep -m1 'same thread' "$art/profile.stderr")"
    return 1
  fi
  "$cli" ops "$art/profile.json" --by op --top 25 --format markdown > "$art/profile-kernels.md" &&
    "$cli" ops "$art/profile.json" --by region --format markdown > "$art/profile-regions.md" ||
    return
  ls "$art"/profile.*.trace.json > /dev/null || { echo "no trace beside profile.json"; return 1; }
  echo "trace $(du -h "$art"/profile.*.trace.json | cut -f1 | head -1)" > "$art/profile.detail"
  to_report
  checks profile "$art/profile.json" "${smoke_flag[@]}"
}
stage_lab() {
  tmo "$cli" precision accumulate --device "$device" --format markdown --json "$art/lab-accumulate.json" &&
    tmo "$cli" precision dtypes --model toy --device "$device" --format markdown \
      --json "$art/lab-dtypes.json" || return
  to_report
  checks lab "$art/lab-accumulate.json" "$art/lab-dtypes.json" "${smoke_flag[@]}"
}
stage_ddp() {
  local n rc=0
  for n in "${ddp_sizes[@]}"; do
    tmo "$cli" ddp --world-size "$n" "${ddp_cfg[@]}" --strategy naive,flat,bucketed --device "$device" \
      --json "$art/ddp-$n.json" -q || rc=1
  done
  to_report
  for n in "${ddp_sizes[@]}"; do
    echo "World size $n:"; echo
    checks ddp "$art/ddp-$n.json" "$n" || rc=1
    echo
  done
  echo "world sizes ${ddp_sizes[*]}" > "$art/ddp.detail"
  return $rc
}
stage_remote() {
  local state port pid rc=0
  state=$(mktemp -d)
  LMPROF_CONFIG_DIR="$state" "$cli" serve --listen 127.0.0.1:0 > "$art/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$art/serve.log" | head -1)
    [ -n "$port" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "lmprof-cli serve did not start:"; cat "$art/serve.log"; kill $pid 2>/dev/null
    return 1
  fi
  tmo "$cli" run --connect "127.0.0.1:$port" --token-file "$state/server/token" "${run_cfg[@]}" \
    --device "$device" --precision bf16 --json "$art/remote.json" -q || rc=1
  kill -INT $pid
  for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
  if kill -0 $pid 2>/dev/null; then
    echo "serve was still running 60 s after SIGINT: killed"; kill -9 $pid; rc=1
  fi
  wait $pid || { echo "serve exited $? after SIGINT"; rc=1; }
  rm -rf "$state"
  to_report
  checks remote "$art/remote.json" "$device_name" --precision bf16 || rc=1
  return $rc
}
# Each sweep is one lmprof-cli process (a configuration that runs out of memory skips the
# larger ones of its family); a sweep cut by the budget keeps the runs it finished (--autosave
# appends each). Then the C++/Python comparison of the issue's goals.
stage_variants() {
  local rc=0 sweeps
  if [ $smoke -eq 1 ]; then
    sweeps=("--models tiny --ctx 32,64 --batch 1,4 --precision fp32 --attention naive,sdpa")
  else
    sweeps=(
      "--models small --ctx 128 --batch 1,4,16,64 --precision bf16 --attention naive,sdpa --cuda-graphs off,on"
      "--models small --ctx 128,256,512,1024 --batch 4,16 --precision fp32 --tf32 off,on --attention sdpa"
      "--models xl --ctx 512,1024 --batch 4,16,32 --precision bf16 --attention naive,sdpa"
      "--models 2.7B --ctx 512 --batch 1,4,8 --precision bf16,fp32 --tf32 on --attention sdpa"
    )
  fi
  local i=0 status oom_sweeps=0
  for sweep in "${sweeps[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    tmo "$cli" sweep $sweep --warmup 3 --steps 10 --device "$device" --telemetry-hz 10 \
      --autosave "$art/variants-$i.jsonl" -q > /dev/null
    status=$?
    # Exit 3: a run ended out of memory. The sweeps reach past what fits on purpose (the
    # largest batches of xl and 2.7B), and such a run is a row of the table, not a failure.
    case $status in
      0) ;;
      3) oom_sweeps=$((oom_sweeps + 1)) ;;
      *) rc=1 ;;
    esac
  done
  to_report
  for f in "$art"/variants-*.jsonl; do
    [ -f "$f" ] && "$cli" show "$f" --format markdown
  done
  local py_cfg=(--device "$device" --models small --ctx 128 --batch 4 --precision bf16
                --attention sdpa --rounds "$rounds" --warmup 5 --steps 20 --threads 8)
  [ $smoke -eq 1 ] && py_cfg=(--device cpu --models tiny --ctx 64 --batch 2 --attention sdpa
                              --rounds 2 --warmup 2 --steps 3)
  echo
  echo "Engine eager against the idiomatic eager script:"
  tmo "$py" bench/compare_python.py --cli "$cli" "${py_cfg[@]}" --variants idiomatic,idiomatic-sdpa \
    || rc=1
  if [ $smoke -eq 0 ]; then
    echo
    echo "Engine with CUDA graphs against idiomatic, SDPA, torch.compile and reduce-overhead:"
    tmo "$py" bench/compare_python.py --cli "$cli" "${py_cfg[@]}" --cuda-graphs on \
      --variants idiomatic,idiomatic-sdpa,compile,reduce-overhead || rc=1
  fi
  echo "${#sweeps[@]} sweeps ($oom_sweeps with runs out of memory), $rounds alternating rounds" \
    > "$art/variants.detail"
  return $rc
}
stage_watch() {
  local rc=0 lm=(--steps 20 --batch 4 --ctx 128) engine_id watched_id
  [ $smoke -eq 1 ] && lm=(--steps 10 --batch 2 --ctx 32 --tiny)
  # The package from this tree, whichever lmprof-cli runs (a carried one was built elsewhere).
  export LMPROF_PYTHON_PACKAGE="$root/python/src"
  PYTHONPATH="$root/python/src${PYTHONPATH:+:$PYTHONPATH}" tmo "$py" "$root/python/tests/test_gpu.py" \
    > "$art/watch-gpu-tests.txt" 2>&1 || rc=1
  tmo "$cli" watch --json "$art/watched.json" --tokens-per-step $((${lm[3]} * ${lm[5]})) \
    --warmup 5 --quiet -- "$py" "$root/scripts/gpu/watched_lm.py" --device "$device" "${lm[@]}" ||
    rc=1
  tmo "$cli" run --model "$([ $smoke -eq 1 ] && echo tiny || echo small)" --ctx "${lm[5]}" \
    --batch "${lm[3]}" --warmup 5 --steps 15 --device "$device" --json "$art/watch-engine.json" -q ||
    rc=1
  to_report
  echo "The watcher's own GPU tests:"; echo; echo '```'; cat "$art/watch-gpu-tests.txt"; echo '```'
  echo
  engine_id=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["id"])' \
    "$art/watch-engine.json" 2>/dev/null)
  watched_id=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["id"])' \
    "$art/watched.json" 2>/dev/null)
  echo "The CS336-style script watched, against the engine's run of the same size:"; echo
  "$cli" show "$art/watched.json" --format markdown || rc=1
  echo
  "$cli" compare "$art/watch-engine.json:$engine_id" "$art/watched.json:$watched_id" \
    --format markdown || rc=1
  # The instruments inside the model on CUDA (docs/WATCH.md): kernels by module, the
  # allocator's snapshot, the memory timeline, time per module, and the reference per phase.
  echo; echo "The same script with every instrument, against the reference:"; echo
  tmo "$cli" watch --json "$art/watched-inside.json" --warmup 5 --quiet --format markdown \
    --profile-ops 6 --memory-snapshot 7 --memory-hz 100 --time-modules 2 --against-reference \
    -- "$py" "$root/scripts/gpu/watched_lm.py" --device "$device" "${lm[@]}" || rc=1
  "$cli" ops "$art/watched-inside.json" --by region --top 8 --format markdown || rc=1
  echo "watched ${lm[*]}" > "$art/watch.detail"
  return $rc
}
stage_study() {
  local budget_arg=5m
  [ $smoke -eq 1 ] && budget_arg=20s
  tmo "$cli" study --device "$device" --budget "$budget_arg" --out "$art/study" -q
  local rc=$?
  to_report
  cat "$art/study/report.md" 2>/dev/null
  echo "budget $budget_arg" > "$art/study.detail"
  return $rc
}
stage_bench() {
  local left=$((budget - $(elapsed) - 15)) extra=()
  [ $smoke -eq 1 ] && extra=(--quick)
  PYTHONUNBUFFERED=1 tmo "$py" bench/gpu_bench.py --cli "$cli" --out "$art" --budget-s "$left" \
    --rounds "$rounds" "${extra[@]}"
  local rc=$?
  to_report
  cat "$art/bench.md" 2>/dev/null
  echo "$rounds alternating rounds" > "$art/bench.detail"
  return $rc
}

# What the device tool brings back: at most 8 files of at most 16 MiB each. Written on any
# exit (the end, an error, a signal), so a call cut short still says what it did.
finish() {
  local status=$?
  trap - EXIT
  tar -czf "$out/artifacts.tar.gz" -C "$out" artifacts && rm -rf "$art"
  large=$(find "$out" -maxdepth 1 -type f -size +16M -printf '%f ')
  [ -n "$large" ] && say "- warning: over 16 MiB, will not come back: $large"
  say ""
  say "## Summary"
  say ""
  say "| stage | outcome | seconds | detail |"
  say "|---|---|---:|---|"
  for row in "${summary[@]}"; do say "$row"; done
  say ""
  say "Total $(elapsed) s, $failures failing stage(s). Logs and result sets: artifacts.tar.gz."
  if [ $failures -eq 0 ] && [ $status -eq 0 ]; then exit 0; else exit 1; fi
}

gpu_stage profile stage_profile
gpu_stage lab stage_lab
gpu_stage ddp stage_ddp
gpu_stage remote stage_remote
gpu_stage variants stage_variants
gpu_stage watch stage_watch
gpu_stage study stage_study
gpu_stage bench stage_bench
