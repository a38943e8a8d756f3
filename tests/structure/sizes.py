#!/usr/bin/env python3
"""No source file over 600 lines and no C++ or Python function over 80, except those listed
as debt.

A reader should not have to scroll through a function, nor page through a file, to find the
one thing they came to change (docs/ARCHITECTURE.md, "Sizes"). The files checked are the
repository's C++, CUDA and Python sources; a function is a C++ body at namespace or class
level (lambdas and local classes count toward the function that holds them), measured
from the line of its opening brace to its closing one; a test's name is Suite.Name. A Python
function is a def at module or class level (a def inside one counts toward it), from its
first line (decorators aside) to its last, named Class.name for a method.

DEBT lists what was over its limit when the rule came in, with its size then. A listed
entry may shrink but not grow, and once it is within the limit it must leave the list (the
check says so), so the list only gets shorter. Declarative tables (a list of columns, the
view registry) are no exception: they are entries in DEBT, said as such.

Exit 1 naming each file or function over its limit and not allowed; 0 with the counts.

Usage: sizes.py [repo root] [--all]   (--all prints every function over the limit)
       sizes.py --self-test
"""
import ast
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from large_files import repository_files  # noqa: E402

FILE_LIMIT = 600
FUNCTION_LIMIT = 80
SOURCES = (".cpp", ".h", ".cu", ".py")
CPP = (".cpp", ".h", ".cu")
SKIPPED = ("third_party/", "tests/fuzz/corpus/")
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignas",
           "noexcept", "static_assert"}

# What was over its limit when the rule came in: path (and function) -> lines then.
# Shrink an entry by splitting it; remove it once it is within its limit.
DEBT_FILES = {
}
DEBT_FUNCTIONS: dict[tuple[str, str], int] = {}


