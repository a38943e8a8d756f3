#!/usr/bin/env bash
# A result set in the layouts other writers use (issue 56): indented (json.dump(indent=1),
# as lmprof's own) and on one line (json.dump, jq -c), each read by lmprof-cli show and by
# Python's json.load, in alternating order; and the refusal of a set whose environment
# holds an object of a million members. Whole processes: wall time and peak RSS.
#   bench/layouts.sh SET.json        ROUNDS=3 (default)
# SET.json: any lmprof result set, e.g. one of bench/big_sets.sh's. Run it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=$PWD/build/app/lmprof-cli
python=${PYTHON:-python3}
rounds=${ROUNDS:-3}
set_file=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" - "$set_file" "$work" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
json.dump(document, open(f"{sys.argv[2]}/indented.json", "w"), indent=1)
json.dump(document, open(f"{sys.argv[2]}/one-line.json", "w"))
document["environment"]["extra"] = {f"k{i}": i for i in range(1_000_000)}
json.dump(document, open(f"{sys.argv[2]}/wide.json", "w"))
PY

: > "$work/times"
timed() {
  local label=$1
  shift
  /usr/bin/time -f "$label %e %M" -a -o "$work/times" "$@" > /dev/null 2>&1 || true
}
for round in $(seq "$rounds"); do
  for layout in indented one-line; do
    if [ $((round % 2)) -eq 1 ]; then
      timed "$layout show" "$cli" show --format csv "$work/$layout.json"
      timed "$layout json.load" "$python" -c "import json,sys; json.load(open(sys.argv[1]))" "$work/$layout.json"
    else
      timed "$layout json.load" "$python" -c "import json,sys; json.load(open(sys.argv[1]))" "$work/$layout.json"
      timed "$layout show" "$cli" show --format csv "$work/$layout.json"
    fi
  done
  timed "wide refused" "$cli" show "$work/wide.json"
done
ls -l "$work"/*.json | awk '{printf "%s %.1f MB\n", $NF, $5 / 1e6}' | sed "s|$work/||"
"$python" - "$work/times" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("Command"):  # time's note of a non-zero exit (the refusal)
        continue
    *label, wall, rss = line.split()
    rows.setdefault(" ".join(label), []).append((float(wall), int(rss) / 1024))
print("| layout, reader | wall s, median (min-max) | peak RSS MB |")
print("|---|---|---:|")
for label, values in rows.items():
    walls = [w for w, _ in values]
    print(f"| {label} | {statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | "
          f"{max(r for _, r in values):.0f} |")
PY
