#!/usr/bin/env python3
"""Whether NEW is OLD with columns added and nothing else: lmprof-cli's tables (grid or
Markdown, read by their '|' cells) and CSVs (by header). scripts/same_output.sh uses it
with --new-columns, for a change that adds columns to every table.

  scripts/same_but_new_columns.py OLD_FILE NEW_FILE   exit 0: same but for new columns
  scripts/same_but_new_columns.py --self-test        its own cases (ctest)
"""
from __future__ import annotations

import csv
import io
import re
import sys

# A grid table's border ("+----+") or a Markdown table's rule ("|---|:--|"); a row of
# cells that are only dashes ("| - | - |") is data, not a border.
BORDER = re.compile(r"\+[+=\-]*\+|\|?(\s*:?-{3,}:?\s*\|)+\s*:?-{0,}:?\s*")


def cells(text: str) -> list[list[str]]:
    """Each line as its cells: a table row split at '|', any other line whole; borders go."""
    rows = []
    for line in text.splitlines():
        if BORDER.fullmatch(line):
            continue
        if "|" in line:
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        else:
            rows.append([line])
    return rows


def subsequence(old: list[str], new: list[str]) -> list[int] | None:
    """The places in NEW of OLD's cells, in order (each OLD cell at the first place left that
    holds it); None when OLD is not NEW with cells added."""
    places, at = [], 0
    for cell in old:
        while at < len(new) and new[at] != cell:
            at += 1
        if at == len(new):
            return None
        places.append(at)
        at += 1
    return places


def tables_match(old: list[list[str]], new: list[list[str]]) -> bool:
    """Row by row, where a table's header (a row of several cells after a line that is not
    one) says which of NEW's columns OLD had; other lines must be equal."""
    if len(old) != len(new):
        return False
    places: list[int] | None = None
    previous = 1
    for o, n in zip(old, new):
        if len(n) > 1 and previous == 1:  # a table's header
            places = subsequence(o, n)
            if places is None:
                return False
        previous = len(n)
        if len(n) == 1 or places is None:
            if o != n:
                return False
        elif o != [n[i] for i in places if i < len(n)]:
            return False
    return True


def same_but_new_columns(old_text: str, new_text: str) -> bool:
    old, new = list(csv.reader(io.StringIO(old_text))), list(csv.reader(io.StringIO(new_text)))
    if "|" not in old_text and old and new and len(old[0]) > 3:  # a CSV
        keep = subsequence(old[0], new[0])
        return keep is not None and old == [[r[i] for i in keep if i < len(r)] for r in new]
    return tables_match(cells(old_text), cells(new_text))


def self_test() -> int:
    """The checker's own cases: what must pass and what must fail."""
    grid_old = "+---+---+\n| a | b |\n+===+===+\n| 1 | - |\n| 2 | - |\n+---+---+\n"
    grid_new = "+---+---+---+\n| a | x | b |\n+===+===+===+\n| 1 | 9 | - |\n| 2 | 8 | - |\n"
    md_old = "| a | b |\n| --- | ---: |\n| 1 | - |\n"
    md_new = "| a | b | x |\n| --- | ---: | --- |\n| 1 | - | 7 |\n"
    csv_old = "a,b,c,d\n1,2,3,4\n"
    csv_new = "a,b,c,d,scalar.x.last\n1,2,3,4,5\n"
    cases = [
        (grid_old, grid_new, True, "a grid table with a column added"),
        (md_old, md_new, True, "a Markdown table with a column added"),
        (csv_old, csv_new, True, "a CSV with a column added"),
        (grid_old, grid_new.replace("| 2 | 8 | - |", "| 3 | 8 | - |"), False, "a changed cell"),
        (grid_old, grid_new.replace("| 2 | 8 | - |\n", ""), False, "a dropped row"),
        (md_old, md_new.replace("| 1 | - | 7 |", "| 1 | -- | 7 |"), False, "a changed dash cell"),
        (md_old, md_new.replace("| a | b | x |", "| a | c | x |"), False, "a renamed column"),
        (csv_old, csv_new.replace("1,2,3,4,5", "1,2,0,4,5"), False, "a changed CSV value"),
        (csv_old, csv_new + "x\n", False, "an added line"),
    ]
    failed = [what for old, new, want, what in cases if same_but_new_columns(old, new) != want]
    for what in failed:
        print(f"self-test failed: {what}")
    print("self-test: " + ("failed" if failed else "passed"))
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    with open(argv[1], "rb") as a, open(argv[2], "rb") as b:
        old, new = a.read(), b.read()
    if old == new:
        return 0
    text = {"encoding": "utf-8", "errors": "surrogateescape"}
    return 0 if same_but_new_columns(old.decode(**text), new.decode(**text)) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
