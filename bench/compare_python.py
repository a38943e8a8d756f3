"""lmprof-cli versus Python eager, side by side on the same machine, config and threads.

For each configuration this alternates rounds of the C++ engine (lmprof-cli run) and the
independent PyTorch reference (tests/reference/reference_model.py, timed the way the seeds
timed it: time.perf_counter around forward, backward and the AdamW step), then prints
per-phase and per-step ratios (C++ time / Python time: below 1 means the engine is faster,
the direction of every ratio in bench/README.md), the step ratio's 95% interval over the
rounds (lmprof-cli ratio, the project's log-ratio test)
and the engine's harness overhead (step wall time outside the three phases).

Python variants: `reference` is the independent reference as written (separate Q, K, V
projections, the hand-written softmax of docs/MODEL.md); `fused` is what a practical user
writes (one fused QKV GEMM, torch.softmax), the same math; `sdpa` is the fused script with
F.scaled_dot_product_attention (causal) in place of scores, mask, softmax and PV;
`idiomatic` is the fused script as PyTorch's own idioms write it (RoPE cos/sin computed once
as buffers, F.silu, F.cross_entropy, AdamW with fused=True); `idiomatic-sdpa` adds SDPA to
it; `compile` is torch.compile of idiomatic-sdpa and `reduce-overhead` the same with
mode="reduce-overhead" (CUDA graphs: the fastest thing a Python user has). The engine runs
with --attention, --cuda-graphs and --tf32 as given: compare like with like.

On CUDA (--device cuda) each phase is timed with CUDA events and the step with the host
clock around a synchronized step, as the engine does; --precision bf16 runs the forward
under autocast, --tf32 on lets both sides' fp32 matmuls use TF32.

Usage: .venv/bin/python bench/compare_python.py [--models tiny,small] [--ctx 128]
         [--batch 4] [--threads 2] [--warmup 3] [--steps 10] [--rounds 3]
         [--mode train|forward-backward] [--variants reference,fused,sdpa,idiomatic,...]
         [--attention naive|sdpa] [--device cpu|cuda] [--precision fp32|bf16]
         [--tf32 off|on] [--cuda-graphs off|on]
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


class IdiomaticAttention(FusedAttention):
    """The fused attention with RoPE's cos and sin computed once per length and device."""
    tables = {}

    def rope(self, x):  # (B, h, T, dh), interleaved pairs as the reference rotates them
        t, dh = x.shape[-2], x.shape[-1]
        key = (t, dh, x.device, x.dtype)
        if key not in IdiomaticAttention.tables:
            k = torch.arange(dh // 2, dtype=torch.float64, device=x.device)
            angles = torch.arange(t, dtype=torch.float64, device=x.device)[:, None] * (
                self.theta ** (-2.0 * k / dh))[None, :]
            IdiomaticAttention.tables[key] = (angles.cos().to(x.dtype), angles.sin().to(x.dtype))
        cos, sin = IdiomaticAttention.tables[key]
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    def forward(self, x):
        b, t, d = x.shape
        dh = d // self.heads
        w = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
        q, k, v = (x @ w.T).split(d, dim=-1)

        def split(y):
            return y.reshape(b, t, self.heads, dh).transpose(1, 2)

        out = self.attend(self.rope(split(q)), self.rope(split(k)), split(v))
        return self.output_proj(out.transpose(1, 2).reshape(b, t, d))


class IdiomaticSdpaAttention(IdiomaticAttention):
    def attend(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


class IdiomaticSwiGLU(ref.SwiGLU):
    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)) * self.w3(x))


IDIOMATIC = ("idiomatic", "idiomatic-sdpa", "compile", "reduce-overhead")


def build_python(model, variant, device):
    d, f, layers, heads = PRESETS[model]
    torch.manual_seed(0)
    lm = ref.TransformerLM(d, f, layers, heads, 10000).to(device)
    attention = {"fused": FusedAttention, "sdpa": SdpaAttention, "idiomatic": IdiomaticAttention,
                 "idiomatic-sdpa": IdiomaticSdpaAttention, "compile": IdiomaticSdpaAttention,
                 "reduce-overhead": IdiomaticSdpaAttention}.get(variant)
    for block in lm.layers:
        if attention:
            block.attn.__class__ = attention
        if variant in IDIOMATIC:
            block.ffn.__class__ = IdiomaticSwiGLU
    return lm


def loss_of(variant):
    if variant in IDIOMATIC:
        return lambda logits, y: torch.nn.functional.cross_entropy(
            logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1))
    return ref.lm_loss


