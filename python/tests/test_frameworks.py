"""The zero-code watcher on training loops other people wrote (docs/WATCH.md, "Frameworks"):
PyTorch Lightning's Trainer, Hugging Face's Trainer (on accelerate) and a nanoGPT-style
loop, each training a tiny model on the CPU, watched unmodified. Each must give one step per
optimizer step, the accumulation as micro-batches, forward, backward and optimizer each
non-zero with the optimizer not swallowing the other two, the precision the framework ran
in, steps that match the framework's own per-step clock (a callback's, or the loop's own
timer) step by step, and each framework's evaluation as an evaluation pass of its own.

The frameworks come from PyPI into the test environment (python/tests/frameworks.txt,
installed by scripts/test.sh); where one is missing its tests say so and skip."""

from __future__ import annotations

import importlib.util
import json
import statistics
from itertools import pairwise
from pathlib import Path

import pytest

from conftest import run_script

STEPS, WARMUP = 16, 2

LIGHTNING = """
import json, sys, time, torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset
from conftest import TinyGPT, loss_of, VOCAB, CTX

torch.manual_seed(0)
torch.set_num_threads(1)
tokens = torch.randint(0, VOCAB, (512, CTX + 1))
data = DataLoader(TensorDataset(tokens[:, :-1], tokens[:, 1:]), batch_size=4)

class Module(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = TinyGPT()
    def training_step(self, batch, i):
        return loss_of(self.model, *batch)
    def validation_step(self, batch, i):  # 2 batches, before training (sanity) and every 8
        return loss_of(self.model, *batch)
    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)

class Clock(L.Callback):  # the framework's own clock: when each optimizer step is done
    ends = []
    def on_train_batch_end(self, trainer, module, outputs, batch, i):
        if trainer.fit_loop.epoch_loop._should_accumulate():
            return
        Clock.ends.append(time.perf_counter())

trainer = L.Trainer(max_steps={steps}, accelerator="cpu", devices=1, logger=False,
                    enable_checkpointing=False, enable_progress_bar=False,
                    enable_model_summary=False, accumulate_grad_batches={accumulate},
                    precision="{precision}", callbacks=[Clock()], val_check_interval=8,
                    limit_val_batches=2, num_sanity_val_steps=2)
trainer.fit(Module(), data, data)
json.dump(Clock.ends, open("clock.json", "w"))
"""

HUGGING_FACE = """
import json, time, torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

torch.manual_seed(0)
torch.set_num_threads(1)
CTX, VOCAB = 32, 256

class Tokens(Dataset):
    def __init__(self, count):
        self.ids = torch.randint(0, VOCAB, (count, CTX))
    def __len__(self):
        return len(self.ids)
    def __getitem__(self, i):
        return {{"input_ids": self.ids[i], "labels": self.ids[i]}}

class Clock(TrainerCallback):  # the framework's own clock: on_step_end, once per update
    ends = []
    def on_step_end(self, args, state, control, **kwargs):
        Clock.ends.append(time.perf_counter())

model = GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_positions=CTX, n_embd=64, n_layer=2,
                                   n_head=4, bos_token_id=0, eos_token_id=0))
args = TrainingArguments(output_dir="out", max_steps={steps}, per_device_train_batch_size=4,
                         gradient_accumulation_steps={accumulate}, bf16={bf16}, use_cpu=True,
                         report_to=[], save_strategy="no", logging_strategy="no",
                         disable_tqdm=True, dataloader_num_workers=0, eval_strategy="steps",
                         eval_steps=8, per_device_eval_batch_size=4)
Trainer(model=model, args=args, train_dataset=Tokens(1024), eval_dataset=Tokens(8),
        callbacks=[Clock()]).train()
json.dump(Clock.ends, open("clock.json", "w"))
"""

# nanoGPT's shape: the next batch fetched between forward and backward, a GradScaler, the
# gradients clipped, an evaluation every 5 steps, and the loop's own timer.
NANOGPT = """
import json, time, torch
from conftest import TinyGPT, loss_of, VOCAB, CTX

torch.manual_seed(0)
torch.set_num_threads(1)
def get_batch():
    t = torch.randint(0, VOCAB, (4, CTX + 1))
    return t[:, :-1], t[:, 1:]
model = TinyGPT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu", enabled=False)  # fp16 only: off in bf16, as nanoGPT
ends = []
x, y = get_batch()
for it in range({steps}):
    if it % 5 == 4:
        model.eval()
        with torch.no_grad():
            for _ in range(3):
                loss_of(model, *get_batch())
        model.train()
    for micro in range({accumulate}):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled={bf16}):
            loss = loss_of(model, x, y) / {accumulate}
        x, y = get_batch()  # fetched while the device works, in nanoGPT
        scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)
    ends.append(time.perf_counter())
json.dump(ends, open("clock.json", "w"))
"""


def evaluations(record: dict) -> list[tuple[int, int]]:
    """(the step an evaluation pass preceded, or -1 after the last; its forwards)."""
    passes = [(s["index"], s["evaluation_forwards"]) for s in record["steps"]
              if "evaluation_forwards" in s]
    final = record.get("final_evaluation_forwards")
    return passes + ([(-1, final)] if final else [])


def needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed here (python/tests/frameworks.txt; "
                    "scripts/test.sh installs it when the package index is reachable)")


