"""lmprof-cli versus Python eager, side by side on the same machine, config and threads.

For each configuration this alternates rounds of the C++ engine (lmprof-cli run) and the
independent PyTorch reference (tests/reference/reference_model.py, timed the way the seeds
timed it: time.perf_counter around forward, backward and the AdamW step), then prints
per-phase and per-step ratios (C++ time / Python time: below 1 means the engine is faster,
the direction of every ratio in bench/README.md), the step ratio's 95% interval over the
rounds (lmprof-cli ratio, the project's log-ratio test)
and the engine's harness overhead (step wall time outside the three phases).

Three Python variants: `reference` is the independent reference as written (separate Q, K,
V projections, the hand-written softmax of docs/MODEL.md); `fused` is what a practical user
writes (one fused QKV GEMM, torch.softmax), the same math; `sdpa` is the fused script with
F.scaled_dot_product_attention (causal) in place of scores, mask, softmax and PV. The
engine runs with --attention (naive, the default, or sdpa: compare it with the `sdpa`
script).

Usage: .venv/bin/python bench/compare_python.py [--models tiny,small] [--ctx 128]
         [--batch 4] [--threads 2] [--warmup 3] [--steps 10] [--rounds 3]
         [--mode train|forward-backward] [--variants reference,fused,sdpa]
         [--attention naive|sdpa]
"""
import argparse
import json
import math
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "reference"))
import reference_model as ref  # noqa: E402

PRESETS = {"tiny": (128, 512, 2, 4), "small": (768, 3072, 12, 12),
           "medium": (1024, 4096, 24, 16)}
PHASES = ("forward_ms", "backward_ms", "optimizer_ms", "total_ms")


class FusedAttention(ref.Attention):
    """The reference attention with one QKV GEMM and torch.softmax (same weights)."""

    def forward(self, x):  # (B, T, d)
        b, t, d = x.shape
        dh = d // self.heads
        w = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
        q, k, v = (x @ w.T).split(d, dim=-1)

        def split(y):  # (B, T, d) -> (B, h, T, dh)
            return y.reshape(b, t, self.heads, dh).permute(0, 2, 1, 3)

        q = ref.rope(split(q), self.theta)
        k = ref.rope(split(k), self.theta)
        out = self.attend(q, k, split(v))
        return self.output_proj(out.permute(0, 2, 1, 3).reshape(b, t, d))

    def attend(self, q, k, v):  # (B, h, T, dh) each
        t, dh = q.shape[-2], q.shape[-1]
        scores = q @ k.transpose(-1, -2) / math.sqrt(dh)
        pos = torch.arange(t, device=q.device)
        scores = scores.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
        return torch.softmax(scores, dim=-1) @ v


class SdpaAttention(FusedAttention):
    """The fused script's attention with F.scaled_dot_product_attention (same weights)."""

    def attend(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def build_python(model, variant):
    d, f, layers, heads = PRESETS[model]
    torch.manual_seed(0)
    lm = ref.TransformerLM(d, f, layers, heads, 10000)
    if variant in ("fused", "sdpa"):
        for block in lm.layers:
            block.attn.__class__ = FusedAttention if variant == "fused" else SdpaAttention
    return lm


def run_cpp(cli, model, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        subprocess.run([cli, "run", "--model", model, "--ctx", str(args.ctx), "--batch",
                        str(args.batch), "--mode", args.mode, "--device", "cpu", "--threads",
                        str(args.threads), "--warmup", str(args.warmup), "--steps",
                        str(args.steps), "--attention", args.attention, "--json", str(out),
                        "-q"],
                       check=True, stdout=subprocess.DEVNULL)
        run = json.loads(out.read_text())["runs"][0]
    measured = [s for s in run["steps"] if not s["warmup"]]
    means = {p: statistics.mean(s[p] for s in measured) for p in PHASES}
    outside = [s["total_ms"] - s["forward_ms"] - s["backward_ms"] - s["optimizer_ms"]
               for s in measured]
    means["harness_ms"] = statistics.mean(outside)
    return means


def run_python(model, args, variant):
    lm = build_python(model, variant)
    opt = ref.make_optimizer(lm)
    tokens = torch.randint(0, 10000, (args.batch, args.ctx + 1))
    x, y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    times = {p: [] for p in PHASES}
    for step in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        loss = ref.lm_loss(lm(x), y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        if args.mode == "train":
            opt.step()
        opt.zero_grad(set_to_none=True)  # forward-backward: the engine drops them too
        t3 = time.perf_counter() if args.mode == "train" else t2
        if step >= args.warmup:
            for p, v in zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                times[p].append(v * 1000.0)
    return {p: statistics.mean(v) for p, v in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default=str(ROOT / "build" / "app" / "lmprof-cli"))
    parser.add_argument("--models", default="tiny,small")
    parser.add_argument("--ctx", type=int, default=128)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", choices=["train", "forward-backward"], default="train")
    parser.add_argument("--variants", default="reference")
    parser.add_argument("--attention", choices=["naive", "sdpa"], default="naive")
    args = parser.parse_args()
    variants = args.variants.split(",")
    torch.set_num_threads(args.threads)

    print(f"torch {torch.__version__}, {args.threads} threads, batch {args.batch}, "
          f"ctx {args.ctx}, {args.mode}, {args.warmup} warmup + {args.steps} measured steps, "
          f"{args.rounds} alternating rounds (median of round means)")
    header = (f"{'model':<7} {'python':<10} {'C++ step ms':>12} {'Python step ms':>15} "
              f"{'C++/Python step [95%]':>26} {'fwd':>6} {'bwd':>6} {'opt':>6} {'harness %':>10}")
    print(header)
    print("-" * len(header))
    for model in args.models.split(","):
        cpp_rounds, py_rounds = [], {v: [] for v in variants}
        for _ in range(args.rounds):  # alternating: C++, then each Python variant
            cpp_rounds.append(run_cpp(args.cli, model, args))
            for v in variants:
                py_rounds[v].append(run_python(model, args, v))
        cpp = {k: statistics.median(r[k] for r in cpp_rounds) for k in cpp_rounds[0]}
        harness = 100.0 * cpp["harness_ms"] / cpp["total_ms"]
        for v in variants:
            py = {k: statistics.median(r[k] for r in py_rounds[v]) for k in py_rounds[v][0]}
            ratio = {p: cpp[p] / py[p] if py[p] else float("nan") for p in PHASES}
            test = subprocess.run(
                [args.cli, "ratio", "--format", "json",
                 "--a", ",".join(f"{r['total_ms']:.6g}" for r in py_rounds[v]),
                 "--b", ",".join(f"{r['total_ms']:.6g}" for r in cpp_rounds)],
                capture_output=True, text=True)
            iv = json.loads(test.stdout) if test.returncode == 0 else None
            interval = f"[{iv['low']:.3f}, {iv['high']:.3f}]" if iv else "[–]"
            if iv:  # the step ratio of the test: of the rounds' means, not their medians
                ratio["total_ms"] = iv["ratio"]
            print(f"{model:<7} {v:<10} {cpp['total_ms']:>12.2f} {py['total_ms']:>15.2f} "
                  f"{ratio['total_ms']:>9.3f} {interval:>16} {ratio['forward_ms']:>6.2f} "
                  f"{ratio['backward_ms']:>6.2f} {ratio['optimizer_ms']:>6.2f} "
                  f"{harness:>9.3f}%")


if __name__ == "__main__":
    main()
