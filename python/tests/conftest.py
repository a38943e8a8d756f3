"""Shared pieces of the watcher's tests: a small Transformer written here (not the
engine's), its batches, and a plain training step."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import lmprof

# The token a served run's viewers present in the live server's tests.
TOKEN = "a" * 64

PYTHON_DIR = Path(__file__).resolve().parents[1]
BOOTSTRAP = PYTHON_DIR / "src" / "lmprof" / "_bootstrap"


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.norm2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, d) -> (B, T, d)
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))  # (B, h, T, d_h)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        attn = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab: int = 256, d: int = 64, heads: int = 4, layers: int = 2,
                 ctx: int = 32) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(ctx, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:  # (B, T) -> (B, T, V)
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


BATCH, CTX, VOCAB = 4, 32, 256


def batches(count: int, seed: int = 0) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    for _ in range(count):
        tokens = torch.randint(0, VOCAB, (BATCH, CTX + 1), generator=g)
        yield tokens[:, :-1], tokens[:, 1:]


def loss_of(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))


def train_steps(run: lmprof.Run, model: nn.Module, opt: torch.optim.Optimizer, count: int,
                *, log_loss: bool = False) -> None:
    """A plain watched loop: `count` steps of forward, backward, step and zero_grad."""
    for x, y in batches(count):
        with run.step():
            loss = loss_of(model, x, y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            if log_loss:
                run.log(loss=loss)


@pytest.fixture
def model() -> TinyGPT:
    torch.manual_seed(0)
    return TinyGPT(vocab=VOCAB, ctx=CTX)


def run_script(source: str, tmp_path: Path, *, watch: bool = False,
               env: dict[str, str] | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Runs `source` as a script in a fresh interpreter, with the package importable, and
    with the zero-code watcher armed when `watch`."""
    script = tmp_path / "train.py"
    script.write_text(source)
    paths = [str(PYTHON_DIR / "src"), str(Path(__file__).parent)]
    if watch:
        paths.insert(0, str(BOOTSTRAP))
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), **(env or {})}
    if watch:
        full_env["LMPROF_WATCH"] = "1"
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=tmp_path)


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path
