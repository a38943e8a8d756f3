#!/usr/bin/env python3
"""The engine's include graph between its modules, and the cycles in it.

A module is a folder of engine/src (bench, lab, results, ...) or a file at its top
(config.cpp, devices.cpp, ...). A public header (engine/include/lmprof/engine/X.h) belongs
to the module of the source that includes it first (its implementation, by the project's
convention); a private header to its folder. Module A depends on B when a file of A
includes a header of B. Exit 1, naming each cycle and one include line of every edge in
it, when two modules depend on each other through any path; 0 with the module count.

Usage: engine_cycles.py [repo root] [--graph]   (--graph prints every edge)
       engine_cycles.py --self-test   (a made-up engine with a cycle must fail, one without pass)
"""
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of_source(src: Path, path: Path) -> str:
    rel = path.relative_to(src)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = Path(args[0] if args else Path(__file__).resolve().parents[2])
    src = root / "engine" / "src"
    public = root / "engine" / "include"
    sources = sorted(p for p in src.rglob("*") if p.suffix in (".cpp", ".h"))
    includes = {p: INCLUDE.findall(p.read_text()) for p in sources}

    # Which module each header belongs to, by the name it is included as.
    owner: dict[str, str] = {}
    for p in sources:
        if p.suffix == ".h":
            owner[str(p.relative_to(src))] = module_of_source(src, p)
    for p in sources:
        if p.suffix != ".cpp":
            continue
        own = next((i for i in includes[p] if i.startswith("lmprof/engine/")), None)
        if own and Path(own).stem == p.stem and own not in owner:
            owner[own] = module_of_source(src, p)
    for h in public.rglob("*.h"):
        name = str(h.relative_to(public))
        owner.setdefault(name, Path(name).stem)  # header-only: a module of its own
    # Public headers include each other too: they are files of their module.
    files = [(p, module_of_source(src, p), includes[p]) for p in sources]
    for h in public.rglob("*.h"):
        name = str(h.relative_to(public))
        files.append((h, owner[name], INCLUDE.findall(h.read_text())))

    edges: dict[tuple[str, str], str] = {}
    for path, module, incs in files:
        for inc in incs:
            target = owner.get(inc)
            if target and target != module:
                edges.setdefault((module, target), f"{path.relative_to(root)} includes {inc}")
    modules = sorted({m for _, m, _ in files})
    graph = {m: sorted({b for (a, b) in edges if a == m}) for m in modules}
    if "--graph" in sys.argv:
        for (a, b), why in sorted(edges.items()):
            print(f"{a} -> {b}    ({why})")

    # Tarjan's strongly connected components.
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for m in modules:
        if m not in index:
            visit(m)
    cycles = [c for c in comps if len(c) > 1]
    for c in cycles:
        print("cycle between engine modules: {" + ", ".join(c) + "}")
        for (a, b), why in sorted(edges.items()):
            if a in c and b in c:
                print(f"  {a} -> {b}: {why}")
    if cycles:
        return 1
    print(f"no cycles among {len(modules)} engine modules ({len(edges)} dependencies)")
    return 0


def self_test() -> int:
    """The check fails on a cycle through a public header and passes once it is broken."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {
            "engine/include/lmprof/engine/alpha.h": '#include "lmprof/engine/beta.h"\n',
            "engine/include/lmprof/engine/beta.h": "",
            "engine/src/alpha.cpp": '#include "lmprof/engine/alpha.h"\n',
            "engine/src/beta/beta.cpp": '#include "lmprof/engine/beta.h"\n#include "gamma/g.h"\n',
            "engine/src/gamma/g.h": '#include "lmprof/engine/alpha.h"\n',
        }
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        run = lambda: subprocess.run([sys.executable, __file__, str(root)], capture_output=True, text=True)
        bad = run()
        if bad.returncode != 1 or "{alpha, beta, gamma}" not in bad.stdout or "gamma -> alpha" not in bad.stdout:
            print("a cycle alpha -> beta -> gamma -> alpha was not reported:\n" + bad.stdout + bad.stderr)
            return 1
        (root / "engine/src/gamma/g.h").write_text("")
        good = run()
        if good.returncode != 0:
            print("a graph without a cycle failed:\n" + good.stdout + good.stderr)
            return 1
    print("self-test: a cycle is reported with its edges, and its absence passes")
    return 0


if __name__ == "__main__":
    sys.exit(self_test() if "--self-test" in sys.argv else main())
