"""A CS336-style training script for the GPU check kit's `watch` stage (docs/GPU_CHECK.md):
a GPT of the engine's `small` size (d 768, 12 layers, 12 heads, d_ff 3072, vocabulary
10,000), written in plain PyTorch (python/tests/conftest.py's TinyGPT), trained with AdamW
on random tokens, unmodified: `lmprof-cli watch` watches it.

    python scripts/gpu/watched_lm.py [--device cuda] [--steps 20] [--batch 4] [--ctx 128]
                                     [--bf16] [--tiny]
"""

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "tests"))
from conftest import TinyGPT  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--batch", type=int, default=4)
parser.add_argument("--ctx", type=int, default=128)
parser.add_argument("--bf16", action="store_true", help="forward under bf16 autocast")
parser.add_argument("--tiny", action="store_true", help="a tiny model, for the CPU smoke run")
args = parser.parse_args()

vocab = 10_000
torch.manual_seed(0)
if args.tiny:
    model = TinyGPT(vocab=vocab, d=64, heads=4, layers=2, ctx=args.ctx)
else:
    model = TinyGPT(vocab=vocab, d=768, heads=12, layers=12, ctx=args.ctx)
model = model.to(args.device)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(args.steps):
    tokens = torch.randint(0, vocab, (args.batch, args.ctx + 1), device=args.device)
    x, y = tokens[:, :-1], tokens[:, 1:]
    with torch.autocast(args.device.split(":")[0], dtype=torch.bfloat16, enabled=args.bf16):
        logits = model(x)
    loss = F.cross_entropy(logits.float().reshape(-1, vocab), y.reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(f"trained {args.steps} steps")
