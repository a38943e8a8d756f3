"""The GPU benchmark set of the GPU check kit (scripts/gpu/check.sh): the seeds' tables,
measured by lmprof-cli and by the independent Python reference on the same machine.

Sections, in the order they run. Every run is a fresh process: lmprof-cli, or this script
again with --python-one for the reference.
  sizes   models small..2.7B at context 128, forward and forward-backward, fp32 and bf16,
          5 warmup + 10 measured steps, batch 4, in --rounds alternating rounds: each round
          runs every row once, C++ then Python in even rounds and Python then C++ in odd
          ones. The ratio C++/Python of the per-round mean step times, with the 95% interval
          and verdict of the project's log-ratio test (`lmprof-cli ratio`, stats.h), and the
          GPU's busy share during the measured steps (NVML utilisation samples).
  warmup  small, forward-backward, fp32, 0/1/2/5 warmup steps then 10 measured, each in a
          fresh lmprof-cli process (the first steps pay CUDA/cuBLAS start-up, as in the seeds).
  memory  2.7B forward and full training step at context 128/256/512 (fp32): peak memory
          per phase from the caching allocator, C++ and Python.
Configurations that do not fit the device end `oom` and are reported as such; ones left
when the time budget runs out are listed as not run. The Python reference times its phases
with CUDA events and its step with the host clock around a synchronized step, the way the
engine does, so the ratio compares the two implementations rather than two stopwatches.

Writes to --out: results-cpp.json (one lmprof.results/1 set: `lmprof-cli show` reads it),
results-python.json, bench.md (the tables). Prints bench.md at the end.
Usage: python3 bench/gpu_bench.py --cli build-gpu/app/lmprof-cli --out DIR [--budget-s 300]
                                  [--rounds 3] [--sections sizes,warmup,memory]
       python3 bench/gpu_bench.py --cli build/app/lmprof-cli --out /tmp/b --quick  (CPU smoke)
"""
import argparse
import contextlib
import gc
import json
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

GIB = float(1 << 30)


def log(msg):
    print(msg, flush=True)


# --- one configuration, C++ -------------------------------------------------------------

