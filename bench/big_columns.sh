#!/usr/bin/env bash
# A run with two million memory samples (issue 56, item 11): a real tiny CPU run whose
# memory_columns are stretched to ROWS rows (about 130 MB), then the time and peak resident
# memory of `show`, `compare` (the file against itself) and `merge` of it, beside `show` of
# the same file with the columns under a key no reader knows (the parse alone) and of the
# one-run file (LibTorch's share, issue 59).
# Usage: bench/big_columns.sh [rows]   (default 2000000)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-2000000}
cli=build/app/lmprof-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cli" run --model tiny --ctx 16 --batch 2 --steps 5 --warmup 1 --device cpu --threads 2 -q \
  --json "$work/one.json" >/dev/null
.venv/bin/python - "$work" "$rows" <<'PY'
import json, sys
work, rows = sys.argv[1], int(sys.argv[2])
doc = json.load(open(f"{work}/one.json"))
run = doc["runs"][0]
columns = run["memory_columns"]
n = len(columns["t_ms"])
run["memory_columns"] = {
    key: ([i * 0.1 for i in range(rows)] if key == "t_ms" else
          [min(i * 5 // rows, 4) for i in range(rows)] if key == "step" else
          [values[i % n] for i in range(rows)])
    for key, values in columns.items()}
json.dump(doc, open(f"{work}/big.json", "w"))
run["unread"] = run.pop("memory_columns")
json.dump(doc, open(f"{work}/unread.json", "w"))
PY
echo "$(stat -c %s "$work/big.json") bytes, $rows memory samples"
measure() { /usr/bin/time -f "$1: %e s, %M KB" "${@:2}" >/dev/null; }
measure "show, one run of 63 samples" "$cli" show "$work/one.json"
measure "show, the columns unread" "$cli" show "$work/unread.json"
measure "show" "$cli" show "$work/big.json"
measure "compare" "$cli" compare "$work/big.json" "$work/big.json"
measure "merge" "$cli" merge "$work/big.json" --json "$work/merged.json"
