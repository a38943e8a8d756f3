#!/usr/bin/env bash
# Builds the fuzz targets (tests/fuzz: libFuzzer + ASan + UBSan, clang from Debian) into
# build-fuzz and runs each for SECONDS (default 20) from its seed corpus. Exit 0 only if no
# target found anything; a finding is saved as build-fuzz/crash-<target>-<hash>.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
cmake -S tests/fuzz -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLMPROF_FUZZ_SECONDS="$seconds" >/dev/null
nice cmake --build build-fuzz -j2
# Two targets at a time: each runs for a fixed time, so this halves the stage on two cores.
ctest --test-dir build-fuzz --output-on-failure -j2 --timeout $((seconds * 3 + 120))
