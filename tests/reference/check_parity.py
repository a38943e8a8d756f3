"""Parity of the C++ engine with the independent PyTorch reference (reference_model.py).

For each configuration: the engine (parity_dump) writes its initial weights, tokens,
logits, loss and the loss after one AdamW step; the reference loads the same weights,
recomputes all of it in fp32, and the two must agree within the stated tolerances.
Exit status 0 on agreement, 1 otherwise.
"""
import argparse
import json
import pathlib
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import reference_model as ref  # noqa: E402

# fp32 on the CPU, same kernels family but different op order: agreement to ~1e-5 relative.
LOGITS_ATOL = 2e-4
LOSS_ATOL = 1e-5
LOSS_AFTER_STEP_ATOL = 1e-4

CONFIGS = [
    # d_model, d_ff, layers, heads, vocab, batch, ctx, seed
    (128, 512, 2, 4, 10000, 2, 32, 0),   # the tiny preset
    (48, 100, 3, 3, 97, 3, 24, 11),      # odd sizes: head dim 16, d_ff not a multiple of d
]


def load(dump_dir):
    manifest = json.loads((dump_dir / "manifest.json").read_text())
    cfg = manifest["config"]
    flat = np.fromfile(dump_dir / "weights.f32", dtype=np.float32)
    state = {}
    for p in manifest["params"]:
        n = int(np.prod(p["shape"]))
        state[p["name"]] = torch.from_numpy(flat[p["offset"]:p["offset"] + n].copy()).reshape(p["shape"])
    shape = (cfg["batch"], cfg["context_length"])
    inputs = torch.from_numpy(np.fromfile(dump_dir / "inputs.i64", dtype=np.int64)).reshape(shape)
    targets = torch.from_numpy(np.fromfile(dump_dir / "targets.i64", dtype=np.int64)).reshape(shape)
    logits = torch.from_numpy(np.fromfile(dump_dir / "logits.f32", dtype=np.float32)).reshape(
        *shape, cfg["vocab_size"])
    return manifest, state, inputs, targets, logits


def check(dump_exe, workdir, config):
    d, f, layers, heads, vocab, batch, ctx, seed = config
    out = workdir / f"d{d}_l{layers}_v{vocab}"
    subprocess.run([dump_exe, str(out), *map(str, config)], check=True)
    manifest, state, inputs, targets, cpp_logits = load(out)
    model = ref.TransformerLM(d, f, layers, heads, vocab, manifest["config"]["rope_theta"])
    model.load_state_dict(state, strict=True)  # same names and shapes, nothing missing
    logits = model(inputs)
    loss = ref.lm_loss(logits, targets)
    opt = ref.make_optimizer(model)
    loss.backward()
    opt.step()
    with torch.no_grad():
        loss_after = ref.lm_loss(model(inputs), targets).item()

    logits_err = (logits.detach() - cpp_logits).abs().max().item()
    loss_err = abs(loss.item() - manifest["loss"])
    after_err = abs(loss_after - manifest["loss_after_step"])
    ok = logits_err <= LOGITS_ATOL and loss_err <= LOSS_ATOL and after_err <= LOSS_AFTER_STEP_ATOL
    print(f"{out.name}: max|logits diff| {logits_err:.2e} (tol {LOGITS_ATOL:.0e}), "
          f"loss {manifest['loss']:.6f} vs {loss.item():.6f} (diff {loss_err:.2e}, tol {LOSS_ATOL:.0e}), "
          f"after AdamW step diff {after_err:.2e} (tol {LOSS_AFTER_STEP_ATOL:.0e}): "
          f"{'OK' if ok else 'MISMATCH'}")
    # Guard against a vacuous pass: the step must have changed the loss.
    if abs(manifest["loss_after_step"] - manifest["loss"]) < 1e-6:
        print("  the AdamW step did not change the loss")
        ok = False
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dump", required=True, help="path of the parity_dump executable")
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    workdir = pathlib.Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(2)
    results = [check(args.dump, workdir, c) for c in CONFIGS]
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