def watched(script: str, tmp_path: Path) -> tuple[dict, list[float]]:
    save = tmp_path / "watched.json"
    done = run_script(script, tmp_path, watch=True, timeout=600,
                      env={"LMPROF_WATCH_SAVE": str(save), "LMPROF_WARMUP_STEPS": str(WARMUP)})
    assert done.returncode == 0, done.stderr[-3000:]
    (record,) = json.loads(save.read_text())["runs"]
    return record, json.loads((tmp_path / "clock.json").read_text())


def check(record: dict, ends: list[float], *, accumulate: int, precision: str) -> None:
    steps = record["steps"]
    assert len(steps) == STEPS == len(ends), "one step per optimizer step"
    assert all(s["micro_batches"] == accumulate for s in steps), [s["micro_batches"] for s in steps]
    assert record["config"]["precision"] == precision
    assert record["source"]["optimizer"] == "AdamW"
    measured = steps[WARMUP:]
    assert all(s["forward_ms"] > 0 and s["backward_ms"] > 0 and s["optimizer_ms"] > 0
               for s in measured), measured
    # The optimizer phase is the update, not the forward and backward around it.
    assert (sum(s["optimizer_ms"] for s in measured)
            < sum(s["forward_ms"] + s["backward_ms"] for s in measured)), measured
    # Step by step against the framework's clock: both read the time from one update's end
    # to the next, so they differ by how far apart their two ends are, a callback's length.
    periods = [(b - a) * 1e3 for a, b in pairwise(ends)][WARMUP - 1:]
    totals = [s["total_ms"] for s in measured]
    gaps = [abs(t - p) for t, p in zip(totals, periods, strict=False)]
    assert statistics.median(gaps) <= 0.1 * statistics.median(periods), (totals, periods)


@pytest.mark.parametrize("accumulate, precision", [(1, "32-true"), (2, "32-true"),
                                                   (1, "bf16-mixed")])
def test_lightning_trainer(tmp_path: Path, accumulate: int, precision: str) -> None:
    needs("lightning")
    record, ends = watched(LIGHTNING.format(steps=STEPS, accumulate=accumulate,
                                            precision=precision), tmp_path)
    check(record, ends, accumulate=accumulate,
          precision="bf16" if precision == "bf16-mixed" else "fp32")
    # Validation is an evaluation pass of its own: the sanity check's 2 batches before step
    # 0, then 2 every 8 training batches.
    passes = evaluations(record)
    assert passes[0] == (0, 2) and len(passes) >= 2, passes
    assert all(forwards == 2 for _, forwards in passes), passes


@pytest.mark.parametrize("accumulate, bf16", [(1, False), (2, True)])
def test_hugging_face_trainer(tmp_path: Path, accumulate: int, bf16: bool) -> None:
    needs("transformers")
    needs("accelerate")
    record, ends = watched(HUGGING_FACE.format(steps=STEPS, accumulate=accumulate, bf16=bf16),
                           tmp_path)
    check(record, ends, accumulate=accumulate, precision="bf16" if bf16 else "fp32")
    assert record["source"]["tokens_per_step"] == 4 * 32 * accumulate  # model(input_ids=...)
    # An evaluation every 8 updates, of 2 batches: after step 7, and after the last.
    assert evaluations(record) == [(8, 2), (-1, 2)], evaluations(record)


@pytest.mark.parametrize("accumulate, bf16", [(1, False), (2, True)])
def test_nanogpt_style_loop(tmp_path: Path, accumulate: int, bf16: bool) -> None:
    record, ends = watched(NANOGPT.format(steps=STEPS, accumulate=accumulate, bf16=bf16),
                           tmp_path)
    check(record, ends, accumulate=accumulate, precision="bf16" if bf16 else "fp32")
    assert evaluations(record) == [(4, 3), (9, 3), (14, 3)]  # not in those steps' data


# The integrations: a line in the framework's own terms gives the zero-code watcher's run.
LIGHTNING_CALLBACK = LIGHTNING.replace(
    "callbacks=[Clock()]", "callbacks=[Clock(), lmprof.lightning.Watch(save='watched.json')]"
).replace("import lightning as L", "import lightning as L\nimport lmprof.lightning")
HUGGING_FACE_CALLBACK = HUGGING_FACE.replace(
    "callbacks=[Clock()]", "callbacks=[Clock(), lmprof.huggingface.Watch(save='watched.json')]"
).replace("import json, time, torch", "import json, time, torch\nimport lmprof.huggingface")


@pytest.mark.parametrize("framework", ["lightning", "transformers"])
def test_the_callbacks_give_the_zero_code_run(tmp_path: Path, framework: str) -> None:
    needs(framework)
    script = (LIGHTNING_CALLBACK.format(steps=STEPS, accumulate=2, precision="32-true")
              if framework == "lightning"
              else HUGGING_FACE_CALLBACK.format(steps=STEPS, accumulate=2, bf16=False))
    done = run_script(script, tmp_path, timeout=600, env={"LMPROF_WARMUP_STEPS": str(WARMUP)})
    assert done.returncode == 0, done.stderr[-3000:]
    (record,) = json.loads((tmp_path / "watched.json").read_text())["runs"]
    check(record, json.loads((tmp_path / "clock.json").read_text()), accumulate=2,
          precision="fp32")
    assert record["source"]["tokens_per_step"] == 4 * 32 * 2
