"""What the Python watcher (lmprof.watch, docs/WATCH.md) costs a training loop, measured side
by side: rounds alternate watched and unwatched (A B B A ...), each round a fresh process
that trains for --steps after --warmup, timed by the loop's own perf_counter (not by the
watcher). Two loops:

  tiny   the CS336 tiny model (tests/reference/reference_model.py, d 128, 2 layers,
         vocab 10000) at batch 4, context 128, AdamW, 2 threads: the watched step over the
         unwatched one, with a 95% bootstrap interval of the ratio of the rounds' means;
  empty  a Linear(4, 4) step: the watcher's host time per step in microseconds (watched
         minus unwatched), the same way.

`--pair A,B` compares two ways of running the loop instead of watched against unwatched
(the default, `watch,off`): `off`, `watch`, `memory=HZ` (watched with the memory sampler at
HZ samples a second: the sampler's cost is `memory=100,watch`) and `modules=DEPTH` (watched
with per-module times to DEPTH).

Usage: python bench/watch_overhead.py [--rounds 6] [--steps 200] [--warmup 20]
       [--loops tiny,empty] [--pair watch,off]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def child(loop: str, mode: str, steps: int, warmup: int) -> None:
    import torch

    sys.path.insert(0, str(ROOT / "tests" / "reference"))
    torch.manual_seed(0)
    torch.set_num_threads(2)
    if loop == "tiny":
        from reference_model import TransformerLM, lm_loss

        model = TransformerLM(128, 512, 2, 4, 10000)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        x = torch.randint(0, 10000, (4, 128))
        y = torch.randint(0, 10000, (4, 128))
        compute = lambda: lm_loss(model(x), y)  # noqa: E731
    else:
        model = torch.nn.Linear(4, 4)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        x = torch.randn(2, 4)
        compute = lambda: model(x).sum()  # noqa: E731
    run = None
    kind, _, value = mode.partition("=")
    if kind != "off":
        import lmprof

        hz = float(value) if kind == "memory" else 0.0
        run = lmprof.watch(model, opt, tokens_per_step=512, memory_hz=hz)
        if kind == "modules":
            run.time_modules(depth=int(value))
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        if run is not None:
            with run.step():
                loss = compute()
                loss.backward()
                opt.step()
                opt.zero_grad()
                run.log(loss=loss)
        else:
            loss = compute()
            loss.backward()
            opt.step()
            opt.zero_grad()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    sampler_ms = 0.0
    if run is not None:
        run.close()
        sampler_ms = run.result_set()["runs"][0].get("sampler_cpu_ms", 0.0)
    print(json.dumps({"mean_s": statistics.fmean(times), "median_s": statistics.median(times),
                      "sampler_ms_per_step": sampler_ms / (warmup + steps)}))


def interval(a: list[float], b: list[float], fn, draws: int = 4000) -> tuple[float, float]:
    rng = random.Random(0)
    values = sorted(fn([rng.choice(a) for _ in a], [rng.choice(b) for _ in b]) for _ in range(draws))
    return values[int(0.025 * draws)], values[int(0.975 * draws)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--loops", default="tiny,empty")
    p.add_argument("--pair", default="watch,off", help="A,B: the two ways compared, A over B")
    p.add_argument("--child", nargs=2, metavar=("LOOP", "MODE"))
    args = p.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.steps, args.warmup)
        return
    a_mode, b_mode = args.pair.split(",")
    for loop in args.loops.split(","):
        means: dict[str, list[float]] = {a_mode: [], b_mode: []}
        sampler: list[float] = []
        for r in range(args.rounds):
            order = (a_mode, b_mode) if r % 2 == 0 else (b_mode, a_mode)
            for mode in order:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", loop, mode,
                     "--steps", str(args.steps), "--warmup", str(args.warmup)],
                    capture_output=True, text=True, check=True)
                result = json.loads(out.stdout)
                means[mode].append(result["mean_s"])
                if mode == a_mode:
                    sampler.append(result["sampler_ms_per_step"])
        on, off = means[a_mode], means[b_mode]
        print(f"{loop}: {a_mode} over {b_mode}")
        ratio = statistics.fmean(on) / statistics.fmean(off)
        lo, hi = interval(on, off, lambda a, b: statistics.fmean(a) / statistics.fmean(b))
        cost = (statistics.fmean(on) - statistics.fmean(off)) * 1e6
        clo, chi = interval(on, off, lambda a, b: (statistics.fmean(a) - statistics.fmean(b)) * 1e6)
        print(f"{loop:6s} {b_mode} {statistics.fmean(off) * 1e3:8.3f} ms "
              f"(rounds {min(off) * 1e3:.3f}-{max(off) * 1e3:.3f}), {a_mode} "
              f"{statistics.fmean(on) * 1e3:8.3f} ms (rounds {min(on) * 1e3:.3f}-{max(on) * 1e3:.3f})")
        print(f"       ratio {ratio:.4f} [95% {lo:.4f}, {hi:.4f}]; difference per step "
              f"{cost:+.1f} us [95% {clo:+.1f}, {chi:+.1f}]; sampler thread CPU per step "
              f"{statistics.fmean(sampler) * 1e3:.1f} us")


if __name__ == "__main__":
    main()
