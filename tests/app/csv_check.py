"""CSV export read back by Python's csv module (a real RFC 4180 reader, strict mode).

Runs lmprof-cli twice (an ok run and an injected out-of-memory run), merges the two result
sets, and checks `lmprof-cli show FILE --format csv`: CRLF line ends, the header equals
the columns lmprof declares (`lmprof-cli columns`, from the engine's column registry, with
those of each scalar the runs logged, their loss among them),
one row per run, each integer and real column parsing as one, numbers where a run has
them and empty cells where it does not.

Usage: python3 csv_check.py --cli PATH --workdir DIR
"""
import argparse
import csv
import io
import json
import os
import pathlib
import subprocess
import sys



def registry(cli):
    """The columns lmprof declares (`lmprof-cli columns`): [(key, unit, kind, header)]."""
    text = subprocess.run([cli, "columns"], check=True, capture_output=True).stdout.decode()
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    if rows[0] != ["key", "unit", "kind", "header"]:
        sys.exit(f"lmprof-cli columns: unexpected header {rows[0]}")
    return rows[1:]


def documented_columns():
    """The column list docs/RESULTS.md gives people, expanded: plain names, then each phase
    with each statistic suffix, then plain names again."""
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "RESULTS.md").read_text()
    text = doc[doc.index("They are stable:"):doc.index("The CSV test")]
    spans = [[name.strip() for name in span.split(",")]
             for span in text.split("`")[1::2]]
    first, phases, stats, last = spans
    return first + [p + s for p in phases for s in stats] + last


def kind_errors(header, kinds, row, label):
    """A cell of an integer or real column must parse as one (or be empty)."""
    errors = []
    for key, cell in zip(header, row):
        if cell == "" or kinds.get(key) == "text":
            continue
        try:
            int(cell) if kinds[key] == "integer" else float(cell)
        except (KeyError, ValueError):
            errors.append(f"{label}: {key} = {cell!r} is not {kinds.get(key, '?')}")
    return errors


def run(cli, out, env_extra=None, expect=0):
    env = dict(os.environ, **(env_extra or {}))
    cmd = [cli, "run", "--model", "tiny", "--ctx", "16", "--batch", "1", "--warmup", "1",
           "--steps", "3", "--device", "cpu", "-q", "--json", str(out)]
    rc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL).returncode
    if rc != expect:
        sys.exit(f"{' '.join(cmd)} exited {rc}, expected {expect}")
    return json.loads(out.read_text())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--workdir", required=True)
    args = p.parse_args()
    work = pathlib.Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)

    merged = run(args.cli, work / "ok.json")
    oom = run(args.cli, work / "oom.json", {"LMPROF_FAULT_OOM": "backward"}, expect=3)
    merged["runs"] += oom["runs"]
    (work / "both.json").write_text(json.dumps(merged))

    # Every run's columns, then per name the runs logged (the loss is one) the columns
    # `lmprof-cli columns` declares for NAME.
    columns = registry(args.cli)
    fixed = [key for key, _, _, _ in columns if "NAME" not in key]
    logged = sorted({name for r in merged["runs"] for s in r["steps"]
                     for name in [*s.get("scalars", {}), *(["loss"] if "loss" in s else [])]})
    templates = [(key, unit, kind) for key, unit, kind, _ in columns if "NAME" in key]
    if [key for key, _, _ in templates] != [f"scalar.NAME.{stat}" for stat in
                                           ("last", "mean", "std", "min", "max", "n")]:
        sys.exit(f"lmprof-cli columns: unexpected scalar columns {templates}")
    for name in logged:
        columns += [[key.replace("NAME", name), unit, kind, ""] for key, unit, kind in templates]
    expected = fixed + [key.replace("NAME", name) for name in logged for key, _, _ in templates]
    kinds = {key: kind for key, _, kind, _ in columns}
    units = {key: unit for key, unit, _, _ in columns}
    text = subprocess.run([args.cli, "show", str(work / "both.json"), "--format", "csv"],
                          check=True, capture_output=True).stdout.decode()
    failures = []
    if "\r\n" not in text or "\n" in text.replace("\r\n", ""):
        failures.append("records must end with CRLF and contain no bare LF")
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    header, body = rows[0], rows[1:]
    if header != expected:
        failures.append(f"header differs from the declared columns:\n  {header}\n  {expected}")
    if documented_columns() != fixed:
        failures.append(f"docs/RESULTS.md lists other columns than lmprof declares:\n"
                        f"  {documented_columns()}\n  {fixed}")
    if "loss" not in logged:
        failures.append(f"the ok run logged no loss: {logged}")
    if units.get("total_ms_mean") != "ms" or units.get("peak_forward_bytes") != "bytes":
        failures.append(f"units: total_ms_mean {units.get('total_ms_mean')!r}, "
                        f"peak_forward_bytes {units.get('peak_forward_bytes')!r}")
    if len(body) != 2:
        failures.append(f"expected 2 rows, got {len(body)}")
    else:
        ok, bad = (dict(zip(header, r)) for r in body)
        if any(len(r) != len(header) for r in body):
            failures.append("a row has a different number of cells than the header")
        for label, r in (("ok run", body[0]), ("oom run", body[1])):
            failures += kind_errors(header, kinds, r, label)
        if ok["status"] != "ok" or bad["status"] != "oom" or bad["failed_phase"] != "backward":
            failures.append(f"statuses: {ok['status']}, {bad['status']} {bad['failed_phase']}")
        for col in ("forward_ms_mean", "total_ms_std", "tokens_per_s", "peak_backward_bytes"):
            try:
                if float(ok[col]) <= 0:
                    failures.append(f"ok run: {col} = {ok[col]} is not positive")
            except ValueError:
                failures.append(f"ok run: {col} = {ok[col]!r} is not a number")
        if ok["total_ms_n"] != "3":
            failures.append(f"ok run: total_ms_n = {ok['total_ms_n']}, expected 3")
        # The loss of its last step, and over its 3 measured steps.
        last_loss = merged["runs"][0]["steps"][-1]["loss"]
        if ok.get("scalar.loss.n") != "3" or ok.get("scalar.loss.last") != f"{last_loss:.6g}":
            failures.append(f"ok run: scalar.loss.n {ok.get('scalar.loss.n')!r}, last "
                            f"{ok.get('scalar.loss.last')!r}, expected 3 and {last_loss:.6g}")
        if bad["forward_ms_mean"] != "" or "out of memory" not in bad["error"]:
            failures.append(f"oom run: stats {bad['forward_ms_mean']!r}, error {bad['error']!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"csv_check: {len(body)} rows, {len(header)} columns, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
