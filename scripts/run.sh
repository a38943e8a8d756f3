#!/usr/bin/env bash
# The main job: set up and build if needed, then open the lmprof window. Arguments go to
# lmprof (the same run options as `lmprof-cli run`, plus --autorun, --screenshot FILE and
# --exit-when-done). Without a display lmprof runs the benchmark in the terminal instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh default
exec build/app/lmprof "$@"
