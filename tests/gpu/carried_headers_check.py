"""Does the GPU check kit carry everything its build looks up? (docs/GPU_CHECK.md)

The lent GPU machine has CUDA, CMake, g++ and a Python with torch, but none of Debian's -dev
packages. scripts/gpu/prepare.sh carries the packages named in
scripts/gpu/carried-packages.txt. This check reads the project's CMake files the way the
kit's configure does (check.sh: LMPROF_BUILD_GUI=OFF, tests on, LibTorch with CUDA), from
the top-level CMakeLists.txt through add_subdirectory and include, and lists every lookup
it reaches: find_path, find_library, find_package and pkg_check_modules. Each must be
  - served by the GPU machine itself: LibTorch and its CUDA (a lookup whose hints name
    torch, CUDA or the wheel's nvidia folder), or the toolchain (Threads, Git, Python3), or
  - held by a carried package: a file of that package (dpkg -L; the packages are installed
    here by scripts/setup.sh) is the header, the library, the <Name>Config.cmake or the
    <module>.pc the lookup asks for.
Anything else fails the check, naming the lookup and where it is, so a new dependency breaks
CI here and not the loan there.

  python3 tests/gpu/carried_headers_check.py [--without PKG]...
--without leaves a package out of the carried list (the ctest entry that proves the check
can fail leaves out libasio-dev and expects asio.hpp to be reported).

  python3 tests/gpu/carried_headers_check.py --docs
checks instead that docs/GPU_CHECK.md names, in its table of CUDA paths, every source under
engine/src that mentions CUDA, NCCL or NVML (the *_absent.cpp stand-ins of CPU-only builds
aside): a CUDA path without a stage of the kit is a defect.
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CARRIED = ROOT / "scripts" / "gpu" / "carried-packages.txt"

# The kit's configure (scripts/gpu/check.sh) sets these; other conditions count as taken.
KIT_OPTIONS = {"LMPROF_BUILD_GUI": False, "LMPROF_BUILD_TESTS": True,
               "LMPROF_SANITIZE_BUILD": False, "LMPROF_TORCH_HAS_CUDA": True}
# Packages the GPU machine provides without the kit: its torch, its toolchain.
SERVED_PACKAGES = {"Torch": "the GPU machine's torch", "Threads": "the C library",
                   "Git": "optional (QUIET); the kit passes the revision instead",
                   "Python3": "the GPU machine's Python", "CUDAToolkit": "the CUDA toolkit"}
# CMake's own find modules: every file each asked-for component needs (by path ending).
FIND_MODULES = {"OpenGL": {"OpenGL": ["GL/gl.h", "libOpenGL.so"], "EGL": ["EGL/egl.h", "libEGL.so"],
                           "GLX": ["GL/glx.h", "libGLX.so"]}}
# A find_path/find_library whose hints name one of these looks in torch or CUDA.
SERVED_HINTS = re.compile(r"TORCH_|Torch|CUDA|/usr/local/cuda|_nvidia_dir|nvidia")
KEYWORDS = {"NAMES", "HINTS", "PATHS", "PATH_SUFFIXES", "DOC", "NO_DEFAULT_PATH", "REQUIRED",
            "NO_CACHE", "NO_CMAKE_PATH", "NO_CMAKE_ENVIRONMENT_PATH", "NO_SYSTEM_ENVIRONMENT_PATH",
            "NO_CMAKE_SYSTEM_PATH", "CMAKE_FIND_ROOT_PATH_BOTH", "ONLY_CMAKE_FIND_ROOT_PATH",
            "NO_CMAKE_FIND_ROOT_PATH", "NO_PACKAGE_ROOT_PATH", "ENV"}


def commands(path):
    """Yields (name, args, line) for each command of a CMake file; comments are skipped."""
    text = path.read_text()
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c.isalpha() or c == "_":
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i:])
            name = m.group(0)
            j = i + len(name)
            while j < n and text[j] in " \t":
                j += 1
            if j >= n or text[j] != "(":
                i = j
                continue
            depth, k, args, start_line, quoted = 0, j, [], line, False
            while k < n:
                ch = text[k]
                if ch == "\n":
                    line += 1
                if ch == '"' and text[k - 1] != "\\":
                    quoted = not quoted
                elif not quoted and ch == "#":
                    e = text.find("\n", k)
                    k = n if e < 0 else e
                    continue
                elif not quoted and ch == "(":
                    depth += 1
                elif not quoted and ch == ")":
                    depth -= 1
                    if depth == 0:
                        break
                args.append(ch)
                k += 1
            yield name.lower(), "".join(args[1:]), start_line
            i = k + 1
        else:
            i += 1


def condition_value(cond):
    """True/False for a condition on one of the kit's options, None when unknown."""
    words = cond.split()
    negate = len(words) == 2 and words[0] == "NOT"
    var = words[-1] if len(words) in (1, 2) and (len(words) == 1 or negate) else None
    if var not in KIT_OPTIONS:
        return None
    return KIT_OPTIONS[var] != negate


