"""One long run read by both languages (docs/WATCH.md, "Long runs"): a script of 25,000
steps, past the 10,000 that are kept whole, copies its journal and kills itself. lmprof-cli
watch then makes the run from the journal (C++ StepTally), and lmprof.recover() makes it
from the copy (Python Tally). Both must keep the same steps, say the same thinning and step
counts, and give the same statistics over every step.

    long_journal_check.py --cli build/app/lmprof-cli --workdir DIR [--python PYTHON]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

STEPS = 25_000

SCRIPT = '''
import os, shutil, signal, sys, torch
import lmprof
model = torch.nn.Linear(2, 2)
save = os.environ["LMPROF_WATCH_SAVE"]
run = lmprof.watch(model, save=save)
for _ in range({steps}):
    with run.step():
        pass
shutil.copy(save + ".steps.jsonl", sys.argv[1])
os.kill(os.getpid(), signal.SIGKILL)
'''


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "long.py").write_text(SCRIPT.format(steps=STEPS))
    copy, out = work / "copy.steps.jsonl", work / "cli.json"
    proc = subprocess.run([args.cli, "watch", "--quiet", "--json", str(out), "--", args.python,
                           str(work / "long.py"), str(copy)],
                          capture_output=True, text=True, timeout=600)
    if not out.exists() or not copy.exists():
        print(f"watch exited {proc.returncode}: {proc.stderr[-2000:]}")
        return 1
    cli = json.loads(out.read_text())["runs"][0]
    # recover() of the same journal, in the package the script imported
    recovered = json.loads(subprocess.run(
        [args.python, "-c", "import json, sys, lmprof; "
         "print(json.dumps(lmprof.recover(sys.argv[1])['runs'][0]))", str(copy)],
        capture_output=True, text=True, check=True).stdout)
    failures = []

    def same(what: str, a: object, b: object) -> None:
        if a != b:
            failures.append(f"{what}: C++ {a!r}, Python {b!r}")

    same("thinned", cli.get("thinned"), recovered.get("thinned"))
    same("thinned.recorded_steps", (cli.get("thinned") or {}).get("recorded_steps"), STEPS)
    same("kept step indices", [s["index"] for s in cli["steps"]],
         [s["index"] for s in recovered["steps"]])
    for key in ("warmup_steps", "measure_steps"):
        same(f"config.{key}", cli["config"][key], recovered["config"][key])
    for phase in ("forward_ms", "backward_ms", "optimizer_ms", "total_ms"):
        a, b = cli["summary"][phase], recovered["summary"][phase]
        for stat in ("n", "mean", "std", "median", "min", "max", "p95", "iqr", "noisy"):
            x, y = a[stat], b[stat]
            close = (x == y if isinstance(x, (bool, int)) and isinstance(y, (bool, int))
                     else math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15))
            if not close:
                failures.append(f"summary.{phase}.{stat}: C++ {x!r}, Python {y!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"long_journal_check: {len(cli['steps'])} of {STEPS} steps kept by both, "
          f"every {(cli.get('thinned') or {}).get('every')}; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
