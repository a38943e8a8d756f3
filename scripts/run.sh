#!/usr/bin/env bash
# The main job: set up and build if needed, then benchmark the default configuration
# (tiny model, train mode, on the GPU if there is one) and print the table.
# Extra arguments go to `lmprof-cli run`, e.g.: scripts/run.sh --model small --precision bf16
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh default
exec build/app/lmprof-cli run "$@"
