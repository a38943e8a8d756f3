"""The op profile's Chrome trace (docs/OP_PROFILE.md), read the way users read it.

Runs `lmprof-cli run --profile-ops` on `tiny`, which must print no error line on stderr
(Kineto's thread warning included), and checks the trace it writes:
  json:     a Chrome trace (traceEvents of complete events) holding the step, the phases,
            every forward region and ATen ops, with the softmax's ops inside the
            attention.softmax range on the same thread;
  perfetto: Perfetto's trace processor (the `perfetto` package) loads it and its slice
            table has the same ranges and ops, the ops nested under the regions. The
            processor's binary comes from LMPROF_TRACE_PROCESSOR or the package's cache
            (it downloads it once); where neither is there, this part exits 77 (skipped).

Usage: python3 trace_check.py --cli PATH --workdir DIR --part json|perfetto
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

REGIONS = ["embedding", "norm", "attention.qkv", "attention.rope", "attention.scores",
           "attention.softmax", "attention.value", "attention.output", "residual", "mlp",
           "lm_head", "loss"]
RANGES = ["step", "forward", "backward", "optimizer"] + REGIONS


def profile(cli, workdir):
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "ops.json"
    done = subprocess.run([cli, "run", "--model", "tiny", "--ctx", "32", "--batch", "2",
                           "--warmup", "1", "--steps", "1", "--device", "cpu", "--threads", "2",
                           "-q", "--profile-ops", "--json", str(out)],
                          check=True, capture_output=True, text=True)
    # Kineto's "ERROR: External init callback must run in same thread as registerClient",
    # printed when the engine's thread starts it (op_profiler.cpp), or any other error line.
    errors = [line for line in done.stderr.splitlines() if "ERROR" in line]
    if errors:
        sys.exit(f"the profiled run printed errors on stderr: {errors}")
    run = json.loads(out.read_text())["runs"][0]
    trace = pathlib.Path(run["op_profile"]["trace"])
    if not trace.is_absolute():
        trace = pathlib.Path.cwd() / trace
    if not trace.exists():
        sys.exit(f"the result set names the trace {trace}, which does not exist")
    return trace


def check_json(trace):
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") == "X"]
    names = {e["name"] for e in events}
    missing = [n for n in RANGES + ["aten::mm", "aten::exp"] if n not in names]
    if missing:
        sys.exit(f"{trace}: no events named {missing}")
    softmax = [e for e in events if e["name"] == "attention.softmax"][0]
    inside = [e for e in events if e["name"] == "aten::exp" and e["tid"] == softmax["tid"]
              and softmax["ts"] <= e["ts"] <= softmax["ts"] + softmax["dur"]]
    if not inside:
        sys.exit(f"{trace}: no aten::exp inside the first attention.softmax range")
    print(f"json: {len(events)} complete events, every range and op found, nesting right")


def check_perfetto(trace):
    try:
        from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig
    except ImportError as e:
        print(f"SKIP: the perfetto package is not installed ({e})")
        sys.exit(77)
    bin_path = os.environ.get("LMPROF_TRACE_PROCESSOR")
    if not bin_path:
        cache = pathlib.Path.home() / ".local/share/perfetto/prebuilts"
        found = sorted(cache.glob("trace_processor_shell*")) if cache.exists() else []
        if not found:
            print("SKIP: no trace_processor_shell: set LMPROF_TRACE_PROCESSOR, or let the "
                  "perfetto package download it once (needs the network)")
            sys.exit(77)
        bin_path = str(found[-1])
    tp = TraceProcessor(trace=str(trace), config=TraceProcessorConfig(bin_path=bin_path))
    names = {r.name for r in tp.query("select distinct name from slice")}
    missing = [n for n in RANGES + ["aten::mm"] if n not in names]
    if missing:
        sys.exit(f"trace processor: no slices named {missing}")
    nested = tp.query("""
        select count(*) as n from slice op
        join ancestor_slice(op.id) anc on anc.name = 'attention.softmax'
        where op.name = 'aten::exp'""")
    if next(iter(nested)).n == 0:
        sys.exit("trace processor: no aten::exp under an attention.softmax slice")
    print(f"perfetto: {len(names)} distinct slice names, ops nested under their regions")
    tp.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--part", choices=["json", "perfetto"], required=True)
    args = ap.parse_args()
    trace = profile(args.cli, pathlib.Path(args.workdir) / args.part)
    (check_json if args.part == "json" else check_perfetto)(trace)


if __name__ == "__main__":
    main()