def run_cpp(cli, cfg, device, timeout_s):
    """Runs lmprof-cli once; returns (run dict or None, note, the whole result set or None)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        cmd = [cli, "run", "--model", cfg["model"], "--ctx", str(cfg["ctx"]), "--batch",
               str(cfg["batch"]), "--precision", cfg["precision"], "--mode", cfg["mode"],
               "--warmup", str(cfg["warmup"]), "--steps", str(cfg["steps"]), "--device",
               device, "--json", str(out), "-q"]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None, f"lmprof-cli timed out after {timeout_s:.0f} s", None
        wall = time.perf_counter() - t0
        if not out.exists():
            return None, f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}", None
        doc = json.loads(out.read_text())
    run = doc["runs"][0]
    run["process_wall_s"] = wall  # start-up, model build and teardown included
    return run, f"exit {proc.returncode}", doc


# --- one configuration, Python reference ---------------------------------------------------

class PhaseClock:
    """CUDA events per phase on a GPU, the host clock on the CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.marks = []

    def mark(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.marks.append(e)
        else:
            self.marks.append(time.perf_counter())

    def spans_ms(self):
        if self.cuda:
            return [a.elapsed_time(b) for a, b in zip(self.marks, self.marks[1:])]
        return [(b - a) * 1e3 for a, b in zip(self.marks, self.marks[1:])]


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def peak_bytes(device):
    return torch.cuda.max_memory_allocated(device) if device.type == "cuda" else 0


def reset_peak(device):
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def run_python(cfg, model, device):
    """The reference on the model the C++ run used (its config.model from the result set)."""
    d, f, layers, heads = model["d_model"], model["d_ff"], model["num_layers"], model["num_heads"]
    vocab = model["vocab_size"]
    phases = ["forward"] + (["backward"] if cfg["mode"] != "forward" else []) + (
        ["optimizer"] if cfg["mode"] == "train" else [])
    result = {"config": cfg, "status": "ok", "steps": [], "failed_phase": None}
    lm = opt = loss = None
    phase = None
    try:
        torch.manual_seed(cfg.get("seed", 0))
        with torch.device(device):  # initialise on the device (construction only)
            lm = ref.TransformerLM(d, f, layers, heads, vocab)
        opt = ref.make_optimizer(lm) if cfg["mode"] == "train" else None
        tokens = torch.randint(0, vocab, (cfg["batch"], cfg["ctx"] + 1))
        x = tokens[:, :-1].contiguous().to(device)
        y = tokens[:, 1:].contiguous().to(device)
        autocast = (torch.autocast(device_type=device.type, dtype=torch.bfloat16)
                    if cfg["precision"] == "bf16" else contextlib.nullcontext())
        for i in range(cfg["warmup"] + cfg["steps"]):
            if cfg["mode"] == "forward-backward":
                lm.zero_grad(set_to_none=True)  # outside the step, as the engine does
            clock = PhaseClock(device)
            peaks = {}
            sync(device)
            t0 = time.perf_counter()
            for phase in phases:
                reset_peak(device)
                clock.mark()
                if phase == "forward":
                    with autocast:
                        loss = ref.lm_loss(lm(x), y)
                elif phase == "backward":
                    loss.backward()
                    loss = None
                else:
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                if phase == phases[-1]:
                    clock.mark()
                peaks[phase] = peak_bytes(device)
            phase = None
            loss = None
            sync(device)
            total = (time.perf_counter() - t0) * 1e3
            spans = clock.spans_ms()
            step = {"index": i, "warmup": i < cfg["warmup"], "total_ms": total,
                    "phase_peak_bytes": peaks}
            for name, ms in zip(phases, spans):
                step[f"{name}_ms"] = ms
            result["steps"].append(step)
    except torch.OutOfMemoryError as e:
        result.update(status="oom", failed_phase=phase, error=str(e).splitlines()[0])
    except RuntimeError as e:  # e.g. a library's own allocation failure
        result.update(status="error", failed_phase=phase, error=str(e).splitlines()[0])
    finally:
        del lm, opt, loss
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()
    measured = [s for s in result["steps"] if not s["warmup"]]
    if measured and result["status"] == "ok":
        result["summary"] = {k: statistics.mean(s.get(k, 0.0) for s in measured)
                             for k in ("forward_ms", "backward_ms", "optimizer_ms", "total_ms")}
        result["summary"]["peak_bytes"] = {
            p: max(s["phase_peak_bytes"][p] for s in measured) for p in phases}
    return result


# --- the tables -------------------------------------------------------------------------

def run_python_process(cfg, model, device, timeout_s):
    """The reference in a fresh Python process (this script with --python-one)."""
    request = json.dumps({"cfg": cfg, "model": model, "device": str(device)})
    try:
        proc = subprocess.run([sys.executable, __file__, "--python-one", request],
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"config": cfg, "status": "error", "error": f"timed out after {timeout_s:.0f} s",
                "steps": [], "failed_phase": None}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"config": cfg, "status": "error", "steps": [], "failed_phase": None,
                "error": f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}"}
    return json.loads(lines[-1])


def gpu_busy_share(run):
    """Mean NVML utilisation (%) over the measured steps, or None without GPU samples."""
    steps = run.get("steps") or []
    warm = [s["t_end_ms"] for s in steps if s.get("warmup") and "t_end_ms" in s]
    ends = [s["t_end_ms"] for s in steps if not s.get("warmup") and "t_end_ms" in s]
    if not ends:
        return None
    t0, t1 = (max(warm) if warm else 0.0), max(ends)
    util = [t["gpu_util_percent"] for t in run.get("telemetry") or []
            if t.get("gpu_util_percent") is not None and t0 <= t["t_ms"] <= t1]
    return statistics.mean(util) if util else None


