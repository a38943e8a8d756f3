"""What the op profiler costs: profiled against unprofiled steps of the same run.

Each round is one `lmprof-cli run --profile-ops`: W warmup steps, then K profiled steps,
then M measured steps. The profiled steps' phase times (op_profiled in the result set) are
compared with the measured steps right after them, in the same process and the same
allocator state. Ratios are profiled / unprofiled (above 1: the profiler's cost).

Usage: .venv/bin/python bench/op_profile_overhead.py [--model tiny] [--device cpu]
         [--ctx 128] [--batch 4] [--threads 2] [--warmup 3] [--profiled 5] [--steps 5]
         [--rounds 3]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PHASES = ("forward_ms", "backward_ms", "optimizer_ms", "total_ms")


def one_round(args):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        subprocess.run([args.cli, "run", "--model", args.model, "--ctx", str(args.ctx),
                        "--batch", str(args.batch), "--precision", args.precision,
                        "--mode", "train", "--device", args.device, "--threads",
                        str(args.threads), "--warmup", str(args.warmup), "--steps",
                        str(args.profiled + args.steps), "--profile-ops", "--profile-steps",
                        str(args.profiled), "--profile-trace", str(pathlib.Path(tmp) / "t.json"),
                        "--json", str(out), "-q"],
                       check=True, stdout=subprocess.DEVNULL)
        run = json.loads(out.read_text())["runs"][0]
    profiled = [s for s in run["steps"] if s.get("op_profiled")]
    plain = [s for s in run["steps"] if not s["warmup"] and not s.get("op_profiled")]
    return ({p: statistics.median(s[p] for s in profiled) for p in PHASES},
            {p: statistics.median(s[p] for s in plain) for p in PHASES})


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=str(ROOT / "build" / "app" / "lmprof-cli"))
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--profiled", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"{args.model}, {args.device}, {args.precision}, ctx {args.ctx}, batch {args.batch}, "
          f"{args.threads} threads, train: {args.warmup} warmup, {args.profiled} profiled, "
          f"{args.steps} unprofiled steps per run; {args.rounds} runs (median of run medians)")
    rounds = [one_round(args) for _ in range(args.rounds)]
    print(f"{'phase':<13} {'profiled ms':>12} {'unprofiled ms':>14} {'ratio':>8}")
    for p in PHASES:
        a = statistics.median(r[0][p] for r in rounds)
        b = statistics.median(r[1][p] for r in rounds)
        print(f"{p:<13} {a:>12.2f} {b:>14.2f} {a / b if b else float('nan'):>7.2f}x")


if __name__ == "__main__":
    main()