def code_only(text: str) -> str:
    """The text with comments, string and character literals blanked, lines kept."""
    keep_lines = lambda m: "\n" * m.group(0).count("\n")  # noqa: E731
    text = re.sub(r'R"(\w*)\((.*?)\)\1"', lambda m: '""' + keep_lines(m), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", keep_lines, text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def function_name(text: str, brace: int) -> str | None:
    """The name of the function whose body opens at `brace`, or None for another block."""
    before = text[max(0, brace - 400):brace]
    tail = re.search(r"\)\s*(?:const|noexcept|override|final|mutable|->\s*[\w:<>&*, ]+|\s)*$",
                     before)
    if not tail:
        return None
    close = brace - len(before) + tail.start()
    depth, k = 0, close
    while k >= 0:
        if text[k] == ")":
            depth += 1
        elif text[k] == "(":
            depth -= 1
            if depth == 0:
                break
        k -= 1
    head = text[max(0, k - 120):k]
    found = re.search(r"([~\w:]+)\s*(<[^()]*>)?\s*$", head)
    if not found or re.search(r"\]\s*$", head):
        return None  # a lambda, or something not named
    name = found.group(1)
    if name.split("::")[-1] in CONTROL:
        return None
    if name in ("TEST", "TEST_F", "TEST_P"):
        args = re.sub(r"\s+", "", text[k + 1:close]).split(",")
        return ".".join(args[:2])
    # A constructor's initializer list: the name is the one before its parameter list.
    init = re.search(r"([~\w:]+)\s*\([^()]*\)\s*:\s*[^;{}]*$", text[max(0, k - 600):k + 1])
    if init and "::" in init.group(1):
        return init.group(1)
    return name


def functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, lines) of every outermost function body."""
    code = code_only(text)
    found, stack, line = [], [], 1
    for i, ch in enumerate(code):
        if ch == "\n":
            line += 1
        elif ch == "{":
            stack.append((function_name(code, i), line))
        elif ch == "}" and stack:
            name, start = stack.pop()
            if name and not any(n for n, _ in stack):
                found.append((name, start, line - start + 1))
    return found


def python_functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, lines) of every def at module or class level; [] for a file that
    does not parse (the linters say why)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + node.name, node.lineno,
                              (node.end_lineno or node.lineno) - node.lineno + 1))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def measure(root: Path):
    files, funcs = {}, {}
    for rel in repository_files(root):
        path = root / rel
        if not rel.endswith(SOURCES) or rel.startswith(SKIPPED) or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        files[rel] = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        measured = functions(text) if rel.endswith(CPP) else python_functions(text)
        for name, start, lines in measured:
            key = (rel, name)
            if lines > funcs.get(key, (0, 0))[1]:
                funcs[key] = (start, lines)
    return files, funcs


def check(root: Path, debt_files=None, debt_functions=None, show_all=False) -> int:
    debt_files = DEBT_FILES if debt_files is None else debt_files
    debt_functions = DEBT_FUNCTIONS if debt_functions is None else debt_functions
    files, funcs = measure(root)
    problems = []
    for rel, lines in sorted(files.items()):
        allowed = debt_files.get(rel, FILE_LIMIT)
        if lines > allowed:
            problems.append(f"{rel}: {lines} lines, over "
                            + (f"its recorded {allowed} (DEBT_FILES: it may only shrink)"
                               if rel in debt_files else f"the limit of {FILE_LIMIT}"))
    for rel, allowed in sorted(debt_files.items()):
        if rel in files and files[rel] <= FILE_LIMIT:
            problems.append(f"{rel}: {files[rel]} lines, within the limit now: remove it "
                            "from DEBT_FILES (tests/structure/sizes.py)")
    for (rel, name), (start, lines) in sorted(funcs.items()):
        allowed = debt_functions.get((rel, name), FUNCTION_LIMIT)
        if lines > allowed:
            problems.append(f"{rel}:{start}: {name} is {lines} lines, over "
                            + (f"its recorded {allowed} (DEBT_FUNCTIONS: it may only shrink)"
                               if (rel, name) in debt_functions
                               else f"the limit of {FUNCTION_LIMIT}: split it"))
        elif show_all and lines > FUNCTION_LIMIT:
            print(f"{lines:4d} {rel}:{start} {name}")
    for (rel, name), allowed in sorted(debt_functions.items()):
        lines = funcs.get((rel, name), (0, 0))[1]
        if lines <= FUNCTION_LIMIT:
            problems.append(f"{rel}: {name} is {lines} lines (0: gone or renamed), within the "
                            "limit now: remove it from DEBT_FUNCTIONS (tests/structure/sizes.py)")
    for p in problems:
        print(p)
    if not problems:
        print(f"{len(files)} files and {len(funcs)} functions; over the limits only the "
              f"{len(debt_files)} files and {len(debt_functions)} functions of the debt list")
    return 1 if problems else 0


def self_test() -> int:
    long_body = "\n".join(f"    x += {i};" for i in range(90))
    source = ("namespace n {\n"
              f"int grows(int x) {{\n{long_body}\n    return x;\n}}\n"
              "struct S {\n    int small() const { return [] { return 1; }(); }\n};\n"
              f"TEST(Suite, LongTest) {{\n{long_body}\n}}\n"
              "}\n")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a.cpp").write_text(source)
        (root / "big.py").write_text("x = 1\n" * 601)
        (root / "long.py").write_text("class C:\n    def grows(self):\n"
                                      + "        x = 1\n" * 85)
        cases = [
            ({}, {}, 1, "new long functions and a long file are refused"),
            ({"big.py": 601}, {("a.cpp", "grows"): 93, ("a.cpp", "Suite.LongTest"): 92,
                               ("long.py", "C.grows"): 86}, 0, "listed debt passes"),
            ({"big.py": 601}, {("a.cpp", "grows"): 93, ("a.cpp", "Suite.LongTest"): 92}, 1,
             "a long Python method is refused"),
            ({"big.py": 601}, {("a.cpp", "grows"): 92, ("a.cpp", "Suite.LongTest"): 92,
                               ("long.py", "C.grows"): 86}, 1,
             "a listed function that grew is refused"),
            ({"big.py": 601}, {("a.cpp", "grows"): 93, ("a.cpp", "Suite.LongTest"): 92,
                               ("long.py", "C.grows"): 86, ("a.cpp", "small"): 100}, 1,
             "a listed function within the limit must leave the list"),
        ]
        for debt_files, debt_functions, want, what in cases:
            if check(root, debt_files, debt_functions) != want:
                print(f"self-test failed: {what}")
                return 1
    print("self-test: passed")
    return 0


if __name__ == "__main__":
    if "--self-test" in sys.argv[1:]:
        sys.exit(self_test())
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[2]
    sys.exit(check(root, show_all="--all" in sys.argv[1:]))
