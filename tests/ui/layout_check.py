"""The window's layout, checked through its own layout report (docs/WINDOW.md, "Layout").

  layout_check.py demo OUT_DIR WINDOW...    print a demo script that runs tiny once, then
                                            brings each window to the front and writes a
                                            screenshot and a layout report of it into OUT_DIR
  layout_check.py check REPORT...           fail unless every plot of every report is at
                                            least the report's minimum, frame and data area,
                                            and wholly in view (the Study's report aside),
                                            and every main table in front shows the rows its
                                            view wants; no legend box or note lies over a
                                            plot's data area
  layout_check.py crush INI                 squeeze the charts of a saved layout (imgui.ini)
                                            into 80 px, the tables' strip taking the rest

Only the standard library: gui_e2e.sh runs it with the system's python3.
"""

import json
import pathlib
import re
import sys


def stem(window: str) -> str:
    return window.lower().replace(" ", "-")


def demo(out: str, windows: list[str]) -> None:
    steps: list[dict] = [
        {"do": "run", "config": {"context_length": 32, "measure_steps": 4, "warmup_steps": 1}},
        {"do": "wait", "for": "run", "timeout_s": 600},
    ]
    for window in windows:
        steps += [
            {"do": "show", "window": window},
            {"do": "pause", "seconds": 0.4},
            {"do": "screenshot", "path": f"{out}/tab-{stem(window)}.png"},
            {"do": "layout", "path": f"{out}/layout-{stem(window)}.json"},
        ]
    print(json.dumps({"lmprof_demo": 1, "steps": steps}))


def overlap(a: list[float], b: list[float]) -> float:
    """The area two boxes [x0, y0, x1, y1] share, in square pixels."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, width) * max(0.0, height)


def text_over_data(p: dict) -> list[str]:
    """No legend box over the plot's data area, and no note drawn over it (notes go above)."""
    problems = []
    if p.get("notes_over_data"):
        problems.append("a note drawn over the data")
    legend, data = p.get("legend_box"), p.get("data_box")
    if legend and data and overlap(legend, data) > 1.0:
        problems.append(f"legend box {[round(v) for v in legend]} over the data area "
                        f"{[round(v) for v in data]}")
    return problems


def check(reports: list[str]) -> int:
    failures = 0
    plots = 0
    for path in reports:
        report = json.loads(pathlib.Path(path).read_text())
        frame, data = report["min_plot"], report["min_data"]
        front = {w["window"] for w in report["windows"]}
        for p in report["plots"]:
            plots += 1
            where = f"{pathlib.Path(path).name}: {p['window']} / {p['chart']}"
            problems = []
            if p["width"] < frame["width"] or p["height"] < frame["height"]:
                problems.append(f"shows {p['width']:.0f}x{p['height']:.0f} of its frame")
            if p["data_width"] < data["width"] or p["data_height"] < data["height"]:
                problems.append(f"data area {p['data_width']:.0f}x{p['data_height']:.0f}")
            if p["window"] != "Study" and (p["width"] < p["frame_width"] - 1 or
                                           p["height"] < p["frame_height"] - 1):
                problems.append(f"frame {p['frame_width']:.0f}x{p['frame_height']:.0f} "
                                "partly out of view")
            if p["window"] not in front:
                problems.append("drawn by a window not in front")
            problems += text_over_data(p)
            if problems:
                failures += 1
                print(f"layout_check: {where}: " + "; ".join(problems), file=sys.stderr)
        for t in report.get("tables", []):
            if t["window"] in front and t["fit"] < t["wanted"]:
                failures += 1
                print(f"layout_check: {pathlib.Path(path).name}: {t['window']} / {t['table']}: "
                      f"{t['fit']:.0f} of the {t['wanted']} rows wanted in view", file=sys.stderr)
    print(f"layout_check: {len(reports)} report(s), {plots} plot(s), {failures} failing")
    return 1 if failures or plots == 0 else 0


def crush(ini: str) -> None:
    text = pathlib.Path(ini).read_text()
    # The place the tables dock in (Summary's) and its sibling, the charts above it.
    summary = re.search(r"\[Window\]\[Summary\][^\[]*?DockId=(0x[0-9A-F]+)", text)
    if not summary:
        sys.exit("layout_check: no docked Summary window in " + ini)
    node = summary.group(1)
    parent = re.search(rf"ID={node} Parent=(0x[0-9A-F]+)", text).group(1)
    sizes = {node: 900, None: 80}
    def squeeze(m: re.Match) -> str:
        height = sizes[node] if m.group(1) == node else sizes[None]
        return f"ID={m.group(1)} Parent={parent} SizeRef={m.group(2)},{height}"
    text, n = re.subn(rf"ID=(0x[0-9A-F]+) Parent={parent} SizeRef=(\d+),\d+", squeeze, text)
    if n != 2:
        sys.exit(f"layout_check: expected two places under {parent}, found {n}")
    pathlib.Path(ini).write_text(text)


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "demo":
        demo(args[0], args[1:])
    elif command == "check":
        sys.exit(check(args))
    elif command == "crush":
        crush(args[0])
    else:
        sys.exit(__doc__)
