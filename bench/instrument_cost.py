"""What an instrument inside a watched model costs a training step (docs/WATCH.md, "Inside
your model"), measured in one process so that the machine's drift between processes (which
moves the tiny model's step by several percent from one process to the next) cancels out:
blocks of --seconds alternate with the instrument on and off (A B B A ...), each pair gives
the ratio of its on block's mean step to its off block's, and the median of those ratios
has a 95% bootstrap interval.

Loops (--loop), each watched and each step timed by the loop's own perf_counter:

  tiny   bench/watch_overhead.py's: the CS336 tiny model (d 128, 2 layers, vocab 10000) at
         batch 4, context 128, AdamW, 2 threads. Its steps vary by several percent from
         block to block on a shared machine, which bounds what one run can resolve;
  empty  a Linear(64, 64) step with SGD, about 0.3 ms: the sampler's cost per second of
         training, which is the same share of any step, and per sample.

Instruments:

  memory   the memory sampler thread at --hz (default 100) samples a second;
  modules  time per module at --depth (default 2): its hooks are added for an on block and
           removed after it.

Usage: python bench/instrument_cost.py memory|modules [--loop tiny|empty] [--pairs 20]
       [--seconds 2] [--hz 100] [--depth 2]
"""

from __future__ import annotations

import argparse
import pathlib
import random
import statistics
import sys
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "reference"))
sys.path.insert(0, str(ROOT / "python" / "src"))

import lmprof  # noqa: E402
from lmprof import _modules, _timeline  # noqa: E402
from reference_model import TransformerLM, lm_loss  # noqa: E402


def median_interval(ratios: list[float], draws: int = 4000) -> tuple[float, float]:
    """A 95% bootstrap interval of the median of the blocks' on/off ratios."""
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(draws))
    return medians[int(0.025 * draws)], medians[int(0.975 * draws)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("instrument", choices=("memory", "modules"))
    p.add_argument("--pairs", type=int, default=20)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--hz", type=float, default=100.0)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--loop", choices=("tiny", "empty"), default="tiny")
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)
    if args.loop == "tiny":
        model: torch.nn.Module = TransformerLM(128, 512, 2, 4, 10000)
        opt: torch.optim.Optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3,
                                                       weight_decay=0.01)
        x = torch.randint(0, 10000, (4, 128))
        y = torch.randint(0, 10000, (4, 128))
        compute = lambda: lm_loss(model(x), y)  # noqa: E731
    else:
        model = torch.nn.Sequential(torch.nn.Linear(64, 64))
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        x = torch.randn(8, 64)
        compute = lambda: model(x).sum()  # noqa: E731
    run = lmprof.watch(model, opt, tokens_per_step=512)

    def steps(seconds: float) -> float:
        """The mean step over `seconds` of steps."""
        start = time.perf_counter()
        count = 0
        while time.perf_counter() - start < seconds:
            with run.step():
                loss = compute()
                loss.backward()
                opt.step()
                opt.zero_grad()
            count += 1
        return (time.perf_counter() - start) / count

    steps(args.seconds)
    ratios: list[float] = []
    samples = 0
    for pair in range(args.pairs):
        order = (True, False) if pair % 2 == 0 else (False, True)  # A B B A ...
        mean: dict[bool, float] = {}
        for instrumented in order:
            if instrumented and args.instrument == "memory":
                sampler = _timeline.MemorySampler(None, args.hz, lambda: (0, "forward"),
                                                  time.perf_counter_ns())
                mean[True] = steps(args.seconds)
                sampler.close()
                samples += len(sampler.t_ms)
            elif instrumented:
                timer = _modules.ModuleTimer(model, args.depth, lambda: run._clock,
                                             lambda: run._open)
                mean[True] = steps(args.seconds)
                timer.remove()
            else:
                mean[False] = steps(args.seconds)
        ratios.append(mean[True] / mean[False])
    run.close()
    ratio = statistics.median(ratios)
    lo, hi = median_interval(ratios)
    if args.instrument == "memory":
        rate = samples / (args.pairs * args.seconds)
        what = f"memory sampler at {args.hz:g} Hz ({rate:.0f} samples a second)"
        per = f"; the training thread's time per sample {(ratio - 1) * 1e6 / rate:.0f} us"
    else:
        what, per = f"time per module at depth {args.depth}", ""
    print(f"{args.loop}, {what}: on/off median {ratio:.4f} [95% {lo:.4f}, {hi:.4f}] over "
          f"{args.pairs} pairs of {args.seconds:g} s blocks (pairs {min(ratios):.3f}-"
          f"{max(ratios):.3f}){per}")


if __name__ == "__main__":
    main()
