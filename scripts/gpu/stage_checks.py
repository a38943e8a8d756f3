"""The GPU check kit's verdicts on what its stages wrote (scripts/gpu/check.sh,
docs/GPU_CHECK.md). Each subcommand reads one result set, prints a short Markdown summary
for the report and exits 0 when every check holds, 1 when one fails (naming it), 2 when the
file cannot be read as such a result set.

  stage_checks.py profile FILE   a profiled training step: per phase, the kernel time the
                                 profile attributes against the phase's CUDA event time of
                                 the same steps (within --tolerance, 10%); attention.softmax
                                 and matmul kernels named. On a CPU (--cpu) the op rows
                                 stand in for kernels and the time check is not made.
  stage_checks.py lab FILE...    the precision lab: the seeds' four accumulation values and
                                 the ToyModel's dtype table (LayerNorm in fp32 on CUDA).
  stage_checks.py ddp FILE N     data-parallel runs: the three strategies, each ok with N
                                 ranks reporting and identical parameters.
  stage_checks.py remote FILE DEVICE_NAME
                                 a run made through lmprof-cli serve: ok, on the named
                                 device, with its precision.
"""
import argparse
import json
import statistics
import sys

PHASES = ("forward", "backward", "optimizer")
# The seeds' four loops (docs/PRECISION_LAB.md), to 4 decimals, on every device.
SEED_LOOPS = ["10.0001", "9.9531", "10.0021", "10.0021"]


