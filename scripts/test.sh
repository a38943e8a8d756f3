#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (ctest). Used by .ci/run. Then the hardening
# checks of docs/LIMITS.md: the engine and CLI tests again under ASan + UBSan (build-asan),
# and every fuzz target for LMPROF_FUZZ_SECONDS (default 30) from its seed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh default
ctest --preset default
scripts/sanitize.sh
scripts/fuzz.sh "${LMPROF_FUZZ_SECONDS:-30}"