def lookups(path, found, seen):
    """Appends (kind, args, file:line) for each lookup the kit's configure reaches."""
    if path in seen or not path.is_file():
        return
    seen.add(path)
    stack = []  # per open if: [value of the branch taken now, any earlier branch known true]
    for name, args, line in commands(path):
        if name == "if":
            v = condition_value(args)
            stack.append([v, v is True])
            continue
        if name == "elseif" and stack:
            v = None if stack[-1][1] is True else condition_value(args)
            stack[-1] = [False if stack[-1][1] else v, stack[-1][1] or v is True]
            continue
        if name == "else" and stack:
            earlier = stack[-1][0]
            stack[-1][0] = False if stack[-1][1] else (None if earlier is None else not earlier)
            continue
        if name == "endif" and stack:
            stack.pop()
            continue
        if any(v is False for v, _ in stack):
            continue
        where = f"{path.relative_to(ROOT)}:{line}"
        words = args.replace('"', " ").split()
        if name == "add_subdirectory" and words:
            lookups(path.parent / words[0] / "CMakeLists.txt", found, seen)
        elif name == "include" and words:
            target = words[0]
            for candidate in (path.parent / target, ROOT / "cmake" / f"{target}.cmake"):
                if candidate.is_file():
                    lookups(candidate, found, seen)
                    break
        elif name in ("find_path", "find_library", "find_package", "pkg_check_modules"):
            found.append((name, words, args, where))


def wanted_files(kind, words):
    """The file names (as path endings) that satisfy a lookup."""
    if kind == "find_package":
        n = words[0]
        return [f"{n}Config.cmake", f"{n.lower()}-config.cmake"]
    if kind == "pkg_check_modules":
        mods = [w for w in words[1:] if w not in ("REQUIRED", "QUIET", "IMPORTED_TARGET",
                                                   "GLOBAL", "NO_CMAKE_PATH")]
        return [f"{m}.pc" for m in mods]
    names = words[1:]
    if "NAMES" in names:
        names = names[names.index("NAMES") + 1:]
    out = []
    for w in names:
        if w in KEYWORDS:
            break
        out += [w] if kind == "find_path" else [f"lib{w}.so", f"lib{w}.a"]
    return out


def package_files(package):
    try:
        proc = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.split("\n")


def check_docs():
    doc = (ROOT / "docs" / "GPU_CHECK.md").read_text()
    src = ROOT / "engine" / "src"
    sources = sorted(f for f in src.rglob("*.cpp") if not f.name.endswith("_absent.cpp") and
                     re.search(r"cuda|nccl|nvml", f.read_text(), re.IGNORECASE))
    missing = [str(f.relative_to(src)) for f in sources
               if f"`{f.relative_to(src)}`" not in doc]
    for m in missing:
        print(f"NOT IN docs/GPU_CHECK.md: engine/src/{m} mentions CUDA, NCCL or NVML; name it "
              f"in the table of CUDA paths with the stage that runs it")
    print(f"{len(sources)} CUDA sources, {len(missing)} without a stage")
    return 1 if missing or not sources else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--without", action="append", default=[],
                        help="leave this package out of the carried list")
    parser.add_argument("--docs", action="store_true",
                        help="check docs/GPU_CHECK.md's table of CUDA paths instead")
    args = parser.parse_args()
    if args.docs:
        return check_docs()

    carried = [line.split("#")[0].strip() for line in CARRIED.read_text().splitlines()]
    carried = [p for p in carried if p and p not in args.without]
    files = {p: package_files(p) for p in carried}
    if carried and all(f is None for f in files.values()):
        # The lent GPU machine: the packages are unpacked into a prefix there, not installed,
        # and its build is what checks them. Skipped (ctest's SKIP_RETURN_CODE).
        print("none of the carried packages is installed here (dpkg -L): skipped")
        return 77
    problems = []
    for p in carried:
        if files[p] is None:
            problems.append(f"carried package {p} is not installed here (scripts/setup.sh "
                            f"installs the kit's packages), so its files cannot be checked")

    found = []
    lookups(ROOT / "CMakeLists.txt", found, set())
    if not found:
        problems.append("no lookup found in the CMake files: the reader is broken")
    for kind, words, raw, where in found:
        what = f"{kind}({' '.join(words[:2])})"
        if kind == "find_package" and words[0] in SERVED_PACKAGES:
            print(f"served   {what:48} {SERVED_PACKAGES[words[0]]}  [{where}]")
            continue
        if kind in ("find_path", "find_library") and SERVED_HINTS.search(raw):
            print(f"served   {what:48} torch or the CUDA toolkit (its hints)  [{where}]")
            continue
        if kind == "find_package" and words[0] in FIND_MODULES:
            module = FIND_MODULES[words[0]]
            parts = words[words.index("COMPONENTS") + 1:] if "COMPONENTS" in words else ["OpenGL"]
            for part in parts:
                for w in module.get(part, []):
                    holder = next((p for p in carried if files[p] and any(
                        f.endswith("/" + w) for f in files[p])), None)
                    if holder:
                        print(f"carried  {what + ' ' + part + ': ' + w:48} {holder}  [{where}]")
                    else:
                        problems.append(f"{what} at {where} needs {w} for {part}, which no "
                                        f"carried package holds: add its Debian package to "
                                        f"scripts/gpu/carried-packages.txt")
            continue
        wanted = wanted_files(kind, words)
        holder = next((p for p in carried if files[p] and any(
            f.endswith("/" + w) for f in files[p] for w in wanted)), None)
        if holder:
            print(f"carried  {what:48} {holder}  [{where}]")
        else:
            problems.append(f"{what} at {where} looks for {' or '.join(wanted)}, which no "
                            f"carried package holds: add its Debian package to "
                            f"scripts/gpu/carried-packages.txt")
    for p in problems:
        print(f"NOT CARRIED: {p}")
    print(f"{len(found)} lookups, {len(carried)} carried packages, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
