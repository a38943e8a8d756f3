#!/usr/bin/env bash
# The viewer build (docs/INSTALL.md): the window and lmprof-cli without LibTorch or CUDA, in
# build-viewer. Configures and builds the viewer preset, prints how long that took and how
# large the programs are, then runs the viewer's own tests (a full build's lmprof-cli,
# build/app/lmprof-cli when there is one, serves their connect part) and compiles its
# sources with clang as ISO C++20 (scripts/pedantic.py).
#   scripts/viewer.sh            (CI's "viewer build and tests" stage; scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
full_cli="$PWD/build/app/lmprof-cli"
[ -x "$full_cli" ] || full_cli=""
cmake --preset viewer -DLMPROF_BUILD_TESTS=ON -DLMPROF_FULL_CLI="$full_cli" > /dev/null
cmake --build --preset viewer -j2
built=$((SECONDS - start))
printf '[viewer] built in %d s; lmprof %s, lmprof-cli %s\n' "$built" \
  "$(du -h build-viewer/app/lmprof | cut -f1)" "$(du -h build-viewer/app/lmprof-cli | cut -f1)" >&2
linked=$(ldd build-viewer/app/lmprof build-viewer/app/lmprof-cli)
if [[ $linked == *libtorch* || $linked == *libc10* ]]; then
  echo "[viewer] a viewer program links LibTorch:" >&2
  grep -E 'libtorch|libc10' <<< "$linked" >&2
  exit 1
fi
ctest --preset viewer
# GCC-only code in the viewer's sources fails here, not on a port (docs/INSTALL.md).
.venv/bin/python scripts/pedantic.py --self-test
.venv/bin/python scripts/pedantic.py build-viewer
