#!/usr/bin/env python3
"""No file over 1 MiB in the repository, outside docs/ and the tests' data.

A trace, a result set or a screenshot committed by mistake stays in every clone forever. The
files checked are the repository's (git ls-files, tracked and untracked but not ignored),
or, outside a git checkout, every file under the root but the build folders. Exit 1 naming
each file over the limit with its size; 0 with the count checked.

Usage: large_files.py [repo root]
       large_files.py --self-test   (a made-up tree with a large stray must fail)
"""
import subprocess
import sys
import tempfile
from pathlib import Path

LIMIT = 1 << 20
# Where large files belong: documentation (screenshots) and the tests' inputs.
ALLOWED = ("docs/", "tests/fuzz/corpus/", "tests/data/")
SKIPPED_DIRS = {".git", ".venv", "build", "build-asan", "build-fuzz", "__pycache__"}


def repository_files(root: Path) -> list[str]:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"], check=True, capture_output=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for path in root.rglob("*"):
            rel = path.relative_to(root)
            if path.is_file() and not SKIPPED_DIRS.intersection(rel.parts):
                files.append(rel.as_posix())
        return files


def too_large(root: Path, files: list[str]) -> list[tuple[str, int]]:
    found = []
    for rel in files:
        path = root / rel
        if rel.startswith(ALLOWED) or not path.is_file() or path.is_symlink():
            continue
        size = path.stat().st_size
        if size > LIMIT:
            found.append((rel, size))
    return found


def check(root: Path) -> int:
    files = repository_files(root)
    found = too_large(root, files)
    for rel, size in found:
        print(f"{rel}: {size / 2**20:.1f} MiB, over the 1 MiB limit outside docs/ and the "
              f"tests' data (a stray trace or result set? move or remove it)")
    if not found:
        print(f"{len(files)} files, none over 1 MiB outside docs/ and the tests' data")
    return 1 if found else 0


def self_test() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "docs" / "window.png").write_bytes(b"x" * (LIMIT + 1))
        (root / "small.txt").write_text("fine")
        if check(root) != 0:
            print("self-test: a large file under docs/ was refused")
            return 1
        (root / "tiny-ctx32.trace.json").write_bytes(b"{" * (LIMIT + 1))
        if check(root) != 1:
            print("self-test: a large stray at the root was not refused")
            return 1
    print("self-test: passed")
    return 0


if __name__ == "__main__":
    if "--self-test" in sys.argv[1:]:
        sys.exit(self_test())
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sys.exit(check(Path(args[0]) if args else Path(__file__).resolve().parents[2]))
