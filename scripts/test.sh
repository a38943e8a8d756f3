#!/usr/bin/env bash
# The README's test command, and CI's (.ci/run): sets up and builds (scripts/setup.sh), runs
# the whole ctest suite and the Python package's tests (pytest, with the training frameworks
# the watcher is checked against) and linters (ruff, mypy --strict), then the hardening
# checks of docs/LIMITS.md: the engine and CLI tests again under ASan + UBSan (build-asan),
# and every fuzz target for LMPROF_FUZZ_SECONDS (default 30) from its seed corpus. Prints the
# time of each stage and the slowest tests beside their limits (docs/TESTING.md). Before the
# sanitizers, the viewer build (no LibTorch, docs/INSTALL.md) is built and tested.
set -euo pipefail
cd "$(dirname "$0")/.."

stages=()
stage() { # stage NAME COMMAND...: runs it, remembers how long it took
  local name=$1 start=$SECONDS
  shift
  printf '[test] %s\n' "$name" >&2
  "$@"
  stages+=("$(printf '%-33s %5d s' "$name" $((SECONDS - start)))")
}

stage "set-up and build" scripts/setup.sh default
stage "ctest" ctest --preset default --output-junit "$PWD/build/ctest-junit.xml"
.venv/bin/python scripts/slowest_tests.py build/ctest-junit.xml build 10 || true
# The frameworks the watcher is checked against (python/tests/frameworks.txt), into the test
# environment only, with its torch and numpy held where they are; offline, their tests skip
# and say why.
frameworks() {
  .venv/bin/python -m pip install -q -r python/tests/frameworks.txt \
    -c <(.venv/bin/python -m pip freeze | grep -E '^(torch|numpy)==') ||
    echo "[test] the frameworks could not be installed: their tests will skip" >&2
}
stage "frameworks (pip)" frameworks
# test_serve_hostile.py runs in ctest (watch_live_server_hostile_clients), not twice
stage "pytest (python/)" .venv/bin/python -m pytest -q -p no:cacheprovider python/tests \
  --ignore=python/tests/test_serve_hostile.py
# The package's linters (python/tests/lint.txt), configured in python/pyproject.toml. Pinned
# as torch is, not optional as the frameworks are: should they not install, the stage fails.
python_lint() {
  .venv/bin/python -m pip install -q -r python/tests/lint.txt
  (cd python && ../.venv/bin/ruff check --quiet && ../.venv/bin/mypy)
}
stage "python lint (ruff, mypy --strict)" python_lint
# The viewer build (no LibTorch) and its tests, served by this build's engine.
stage "viewer build and tests" scripts/viewer.sh
# The installs without root: pip install ./viewer, and the node preset's engine, each as an
# unprivileged user with Debian's copies of their libraries hidden.
stage "rootless installs" scripts/rootless.sh
stage "ASan + UBSan build and tests" scripts/sanitize.sh
stage "fuzz targets" scripts/fuzz.sh "${LMPROF_FUZZ_SECONDS:-30}"

printf '[test] passed; time by stage:\n' >&2
printf '  %s\n' "${stages[@]}" >&2
printf '  %-33s %5d s\n' "total" "$SECONDS" >&2
