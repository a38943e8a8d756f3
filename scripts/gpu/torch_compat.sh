#!/usr/bin/env bash
# Compiles every engine source against another torch release's headers (default 2.11.0,
# the GPU machines' torch), here, without a GPU: downloads that wheel with pip (no
# dependencies), unpacks its headers into build/torch-compat/<version>/, then reruns each
# engine source's own compile command from build/compile_commands.json with the torch
# include directories swapped and -fsyntax-only. Needs a configured build (scripts/setup.sh).
# Usage: bash scripts/gpu/torch_compat.sh [VERSION]          See docs/GPU_CHECK.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${1:-2.11.0}"
dir="build/torch-compat/$version"
python_bin=.venv/bin/python
[ -f build/compile_commands.json ] || { echo "no build/compile_commands.json: run scripts/setup.sh" >&2; exit 2; }

if [ ! -d "$dir/torch/include" ]; then
  mkdir -p "$dir"
  pyver=$("$python_bin" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  "$python_bin" -m pip download --quiet --no-deps --only-binary=:all: --python-version "$pyver" \
    --platform manylinux_2_28_x86_64 "torch==$version" -d "$dir"
  (cd "$dir" && unzip -q -o torch-*.whl 'torch/include/*' 'torch/version.py' && rm -f torch-*.whl)
fi
echo "torch headers: $(grep __version__ "$dir/torch/version.py")"

"$python_bin" - "$dir" <<'PY'
import json, pathlib, re, shlex, subprocess, sys
compat = str(pathlib.Path(sys.argv[1]).resolve() / "torch" / "include")
entries = [e for e in json.load(open("build/compile_commands.json"))
           if "/engine/src/" in e["file"]]
failed = []
for e in entries:
    args = shlex.split(e["command"])
    if "-o" in args:  # write nothing: -fsyntax-only
        i = args.index("-o")
        del args[i:i + 2]
    # Include paths into our torch's headers point at the other release's instead.
    args = [re.sub(r"/\S*/site-packages/torch/include", compat, a) for a in args]
    r = subprocess.run(args + ["-fsyntax-only"], cwd=e["directory"], capture_output=True,
                       text=True)
    name = pathlib.Path(e["file"]).resolve().relative_to(pathlib.Path.cwd())
    print(f"{'ok  ' if r.returncode == 0 else 'FAIL'} {name}", flush=True)
    if r.returncode:
        failed.append(name)
        print(r.stderr[-3000:])
print(f"{len(entries) - len(failed)}/{len(entries)} engine sources compile against the "
      f"headers in {compat}")
sys.exit(1 if failed else 0)
PY
