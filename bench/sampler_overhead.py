"""The memory sampler's cost: step time with the sampler at 100 Hz (and telemetry at 10 Hz)
against both off (phase-boundary samples only), side by side in one run.

Rounds alternate the two settings (on, off, off, on, ...) on the same configuration, seed
and thread count so that drift in machine load falls on both. Prints the mean and median
step time of each setting, their ratio (on / off: 1.000 means no cost) and a 95% bootstrap
interval of the ratio of means over the runs (each run's mean step time is one sample), so
a difference inside the machine's run-to-run noise shows as an interval around 1. Also
prints the sampler thread's own CPU time as a share of the CPU the run had (wall time x
threads), a direct measure of its cost that the noise does not blur.

Usage: python3 bench/sampler_overhead.py [--cli build/app/lmprof-cli] [--models tiny,small]
         [--ctx 128] [--batch 4] [--threads 2] [--warmup 3] [--steps 20] [--rounds 4]
"""
import argparse
import json
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_once(args, model, sample_hz, telemetry_hz, out):
    cmd = [args.cli, "run", "--model", model, "--ctx", str(args.ctx), "--batch", str(args.batch),
           "--threads", str(args.threads), "--warmup", str(args.warmup), "--steps",
           str(args.steps), "--device", args.device, "--sample-hz", str(sample_hz),
           "--telemetry-hz", str(telemetry_hz), "--json", str(out), "-q", "--format", "csv"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    run = json.loads(out.read_text())["runs"][0]
    if run["status"] != "ok":
        sys.exit(f"run failed: {run['error']}")
    steps = [s["total_ms"] for s in run["steps"] if not s["warmup"]]
    periodic = run["memory_columns"].get("boundary", []).count(False)
    # The sampler thread's own CPU time as a share of the CPU the run had (wall x threads).
    wall_ms = run["steps"][-1]["t_end_ms"]
    cpu_share = run.get("sampler_cpu_ms", 0.0) / (wall_ms * args.threads)
    return steps, periodic, len(run["telemetry_columns"].get("t_ms", [])), cpu_share


def bootstrap_ratio(a, b, resamples=4000, seed=0):
    """95% percentile interval of mean(a) / mean(b), resampling runs with replacement."""
    rng = random.Random(seed)
    ratios = sorted(
        statistics.fmean(rng.choices(a, k=len(a))) / statistics.fmean(rng.choices(b, k=len(b)))
        for _ in range(resamples))
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", default=str(ROOT / "build" / "app" / "lmprof-cli"))
    p.add_argument("--models", default="tiny")
    p.add_argument("--ctx", type=int, default=128)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--device", default="auto")
    args = p.parse_args()

    print("| model | on: mean / median step ms | off: mean / median step ms |"
          " ratio mean [95% interval] |"
          " ratio median | samples per on-run (memory / telemetry) | sampler CPU share | runs |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        for model in args.models.split(","):
            on, off, counts = [], [], []
            run_means = {True: [], False: []}
            for r in range(args.rounds):
                order = [True, False] if r % 2 == 0 else [False, True]
                for sampling in order:
                    steps, periodic, telemetry, cpu_share = run_once(
                        args, model, 100 if sampling else 0, 10 if sampling else 0, out)
                    (on if sampling else off).extend(steps)
                    run_means[sampling].append(statistics.fmean(steps))
                    if sampling:
                        counts.append((periodic, telemetry, cpu_share))
            mean_on, mean_off = statistics.fmean(on), statistics.fmean(off)
            med_on, med_off = statistics.median(on), statistics.median(off)
            lo, hi = bootstrap_ratio(run_means[True], run_means[False])
            mem = statistics.fmean(c[0] for c in counts)
            tel = statistics.fmean(c[1] for c in counts)
            share = statistics.fmean(c[2] for c in counts)
            print(f"| {model} | {mean_on:.2f} / {med_on:.2f} | {mean_off:.2f} / {med_off:.2f} |"
                  f" {mean_on / mean_off:.4f} [{lo:.4f}, {hi:.4f}] | {med_on / med_off:.4f} | {mem:.0f} / {tel:.0f} |"
                  f" {100 * share:.3f}% | {args.rounds} × 2 × ({args.warmup} warmup + {args.steps} steps) |")


if __name__ == "__main__":
    main()
