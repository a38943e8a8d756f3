#!/usr/bin/env bash
# Large result sets (issue 43, docs/RESULTS.md "Reading large files"): a night's sweep as
# one file, read by lmprof-cli show, compare and merge, against Python's json.load of the
# same file in the same rounds (alternating order), and against an older lmprof-cli when
# OLD_CLI names one. Whole processes: wall time and peak RSS (/usr/bin/time).
#   bench/big_sets.sh [RUNS ...]          sets of RUNS runs (default: 10 30 100 300)
#   ROUNDS=3  OLD_CLI=path/to/lmprof-cli  LMPROF_BIG_DIR=dir (kept: the seed and the sets)
# The sets are made by bench/make_big_set.py from one real run of tiny with 1,001 steps
# (measured here once, about 75 s), 7.7k memory samples per run, in 1.6's layout (samples as
# objects); each is also written again by lmprof-cli as it writes sets now (1.7, samples as
# columns) and read in that form ("show-columns"). Run it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=$PWD/build/app/lmprof-cli
[ -x "$cli" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
python=${PYTHON:-python3}
rounds=${ROUNDS:-3}
work=${LMPROF_BIG_DIR:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
[ $# -gt 0 ] || set -- 10 30 100 300

if [ ! -s "$work/seed.json" ]; then
  echo "measuring the seed run (tiny, 1,001 steps) ..." >&2
  "$cli" run --model tiny --device cpu --warmup 1 --steps 1000 --threads 2 -q \
    --json "$work/seed.json" > /dev/null
fi

# timed LABEL CMD...: appends "LABEL wall_s rss_kb" to $work/times
timed() {
  local label=$1
  shift
  /usr/bin/time -f "$label %e %M" -a -o "$work/times" "$@" > /dev/null 2>&1 ||
    { echo "failed: $*" >&2; exit 1; }
}

: > "$work/times"
for n in "$@"; do
  a=$work/big-$n.json b=$work/big-$n-b.json
  [ -s "$a" ] || "$python" bench/make_big_set.py "$work/seed.json" "$a" --runs "$n"
  [ -s "$b" ] || "$python" bench/make_big_set.py "$work/seed.json" "$b" --runs "$n" --jitter-seed 44
  c=$work/big-$n-columns.json
  [ -s "$c" ] || "$cli" merge "$a" --json "$c" > /dev/null
  for r in $(seq "$rounds"); do
    # Alternating order: lmprof first in odd rounds, Python first in even ones.
    if (( r % 2 )); then order="lmprof python"; else order="python lmprof"; fi
    for who in $order; do
      if [ "$who" = lmprof ]; then
        timed "$n show" "$cli" show "$a" --format csv
        timed "$n show-columns" "$cli" show "$c" --format csv
      else
        timed "$n json.load" "$python" -c "import json,sys; json.load(open(sys.argv[1]))" "$a"
      fi
    done
    timed "$n compare" "$cli" compare "$a" "$b" --format csv
    timed "$n merge" "$cli" merge "$a" "$b" --json "$work/merged.json" --format csv
    rm -f "$work/merged.json"
    if [ -n "${OLD_CLI:-}" ] && (( r == 1 )); then # once: it is the slow one
      timed "$n old-show" "$OLD_CLI" show "$a" --format csv
      timed "$n old-compare" "$OLD_CLI" compare "$a" "$b" --format csv
      timed "$n old-merge" "$OLD_CLI" merge "$a" "$b" --json "$work/merged.json" --format csv
      rm -f "$work/merged.json"
    fi
  done
done

"$python" - "$work/times" "$work" "$@" <<'PY'
import os, statistics, sys
times, work, sizes = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = {}
for line in open(times):
    parts = line.split()
    if len(parts) == 4 and parts[0].isdigit():
        rows.setdefault((parts[0], parts[1]), []).append((float(parts[2]), int(parts[3]) / 1024))
print(f"{'runs':>5} {'file MB':>8} {'what':<12} {'wall s (median, min-max)':<26} {'peak RSS MB':>11} {'RSS / file':>10}")
for n in sizes:
    for what in ("show", "show-columns", "json.load", "compare", "merge", "old-show",
                 "old-compare", "old-merge"):
        got = rows.get((n, what))
        if not got:
            continue
        layout = "-columns" if what == "show-columns" else ""
        mb = os.path.getsize(f"{work}/big-{n}{layout}.json") / 2**20
        walls = [w for w, _ in got]
        rss = max(r for _, r in got)
        files = 2 if what.endswith(("compare", "merge")) else 1
        spread = f"{statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f})"
        print(f"{n:>5} {mb:>8.0f} {what:<12} {spread:<26} {rss:>11.0f} {rss / (mb * files):>10.2f}")
PY
