#!/usr/bin/env bash
# A refactor that claims "no behaviour change" checks it here: two lmprof-cli builds (before
# and after) read the same saved files, and every output must be byte-identical: show in
# table, Markdown and CSV, ops by region and by op, compare of a file with itself, columns,
# and the result set merge writes (less its "created" time and "git" revision). Exit codes
# must match too (a foreign file is refused by both the same way). With --new-columns, an
# output that is the old one with columns added (scripts/same_but_new_columns.py: tables by
# their headers, CSVs by theirs) counts as the same, and is counted apart.
#   scripts/same_output.sh [--new-columns] OLD_CLI NEW_CLI FILE...   (.json, .jsonl, .json.gz)
set -uo pipefail
new_columns=false
if [[ ${1:-} == --new-columns ]]; then
  new_columns=true
  shift
fi
old=$1 new=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checks=0 differ=0 widened=0
same() { # label, then the command's arguments after the binary
  local label=$1
  shift
  checks=$((checks + 1))
  { "$old" "$@" 2>&1; echo "exit $?"; } > "$work/old.out"
  { "$new" "$@" 2>&1; echo "exit $?"; } > "$work/new.out"
  if diff "$work/old.out" "$work/new.out" > "$work/diff"; then
    return
  fi
  if $new_columns && python3 "$here/same_but_new_columns.py" "$work/old.out" "$work/new.out"; then
    widened=$((widened + 1))
    return
  fi
  differ=$((differ + 1))
  echo "DIFFERS: $label"
  head -n 20 "$work/diff"
}
same "columns" columns
i=0
for f in "$@"; do
  i=$((i + 1))
  if [[ $f == *.gz ]]; then
    gunzip -c "$f" > "$work/$i.json"
    f="$work/$i.json"
  fi
  for format in table markdown csv; do
    same "show $f --format $format" show "$f" --format "$format"
  done
  for by in region op; do
    same "ops $f --by $by" ops "$f" --by "$by"
  done
  same "compare $f $f" compare "$f" "$f"
  checks=$((checks + 1))
  "$old" merge "$f" --json "$work/old.json" > /dev/null 2>&1
  a=$?
  "$new" merge "$f" --json "$work/new.json" > /dev/null 2>&1
  b=$?
  if [[ $a != "$b" ]] || { [[ $a == 0 ]] && ! diff <(grep -v '"created"\|"git"' "$work/old.json") \
       <(grep -v '"created"\|"git"' "$work/new.json") > /dev/null; }; then
    differ=$((differ + 1))
    echo "DIFFERS: merge $f (exit $a and $b)"
  fi
  rm -f "$work/old.json" "$work/new.json"
done
echo "$checks outputs compared over $# files, $differ differ" \
  "$($new_columns && echo "($widened the same but for new columns)")"
[[ $differ == 0 ]]
