"""The viewer's own sources (lmprof_core, lmprof_remote, lmprof_ui, app/) compiled by clang as
ISO C++20 with -pedantic-errors, so GCC-only code fails here rather than on a port
(docs/INSTALL.md, "Portability"). Syntax only, with each file's flags from the build's
compile_commands.json, where third-party headers are system headers.

    pedantic.py [BUILD_DIR]   (default build-viewer; scripts/viewer.sh runs it)
    pedantic.py --self-test   (proves the flags refuse GNU C++: a VLA, a statement expression)
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = tuple(f"{ROOT.resolve()}/{d}/" for d in ("engine", "ui", "app"))


def clang_command(entry: dict[str, str], clang: str) -> list[str]:
    args = shlex.split(entry["command"])[1:]
    kept: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "-o":
            skip = True  # the object GCC would write; clang writes none
        elif a != "-c":
            kept.append(a)
    return [clang, *kept, "-std=c++20", "-pedantic-errors", "-fsyntax-only"]


GNU_ONLY = "int f(int n) { int a[n]; a[0] = ({ 1; }); return a[0]; }\n"


def self_test(clang: str) -> int:
    entry = {"command": "c++ -x c++ -c -", "directory": str(ROOT)}
    done = subprocess.run(clang_command(entry, clang), input=GNU_ONLY, capture_output=True,
                          text=True)
    if done.returncode == 0:
        print("[pedantic] self-test FAILED: GNU C++ passed the check", file=sys.stderr)
        return 1
    print("[pedantic] self-test: GNU C++ is refused", file=sys.stderr)
    return 0


def main() -> int:
    clang = shutil.which("clang++-14") or shutil.which("clang++")
    if not clang:
        # A person's machine may lack clang; CI's must not skip silently.
        print("[pedantic] no clang++" + (": FAILED in CI" if os.environ.get("CI") else
                                        ": skipped"), file=sys.stderr)
        return 1 if os.environ.get("CI") else 0
    if sys.argv[1:] == ["--self-test"]:
        return self_test(clang)
    build = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build-viewer")
    entries = [e for e in json.loads((build / "compile_commands.json").read_text())
               if str(Path(e["file"]).resolve()).startswith(OURS)]
    if not entries:
        print(f"[pedantic] no file of engine/, ui/ or app/ in {build}/compile_commands.json",
              file=sys.stderr)
        return 1

    def check(entry: dict[str, str]) -> str:
        done = subprocess.run(clang_command(entry, clang), cwd=entry["directory"],
                              capture_output=True, text=True)
        return "" if done.returncode == 0 else done.stderr

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [out for out in pool.map(check, entries) if out]
    if failures:
        for out in failures[:5]:
            print(out[:2000], file=sys.stderr)
        print(f"[pedantic] {len(failures)} of {len(entries)} files are not ISO C++20",
              file=sys.stderr)
        return 1
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout
    print(f"[pedantic] {len(entries)} files are ISO C++20 to {version.splitlines()[0]}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