def log_ratio(cli, a, b):
    """mean(b)/mean(a) with lmprof-cli ratio's 95% interval and verdict (None: < 1 value)."""
    if not a or not b:
        return None
    proc = subprocess.run([cli, "ratio", "--a", ",".join(f"{v:.6g}" for v in a), "--b",
                           ",".join(f"{v:.6g}" for v in b), "--format", "json"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        log(f"lmprof-cli ratio failed: {proc.stderr.strip()}")
        return None
    return json.loads(proc.stdout)


# --- the tables -------------------------------------------------------------------------

def ms(stats):
    return f"{stats['mean']:.2f} ± {stats['std']:.2f}" if stats and stats.get("n") else "–"


def mean_std(values):
    if not values:
        return "–"
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.2f} ± {std:.2f}"


def status_cell(run, note="not run"):
    if run is None:
        return note
    if run["status"] != "ok":
        phase = f" ({run['failed_phase']})" if run.get("failed_phase") else ""
        return f"{run['status'].upper()}{phase}"
    return None


def sizes_table(rows, cli):
    """One line per configuration over its rounds: C++ and Python step ms as the mean ± std
    of the per-round means, the C++/Python ratio with its 95% interval, the GPU busy share."""
    out = ["| model | precision | mode | rounds | C++ fwd ms | C++ bwd ms | C++ step ms | "
           "Python step ms | C++/Python [95% interval] | verdict | GPU busy | MFU |",
           "|---|---|---|---:|---|---|---|---|---|---|---:|---:|"]
    for row in rows:
        cfg = row["cfg"]
        head = f"| {cfg['model']} | {cfg['precision']} | {cfg['mode']} |"
        cpp_ok = [r for r in row["cpp"] if r["status"] == "ok"]
        py_ok = [r for r in row["python"] if r.get("summary")]
        if not cpp_ok:
            bad = status_cell(row["cpp"][0] if row["cpp"] else None, row["note"])
            out.append(f"{head} 0 | {bad} | | | | | | | |")
            continue
        cpp_means = [r["summary"]["total_ms"]["mean"] for r in cpp_ok]
        py_means = [r["summary"]["total_ms"] for r in py_ok]
        fwd = [s["forward_ms"] for r in cpp_ok for s in r["steps"] if not s["warmup"]]
        bwd = [s["backward_ms"] for r in cpp_ok for s in r["steps"] if not s["warmup"]]
        ratio = log_ratio(cli, py_means, cpp_means)
        ratio_cell = "–" if not ratio else (
            f"{ratio['ratio']:.3f} [{ratio['low']:.3f}, {ratio['high']:.3f}]")
        verdict = ratio["verdict"] if ratio else "–"
        busy = [b for b in (gpu_busy_share(r) for r in cpp_ok) if b is not None]
        busy_cell = f"{min(busy):.0f}–{max(busy):.0f}%" if busy else "–"
        mfu = [r["summary"]["mfu"] for r in cpp_ok if r["summary"].get("mfu") is not None]
        mfu_cell = f"{100 * statistics.mean(mfu):.1f}%" if mfu else "–"
        py_cell = mean_std(py_means) if py_means else (status_cell(row["python"][0])
                                                      if row["python"] else "–")
        out.append(f"{head} {len(cpp_ok)}/{len(py_ok)} | {mean_std(fwd)} | "
                   f"{mean_std(bwd) if cfg['mode'] != 'forward' else '–'} | "
                   f"{mean_std(cpp_means)} | {py_cell} | {ratio_cell} | {verdict} | "
                   f"{busy_cell} | {mfu_cell} |")
    return "\n".join(out)


def warmup_table(rows):
    out = ["| warmup steps | fwd ms | bwd ms | step ms | step CV | slowest measured step ms |",
           "|---|---|---|---|---|---|"]
    for row in rows:
        cfg, cpp = row["cfg"], (row["cpp"] or [None])[0]
        bad = status_cell(cpp, row["note"])
        if bad:
            out.append(f"| {cfg['warmup']} | {bad} | | | | |")
            continue
        s = cpp["summary"]
        slowest = max(st["total_ms"] for st in cpp["steps"] if not st["warmup"])
        out.append(f"| {cfg['warmup']} | {ms(s['forward_ms'])} | {ms(s['backward_ms'])} | "
                   f"{ms(s['total_ms'])} | {s['total_ms']['cv']:.3f} | {slowest:.2f} |")
    return "\n".join(out)


def memory_table(rows):
    out = ["| context | mode | C++ peak GiB (fwd / bwd / opt) | Python peak GiB (fwd / bwd / opt) |",
           "|---|---|---|---|"]

    def cell(peaks):  # of a run that finished: every phase that has a peak
        return " / ".join(f"{peaks[p] / GIB:.2f}" for p in ("forward", "backward", "optimizer")
                          if p in peaks and peaks[p])

    for row in rows:
        cfg = row["cfg"]
        cpp, py = (row["cpp"] or [None])[0], (row["python"] or [None])[0]
        cpp_cell = cell(cpp["summary"]["peak_bytes"]) if cpp and cpp["status"] == "ok" \
            else status_cell(cpp, row["note"])
        py_cell = cell(py["summary"]["peak_bytes"]) if py and py.get("summary") \
            else (status_cell(py) or "–")
        out.append(f"| {cfg['ctx']} | {cfg['mode']} | {cpp_cell} | {py_cell} |")
    return "\n".join(out)


# --- main -------------------------------------------------------------------------------

def plan(args):
    """(section, configurations, rounds, with the Python reference) in the order they run."""
    def cfg(model, ctx, precision, mode, warmup, steps):
        return {"model": model, "ctx": ctx, "batch": args.batch, "precision": precision,
                "mode": mode, "warmup": warmup, "steps": steps}

    sizes = [cfg(m, 128, p, mode, 5, args.steps) for m in args.models
             for mode in ("forward", "forward-backward") for p in ("fp32", "bf16")]
    warmup = [cfg(args.warmup_model, 128, "fp32", "forward-backward", w, args.steps)
              for w in (0, 1, 2, 5)]
    memory = [cfg(args.memory_model, ctx, "fp32", mode, 2, 3) for ctx in args.memory_ctx
              for mode in ("forward", "train")]
    sections = [("sizes", sizes, args.rounds, True), ("warmup", warmup, 1, False),
                ("memory", memory, 1, True)]
    return [s for s in sections if s[0] in args.sections]


def arguments():
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli")
    parser.add_argument("--out")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="stop starting configurations after this many seconds")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating rounds of the sizes section (at least 2 for an interval)")
    parser.add_argument("--sections", default="sizes,warmup,memory")
    parser.add_argument("--models", default="small,medium,large,xl,2.7B")
    parser.add_argument("--memory-model", default="2.7B")
    parser.add_argument("--memory-ctx", default="128,256,512")
    parser.add_argument("--warmup-model", default="small")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--quick", action="store_true",
                        help="CPU smoke test: tiny everywhere, 2 measured steps")
    parser.add_argument("--python-one", metavar="JSON",
                        help="(internal) run the reference once and print its result as JSON")
    return parser, parser.parse_args()