def run_cpp(cli, model, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        subprocess.run([cli, "run", "--model", model, "--ctx", str(args.ctx), "--batch",
                        str(args.batch), "--mode", args.mode, "--device", args.device,
                        "--threads", str(args.threads), "--warmup", str(args.warmup),
                        "--steps", str(args.steps), "--attention", args.attention,
                        "--precision", args.precision, "--tf32", args.tf32,
                        "--cuda-graphs", args.cuda_graphs, "--json", str(out), "-q"],
                       check=True, stdout=subprocess.DEVNULL)
        run = json.loads(out.read_text())["runs"][0]
    measured = [s for s in run["steps"] if not s["warmup"]]
    means = {p: statistics.mean(s[p] for s in measured) for p in PHASES}
    outside = [s["total_ms"] - s["forward_ms"] - s["backward_ms"] - s["optimizer_ms"]
               for s in measured]
    means["harness_ms"] = statistics.mean(outside)
    return means


class Clock:
    """Phase marks: CUDA events on a GPU (the step synchronized at its ends), else the host."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def mark(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def ms(self, a, b):
        return a.elapsed_time(b) if self.cuda else (b - a) * 1000.0


def run_python(model, args, variant):
    device = torch.device(args.device)
    lm = build_python(model, variant, device)
    loss_fn = loss_of(variant)
    if variant in IDIOMATIC:
        opt = torch.optim.AdamW(lm.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                                weight_decay=0.01, fused=True)
    else:
        opt = ref.make_optimizer(lm)
    step_fn = lambda x, y: loss_fn(lm(x), y)  # noqa: E731
    if variant == "compile":
        step_fn = torch.compile(step_fn)
    elif variant == "reduce-overhead":
        step_fn = torch.compile(step_fn, mode="reduce-overhead")
    tokens = torch.randint(0, 10000, (args.batch, args.ctx + 1))
    x, y = tokens[:, :-1].contiguous().to(device), tokens[:, 1:].contiguous().to(device)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16,
                              enabled=args.precision == "bf16")
    clock = Clock(device)
    times = {p: [] for p in PHASES}
    for step in range(args.warmup + args.steps):
        if clock.cuda:
            torch.cuda.synchronize()
        h0 = time.perf_counter()
        m0 = clock.mark()
        with autocast:
            loss = step_fn(x, y)
        m1 = clock.mark()
        loss.backward()
        m2 = clock.mark()
        if args.mode == "train":
            opt.step()
        opt.zero_grad(set_to_none=True)  # forward-backward: the engine drops them too
        m3 = clock.mark()
        if clock.cuda:
            torch.cuda.synchronize()
        h1 = time.perf_counter()
        if step >= args.warmup:
            spans = (clock.ms(m0, m1), clock.ms(m1, m2),
                     clock.ms(m2, m3) if args.mode == "train" else 0.0, (h1 - h0) * 1000.0)
            for p, v in zip(PHASES, spans):
                times[p].append(v)
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
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--tf32", choices=["off", "on"], default="off")
    parser.add_argument("--cuda-graphs", choices=["off", "on"], default="off")
    args = parser.parse_args()
    variants = args.variants.split(",")
    torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32 == "on"

    print(f"torch {torch.__version__}, {args.device}, {args.precision}, tf32 {args.tf32}, "
          f"engine attention {args.attention}, cuda graphs {args.cuda_graphs}, "
          f"{args.threads} threads, batch {args.batch}, "
          f"ctx {args.ctx}, {args.mode}, {args.warmup} warmup + {args.steps} measured steps, "
          f"{args.rounds} alternating rounds (median of round means)")
    header = (f"{'model':<7} {'python':<15} {'C++ step ms':>12} {'Python step ms':>15} "
              f"{'C++/Python step [95%]':>26} {'fwd':>6} {'bwd':>6} {'opt':>6} {'harness %':>10}")
    print(header)
    print("-" * len(header))
    for model in args.models.split(","):
        cpp_rounds, py_rounds = [], {v: [] for v in variants}
        failed = {}  # a variant that cannot run here (torch.compile without a compiler, say)
        for _ in range(args.rounds):  # alternating: C++, then each Python variant
            cpp_rounds.append(run_cpp(args.cli, model, args))
            for v in variants:
                if v in failed:
                    continue
                try:
                    py_rounds[v].append(run_python(model, args, v))
                except Exception as e:  # noqa: BLE001 - reported, the others go on
                    failed[v] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        cpp = {k: statistics.median(r[k] for r in cpp_rounds) for k in cpp_rounds[0]}
        harness = 100.0 * cpp["harness_ms"] / cpp["total_ms"]
        for v in variants:
            if v in failed:
                print(f"{model:<7} {v:<15} failed: {failed[v]}")
                continue
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
            print(f"{model:<7} {v:<15} {cpp['total_ms']:>12.2f} {py['total_ms']:>15.2f} "
                  f"{ratio['total_ms']:>9.3f} {interval:>16} {ratio['forward_ms']:>6.2f} "
                  f"{ratio['backward_ms']:>6.2f} {ratio['optimizer_ms']:>6.2f} "
                  f"{harness:>9.3f}%")


if __name__ == "__main__":
    main()
