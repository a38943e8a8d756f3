#!/usr/bin/env python3
"""A night's sweep as one result set, for bench/big_sets.sh (issue 43).

Takes a real run that lmprof-cli measured (SEED: a result set of one tiny run of 1,001 steps)
and writes OUT: RUNS copies of it, each with its own id, seed and its step times and memory
samples jittered (so that no two runs are the same numbers), its memory timeline thinned
to SAMPLES evenly spaced samples, written as lmprof 1.6 wrote a result set (2-space indent,
samples as objects). The defaults give the set the issue measured: 300 runs, 7.7k samples
per run, about 430 MB. bench/big_sets.sh has lmprof-cli write each set again as it writes
sets now (1.7, samples as columns) to measure both.
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def as_rows(run: dict) -> dict:
    """A run of 1.7 (samples as columns, docs/RESULTS.md) in 1.6's layout (as objects)."""
    for rows, columns in (("memory_timeline", "memory_columns"), ("telemetry", "telemetry_columns")):
        if columns in run:
            table = run.pop(columns)
            count = len(next(iter(table.values()), []))
            run[rows] = [{key: values[i] for key, values in table.items() if values[i] is not None}
                         for i in range(count)]
    return run


def thinned(samples: list[dict], count: int) -> list[dict]:
    if len(samples) <= count:
        return samples
    step = len(samples) / count
    return [samples[int(i * step)] for i in range(count)]


def jittered(run: dict, index: int, rng: random.Random, seed: int) -> dict:
    scale = 1.0 + rng.uniform(-0.1, 0.1)
    out = dict(run)
    out["id"] = f"{run['config']['model']['preset']}-sweep-{index + 1}"
    # A seed of its own: a run merge keeps, not a repeat of the first one's configuration.
    out["config"] = {**run["config"], "seed": seed}
    steps = []
    for step in run["steps"]:
        s = dict(step)
        for key in ("forward_ms", "backward_ms", "optimizer_ms", "total_ms"):
            if key in s:
                s[key] = round(s[key] * scale * (1.0 + rng.uniform(-0.02, 0.02)), 6)
        if "t_end_ms" in s:  # the run's clock: scaled alike, so that it still only rises
            s["t_end_ms"] = round(s["t_end_ms"] * scale, 6)
        steps.append(s)
    out["steps"] = steps
    out["memory_timeline"] = [
        {**m, "t_ms": round(m["t_ms"] * scale, 6)} for m in run["memory_timeline"]
    ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seed", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--samples", type=int, default=7700)
    parser.add_argument("--jitter-seed", type=int, default=43,
                        help="of the jitter (another set: another seed)")
    args = parser.parse_args()

    seed = json.loads(args.seed.read_text())
    seed["schema"] = "lmprof.results/1.6"
    run = as_rows(seed["runs"][0])
    run["memory_timeline"] = thinned(run["memory_timeline"], args.samples)
    rng = random.Random(args.jitter_seed)
    head = {key: value for key, value in seed.items() if key != "runs"}
    text = json.dumps({**head, "runs": ["@RUNS@"]}, indent=2)
    before, after = text.split('"@RUNS@"')
    with args.out.open("w") as out:
        out.write(before)
        for i in range(args.runs):
            seed = args.jitter_seed * 100_000 + i
            body = json.dumps(jittered(run, i, rng, seed), indent=2).replace("\n", "\n    ")
            out.write(("" if i == 0 else ",\n    ") + body)
        out.write(after)
        out.write("\n")


if __name__ == "__main__":
    main()