def main():
    parser, args = arguments()
    if args.python_one:
        request = json.loads(args.python_one)
        device = torch.device(request["device"])
        print(json.dumps(run_python(request["cfg"], request["model"], device)), flush=True)
        return
    if not args.cli or not args.out:
        parser.error("--cli and --out are required")
    if args.quick:
        args.device, args.models, args.memory_model = "cpu", "tiny", "tiny"
        args.warmup_model, args.memory_ctx, args.steps = "tiny", "32,64", 2
    args.models = args.models.split(",")
    args.sections = args.sections.split(",")
    args.memory_ctx = [int(c) for c in args.memory_ctx.split(",")]
    device = torch.device("cuda:0" if args.device.startswith("cuda") else "cpu")
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget_s

    # Every row starts as not reached; the outputs are rewritten after each run, so a set cut
    # short (the machine's time limit) still leaves what it measured.
    state = {"envelope": None, "cpp": [], "python": []}
    sections = {name: [{"cfg": c, "cpp": [], "python": [], "model": None,
                        "note": "not run: the time budget ran out"} for c in configs]
                for name, configs, _, _ in plan(args)}
    for name, _, rounds, with_python in plan(args):
        # Round-major: each round visits every row, so a cut budget leaves fewer rounds, not
        # missing rows; odd rounds start with the reference.
        for r in range(rounds):
            for row in sections[name]:
                cfg = row["cfg"]
                if r > 0 and not any(x["status"] == "ok" for x in row["cpp"]):
                    continue  # an OOM or error stays one
                sides = ["cpp", "python"] if r % 2 == 0 else ["python", "cpp"]
                for side in sides:
                    left = deadline - time.monotonic()
                    if left < 15:
                        break
                    if side == "cpp":
                        cpp, note, doc = run_cpp(args.cli, cfg, args.device, left)
                        if doc and state["envelope"] is None:
                            state["envelope"] = doc
                        row["note"] = f"not run: lmprof-cli {note}"
                        if cpp:
                            cpp["id"] = f"{cpp['id']}-{name}-r{r}"
                            cpp.update(bench_section=name, bench_round=r)
                            row["model"] = cpp["config"]["model"]
                            row["cpp"].append(cpp)
                            state["cpp"].append(cpp)
                    elif with_python and row["model"]:
                        py = run_python_process(cfg, row["model"], device, left)
                        py.update(bench_section=name, bench_round=r)
                        row["python"].append(py)
                        state["python"].append(py)
                log(f"{name} round {r}: {cfg['model']} ctx{cfg['ctx']} {cfg['precision']} "
                    f"{cfg['mode']} w{cfg['warmup']}: C++ "
                    f"{[round(x['summary']['total_ms']['mean'], 2) for x in row['cpp'] if x['status'] == 'ok']}"
                    f" Python {[round(x['summary']['total_ms'], 2) for x in row['python'] if x.get('summary')]}")
                write_outputs(out_dir, args, device, state, sections)
    print(write_outputs(out_dir, args, device, state, sections, final=True), flush=True)