class CheckFailed(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cannot read {path}: {e}")
        sys.exit(2)
    if not str(doc.get("schema", "")).startswith("lmprof.results/1"):
        print(f"{path} is not an lmprof result set (schema {doc.get('schema')!r})")
        sys.exit(2)
    return doc


def only_ok_run(doc):
    runs = doc.get("runs") or []
    if not runs:
        raise CheckFailed("the result set has no run")
    run = runs[0]
    if run.get("status") != "ok":
        raise CheckFailed(f"run {run.get('id')} ended {run.get('status')}: {run.get('error')}")
    return run


def check_profile(doc, tolerance, cpu):
    run = only_ok_run(doc)
    prof = run.get("op_profile")
    if not prof:
        raise CheckFailed("the run has no op_profile")
    first, count = prof["first_step"], prof["step_count"]
    steps = [s for s in run["steps"] if first <= s["index"] < first + count]
    if len(steps) != count:
        raise CheckFailed(f"{len(steps)} steps recorded of the {count} profiled")
    kind = "op" if cpu else "kernel"
    rows = [r for r in prof["rows"] if r["kind"] == kind]
    failures = []
    print(f"Profiled steps {first}..{first + count - 1} of {run['id']} "
          f"({doc['environment']['device']['name']}).\n")
    clock = "host clock" if cpu else "CUDA events"
    print(f"| phase | phase ms ({clock}) | kernel ms (profile) | kernel / event |")
    print("|---|---:|---:|---:|")
    for phase in PHASES:
        key = f"{phase}_ms"
        if not any(key in s for s in steps) or phase not in prof["kernel_ms"]:
            continue
        event = statistics.mean(s[key] for s in steps)
        kernel = prof["kernel_ms"][phase]
        share = kernel / event if event > 0 else float("nan")
        print(f"| {phase} | {event:.3f} | {kernel:.3f} | {share:.3f} |")
        if not cpu and not abs(share - 1.0) <= tolerance:
            failures.append(f"{phase}: kernel time {kernel:.3f} ms is {share:.3f} of the CUDA "
                            f"event time {event:.3f} ms (allowed 1 ± {tolerance})")
    if cpu:
        print("\n(CPU: no kernels; the time check is made on a GPU only)")
    softmax = [r for r in rows if r["region"] == "attention.softmax"]
    matmul = [r for r in rows if r.get("matmul")]
    top = sorted(matmul, key=lambda r: -r["self_ms"])[:3]
    print(f"\n{len(rows)} {kind} rows; attention.softmax: {len(softmax)} "
          f"({', '.join(sorted({r['name'][:60] for r in softmax})[:3]) or 'none'}); "
          f"matmul: {len(matmul)} (largest: {', '.join(r['name'][:60] for r in top) or 'none'})")
    head = prof.get("headline", {}).get("top_forward", {})
    print(f"Headline: the forward pass's top {kind} is {head.get('name', '?')[:80]} "
          f"({100 * head.get('share', 0):.1f}%, {head.get('calls', 0)} calls per pass).")
    if not softmax:
        failures.append(f"no {kind} is attributed to attention.softmax")
    if not matmul:
        failures.append(f"no matmul {kind} is named")
    if prof.get("notes"):
        print("\nNotes: " + "; ".join(prof["notes"]))
    return failures


def check_lab(doc, cuda):
    lab = doc.get("precision_lab") or {}
    acc = lab.get("accumulation")
    failures = []
    if not acc or acc.get("error"):
        return [f"no accumulation table ({(acc or {}).get('error')})"]
    got = [f"{loop['result']:.4f}" for loop in acc["seed_loops"]]
    print(f"Seed loops on {acc['device']}: {', '.join(got)} (the seeds: {', '.join(SEED_LOOPS)})")
    if got != SEED_LOOPS:
        failures.append(f"seed loops {got} differ from the seeds' {SEED_LOOPS}")
    tables = [t for t in lab.get("dtypes", []) if t.get("model") == "toy"]
    if not tables:
        failures.append("no ToyModel dtype table")
    for t in tables:
        if t.get("error"):
            failures.append(f"dtypes {t['precision']}: {t['error']}")
            continue
        rows = {r["name"]: r for r in t["rows"]}
        reduced = t.get("autocast")
        print(f"- {t['precision']} on {t['device']}: fc1 out {rows.get('fc1', {}).get('output')},"
              f" ln out {rows.get('ln', {}).get('output')}, logits "
              f"{rows.get('logits', {}).get('output')}, loss {rows.get('loss', {}).get('output')}")
        if t.get("precision") not in ("fp16", "bf16") or reduced not in ("fp16", "bf16"):
            continue  # fp32 and the pure formats: nothing is autocast
        expect = {("fc1", "output"): reduced, ("logits", "output"): reduced,
                  ("loss", "output"): "fp32", ("fc1", "parameters"): "fp32",
                  ("fc1", "gradients"): "fp32"}
        if cuda:  # CUDA autocast keeps layer_norm in fp32 (the CPU's list does not)
            expect[("ln", "output")] = "fp32"
        for (name, field), want in expect.items():
            have = rows.get(name, {}).get(field)
            if have != want:
                failures.append(f"dtypes {t['precision']}: {name}.{field} is {have}, "
                                f"expected {want}")
    return failures


def check_ddp(doc, world_size):
    failures = []
    seen = set()
    print("| strategy | status | ranks | step ms | exposed comm ms | params identical |")
    print("|---|---|---:|---:|---:|---|")
    for run in doc.get("runs", []):
        req = run["config"].get("ddp") or {}
        block = run.get("ddp") or {}
        strategy = req.get("strategy", "?")
        seen.add(strategy)
        ranks = block.get("ranks", [])
        steps = [s for r in ranks for s in r.get("steps", []) if not s.get("warmup")]
        step_ms = statistics.mean(s["step_ms"] for s in steps) if steps else float("nan")
        exposed = statistics.mean(s["exposed_comm_ms"] for s in steps) if steps else float("nan")
        same = block.get("parameters_identical")
        print(f"| {strategy} | {run['status']} | {len(ranks)} | {step_ms:.2f} | {exposed:.2f} "
              f"| {same} |")
        if run["status"] != "ok":
            failures.append(f"{strategy}: {run['status']}: {run.get('error')}")
        elif len(ranks) != world_size or any(r.get("error") for r in ranks):
            failures.append(f"{strategy}: {len(ranks)} of {world_size} ranks reported")
        elif world_size > 1 and same is not True:
            failures.append(f"{strategy}: parameters differ between ranks")
        if req.get("world_size") != world_size:
            failures.append(f"{strategy}: world size {req.get('world_size')}, not {world_size}")
    missing = {"naive", "flat", "bucketed"} - seen
    if missing:
        failures.append(f"no run of {', '.join(sorted(missing))}")
    return failures


def check_remote(doc, device_name, precision):
    run = only_ok_run(doc)
    env = doc.get("environment", {}).get("device", {})
    print(f"Remote run {run['id']}: {run['config']['precision']} on {run['config']['device']}, "
          f"environment device {env.get('name')!r}, "
          f"{run['summary']['total_ms']['mean']:.2f} ms a step")
    failures = []
    if env.get("name") != device_name:
        failures.append(f"the result set names {env.get('name')!r}, not {device_name!r}")
    if run["config"]["precision"] != precision:
        failures.append(f"precision {run['config']['precision']}, not {precision}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="stage", required=True)
    p = sub.add_parser("profile")
    p.add_argument("file")
    p.add_argument("--tolerance", type=float, default=0.10)
    p.add_argument("--cpu", action="store_true")
    p = sub.add_parser("lab")
    p.add_argument("file", nargs="+", help="the files of precision accumulate and dtypes")
    p.add_argument("--cpu", action="store_true")
    p = sub.add_parser("ddp")
    p.add_argument("file")
    p.add_argument("world_size", type=int)
    p = sub.add_parser("remote")
    p.add_argument("file")
    p.add_argument("device_name")
    p.add_argument("--precision", default="bf16")
    args = parser.parse_args()
    if args.stage == "lab":  # accumulate and dtypes write a file each: one lab of both
        docs = [load(f) for f in args.file]
        labs = [d.get("precision_lab") or {} for d in docs]
        doc = {"precision_lab": {
            "accumulation": next((x["accumulation"] for x in labs if x.get("accumulation")), None),
            "dtypes": [t for x in labs for t in x.get("dtypes", [])]}}
    else:
        doc = load(args.file)
    try:
        if args.stage == "profile":
            failures = check_profile(doc, args.tolerance, args.cpu)
        elif args.stage == "lab":
            failures = check_lab(doc, not args.cpu)
        elif args.stage == "ddp":
            failures = check_ddp(doc, args.world_size)
        else:
            failures = check_remote(doc, args.device_name, args.precision)
    except CheckFailed as e:
        failures = [str(e)]
    except (KeyError, TypeError, ValueError) as e:
        failures = [f"the result set lacks what the check reads: {e!r}"]
    for f in failures:
        print(f"\nFAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
