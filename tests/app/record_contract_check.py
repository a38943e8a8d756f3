"""One definition of a run record across the two languages (issue 61; docs/RESULTS.md).

A result set the Python watcher writes is read by the engine and written back
(`lmprof-cli merge --json`). The engine's field lists (engine/src/results/result_json.cpp)
are the declaration: a key the Python package writes that they do not declare is dropped on
the way back and fails here, as do a value the engine reads as another JSON type, a number
that comes back changed, and another schema version. The run it checks uses every part of
the watcher that writes fields: steps and phases, logged scalars, an evaluation, the memory
timeline, module times and an op profile.

    record_contract_check.py --cli build/app/lmprof-cli --workdir DIR [--python PYTHON]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

TRAIN = '''
import sys
import torch
import torch.nn as nn
import lmprof

torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(64, 32),
                      nn.TransformerEncoderLayer(32, 2, 64, batch_first=True, norm_first=True),
                      nn.Linear(32, 64))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
run = lmprof.watch(model, opt, name="contract", tokens_per_step=4 * 16, save=sys.argv[1],
                   memory_hz=50)
run.time_modules(depth=2)
run.profile_ops(step=3)
run.memory_snapshot(step=4)  # on the CPU: the record says why there is none
x = torch.randint(0, 64, (4, 16))
for i in range(8):
    with run.step():
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), x.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad()
    run.log(loss=loss, lr=1e-3, tokens_seen=(i + 1) * 64)
    if i == 5:
        with torch.no_grad():  # an evaluation between steps
            model(x)
run.close()
'''

# What the writer fills in of its own rather than carries (the program that wrote the file,
# when, and the machine it ran on): keys and types are compared, values not.
OWN = {"$.tool", "$.created", "$.environment"}


def kind(value: Any) -> str:
    """The value's JSON type (an int and a float are both numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def compare(python: Any, engine: Any, path: str, problems: list[str],
            values: bool = True) -> None:
    """Every key and element Python wrote, as the engine wrote it back (`values`: compared
    too, not only keys and types)."""
    values = values and path not in OWN
    if kind(python) != kind(engine):
        problems.append(f"{path}: Python writes {kind(python)}, the engine {kind(engine)}")
        return
    if isinstance(python, dict):
        for key, value in python.items():
            if key not in engine:
                problems.append(f"{path}.{key}: written by Python, not declared by the engine")
            else:
                compare(value, engine[key], f"{path}.{key}", problems, values)
    elif isinstance(python, list):
        if len(python) != len(engine):
            problems.append(f"{path}: {len(python)} elements from Python, {len(engine)} back")
        for i, (a, b) in enumerate(zip(python, engine)):
            compare(a, b, f"{path}[{i}]", problems, values)
    elif not values:
        return
    elif isinstance(python, float) or isinstance(engine, float):
        if not math.isclose(python, engine, rel_tol=1e-9, abs_tol=1e-9):
            problems.append(f"{path}: {python} from Python, {engine} back")
    elif python != engine:
        problems.append(f"{path}: {python!r} from Python, {engine!r} back")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    script = args.workdir / "train.py"
    script.write_text(TRAIN, encoding="utf-8")
    written = args.workdir / "python.json"
    back = args.workdir / "engine.json"
    for path in (written, back):
        path.unlink(missing_ok=True)
    subprocess.run([args.python, str(script), str(written)], check=True, timeout=300)
    subprocess.run([args.cli, "merge", str(written), "--json", str(back)], check=True,
                   timeout=120, stdout=subprocess.DEVNULL)
    python = json.loads(written.read_text(encoding="utf-8"))
    engine = json.loads(back.read_text(encoding="utf-8"))

    problems: list[str] = []
    compare(python, engine, "$", problems)
    run = python["runs"][0]
    # The run must have used what it is here to check, or the comparison proves little.
    for key in ("module_times", "op_profile", "memory_columns", "memory_snapshot"):
        if key not in run:
            problems.append(f"$.runs[0].{key}: the check's run wrote none")
    if not any(s.get("scalars") for s in run["steps"]):
        problems.append("$.runs[0].steps: no logged scalars to check")
    if not any("evaluation_ms" in s for s in run["steps"]):
        problems.append("$.runs[0].steps: no evaluation to check")
    # The same difference in every step is said once, with the steps it is in.
    said: dict[str, list[str]] = {}
    for line in problems:
        where = re.search(r"\.steps\[(\d+)\]", line)
        key = re.sub(r"\.steps\[\d+\]", ".steps[*]", line) if where else line
        said.setdefault(key, []).append(where.group(1) if where else "")
    for line, steps in said.items():
        print(line + (f"  (steps {', '.join(steps)})" if steps[0] else ""))
    print(f"{len(said)} difference(s) between the Python package's record and the engine's")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