def write_outputs(out_dir, args, device, state, sections, final=False):
    """Writes results-cpp.json, results-python.json and bench.md; returns bench.md's text.
    The ratios (one lmprof-cli ratio per row) are computed for the final write only."""
    envelope = state["envelope"]
    if envelope:
        envelope["runs"] = state["cpp"]
        (out_dir / "results-cpp.json").write_text(json.dumps(envelope, indent=1))
    (out_dir / "results-python.json").write_text(json.dumps(
        {"torch": torch.__version__, "device": str(device),
         "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
         "runs": state["python"]}, indent=1))
    env = (envelope or {}).get("environment", {})
    dev = env.get("device", {})
    lines = [f"# GPU benchmark set ({dev.get('name', args.device)}, torch {env.get('torch', '?')}, "
             f"CUDA {env.get('cuda', '?')}, batch {args.batch})", ""]
    if "sizes" in sections:
        lines += [f"## Sizes at context 128 ({args.rounds} alternating rounds of 5 warmup + "
                  f"{args.steps} measured steps, each side a fresh process; step ms: mean ± std "
                  "of the rounds' means; C++/Python below 1: the engine is faster; GPU busy: "
                  "NVML utilisation over the measured steps, lowest–highest round)", "",
                  sizes_table(sections["sizes"], args.cli) if final else "(in progress)", ""]
    if "warmup" in sections:
        lines += [f"## Warmup study ({args.warmup_model}, forward-backward, fp32, context 128, "
                  f"{args.steps} measured steps, each a fresh process)", "",
                  warmup_table(sections["warmup"]), ""]
    if "memory" in sections:
        lines += [f"## Peak memory of {args.memory_model} (fp32, 2 warmup + 3 measured steps; "
                  "allocated bytes, caching allocator)", "", memory_table(sections["memory"]), ""]
    missing = [row["note"] for rows in sections.values() for row in rows if not row["cpp"]]
    for reason in sorted(set(missing)):
        lines.append(f"- {missing.count(reason)} configuration(s) {reason}")
    text = "\n".join(lines) + "\n"
    (out_dir / "bench.md").write_text(text)
    return text


if __name__ == "__main__":
    main()
