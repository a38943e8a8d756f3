#!/usr/bin/env python3
"""Every C++ and CUDA file of the repository is as clang-format leaves it (.clang-format).

The layout is checked with the clang-format that Debian 12 ships (major version 14, which
scripts/setup.sh installs): another major version lays some constructs out differently, so
with no clang-format 14 on the machine the check is skipped (exit 77) rather than judged by
a different formatter. Exit 1 naming each file that differs and the command that fixes it;
0 with the count checked.

Usage: formatting.py [repo root]
       formatting.py --self-test   (a made-up badly laid-out file must fail, a good one pass)
"""
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from large_files import repository_files  # noqa: E402

MAJOR = 14
SUFFIXES = (".cpp", ".h", ".cu", ".cuh", ".hpp", ".cc")
SKIPPED = ("third_party/",)
SKIP = 77


def formatter() -> str | None:
    """The path of a clang-format of the pinned major version, or None."""
    for name in (f"clang-format-{MAJOR}", "clang-format"):
        path = shutil.which(name)
        if not path:
            continue
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        found = re.search(r"version (\d+)\.", out)
        if found and int(found.group(1)) == MAJOR:
            return path
    return None


def unformatted(tool: str, root: Path, files: list[str]) -> list[str]:
    """The files clang-format would change."""
    differ = []
    for rel in files:
        result = subprocess.run([tool, "--style=file", "--dry-run", "-Werror", str(root / rel)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            differ.append(rel)
    return differ


def check(tool: str, root: Path) -> int:
    files = [f for f in repository_files(root)
             if f.endswith(SUFFIXES) and not f.startswith(SKIPPED) and (root / f).is_file()]
    differ = unformatted(tool, root, files)
    for rel in differ:
        print(f"{rel}: not as clang-format {MAJOR} lays it out (fix: clang-format -i {rel})")
    if not differ:
        print(f"{len(files)} C++ and CUDA files, all as clang-format {MAJOR} lays them out")
    return 1 if differ else 0


def self_test(tool: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copy(Path(__file__).resolve().parents[2] / ".clang-format", root)
        (root / "good.cpp").write_text("int add(int a, int b) {\n    return a + b;\n}\n")
        if check(tool, root) != 0:
            print("self-test: a well laid-out file was refused")
            return 1
        (root / "bad.cpp").write_text("int  add(int a,int b){return a+b;}\n")
        if check(tool, root) != 1:
            print("self-test: a badly laid-out file was not refused")
            return 1
    print("self-test: passed")
    return 0


if __name__ == "__main__":
    tool = formatter()
    if tool is None:
        print(f"no clang-format {MAJOR} on this machine (scripts/setup.sh installs it): skipped")
        sys.exit(SKIP)
    if "--self-test" in sys.argv[1:]:
        sys.exit(self_test(tool))
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sys.exit(check(tool, Path(args[0]) if args else Path(__file__).resolve().parents[2]))
