#!/usr/bin/env bash
# Builds lmprof with AddressSanitizer + UndefinedBehaviorSanitizer (the asan preset:
# build-asan, no window) and runs the engine and CLI tests under it, GPU tests excluded.
# A sanitizer report fails the test it happens in. docs/LIMITS.md.
#   scripts/sanitize.sh [ctest arguments, e.g. -R Cli]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset asan >/dev/null
nice cmake --build --preset asan -- -j"${LMPROF_JOBS:-2}"
ctest --preset asan "$@"
