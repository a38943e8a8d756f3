"""Independent PyTorch implementation of the lmprof Transformer LM (docs/MODEL.md).

Written from the specification, not from the C++ engine: used by the parity test (same
weights, compare logits and loss) and by the benchmark that compares the C++ engine with
Python eager. Parameter names match the engine's so state dicts line up.

Shapes: B batch, T sequence, d d_model, h heads, dh = d / h, F d_ff, V vocab.
"""
import math

import torch
from torch import nn


class Linear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        std = math.sqrt(2.0 / (d_in + d_out))
        self.weight = nn.Parameter(torch.empty(d_out, d_in))
        nn.init.trunc_normal_(self.weight, std=std, a=-3 * std, b=3 * std)

    def forward(self, x):  # (..., d_in) -> (..., d_out)
        return x @ self.weight.T


class Embedding(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab, d))
        nn.init.trunc_normal_(self.weight, std=1.0, a=-3.0, b=3.0)

    def forward(self, ids):  # (B, T) -> (B, T, d)
        return self.weight[ids]


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        rms = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (x / rms * self.weight.float()).to(dtype)


def rope(x, theta):
    """Rotate interleaved pairs (x[2k], x[2k+1]) of each head by t * theta^(-2k/dh)."""
    *_, t, dh = x.shape
    k = torch.arange(dh // 2, dtype=torch.float64, device=x.device)
    freqs = theta ** (-2.0 * k / dh)
    angles = torch.arange(t, dtype=torch.float64, device=x.device)[:, None] * freqs[None, :]  # (T, dh/2)
    cos = angles.cos().to(x.dtype)
    sin = angles.sin().to(x.dtype)
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out


def softmax(x, dim):
    x = x - x.max(dim=dim, keepdim=True).values
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


class Attention(nn.Module):
    def __init__(self, d, heads, theta):
        super().__init__()
        self.heads = heads
        self.theta = theta
        self.q_proj = Linear(d, d)
        self.k_proj = Linear(d, d)
        self.v_proj = Linear(d, d)
        self.output_proj = Linear(d, d)

    def forward(self, x):  # (B, T, d)
        b, t, d = x.shape
        dh = d // self.heads

        def split(y):  # (B, T, d) -> (B, h, T, dh)
            return y.reshape(b, t, self.heads, dh).permute(0, 2, 1, 3)

        q = rope(split(self.q_proj(x)), self.theta)
        k = rope(split(self.k_proj(x)), self.theta)
        v = split(self.v_proj(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(dh)  # (B, h, T, T)
        pos = torch.arange(t, device=x.device)
        future = pos[None, :] > pos[:, None]
        scores = scores.masked_fill(future, float("-inf"))
        out = softmax(scores, -1) @ v  # (B, h, T, dh)
        return self.output_proj(out.permute(0, 2, 1, 3).reshape(b, t, d))


class SwiGLU(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.w1 = Linear(d, d_ff)
        self.w2 = Linear(d_ff, d)
        self.w3 = Linear(d, d_ff)

    def forward(self, x):
        a = self.w1(x)
        return self.w2(a * torch.sigmoid(a) * self.w3(x))


class Block(nn.Module):
    def __init__(self, d, heads, d_ff, theta):
        super().__init__()
        self.ln1 = RMSNorm(d)
        self.attn = Attention(d, heads, theta)
        self.ln2 = RMSNorm(d)
        self.ffn = SwiGLU(d, d_ff)

    def forward(self, x):
        h = x + self.attn(self.ln1(x))
        return h + self.ffn(self.ln2(h))


class TransformerLM(nn.Module):
    def __init__(self, d_model, d_ff, num_layers, num_heads, vocab_size, rope_theta=10000.0):
        super().__init__()
        self.token_embeddings = Embedding(vocab_size, d_model)
        self.layers = nn.ModuleList(
            Block(d_model, num_heads, d_ff, rope_theta) for _ in range(num_layers))
        self.ln_final = RMSNorm(d_model)
        self.lm_head = Linear(d_model, vocab_size)

    def forward(self, ids):  # (B, T) -> (B, T, V)
        x = self.token_embeddings(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.ln_final(x))


def lm_loss(logits, targets):
    """Mean cross-entropy over all B*T positions, from fp32 log-probabilities."""
    logits = logits.float().reshape(-1, logits.shape[-1])
    logp = logits - logits.logsumexp(dim=-1, keepdim=True)
    return -logp.gather(1, targets.reshape(-1, 1)).mean()


def make_optimizer(model):
    return torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                             weight_decay=0.01)
