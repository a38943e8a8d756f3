#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (ctest). Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh default
ctest --preset default
