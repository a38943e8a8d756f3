"""Selecting many runs in the Runs table as a person does, with xdotool (issue 60), and the
menu bar's message after Ctrl+S, there for a few seconds and then gone with no input.

  select_check.py LMPROF RESULT_SET WORKDIR     (under scripts/headless.sh: DISPLAY set)

Opens a result set of at least 12 runs with Runs in front, finds the table through the
window's own layout report (a demo's "layout" step), then drives the mouse and keyboard:
  range:  click the 2nd row, Shift+click the 6th: runs 2..6 selected;
  filter: type "bf16" in the filter, click the first row shown, Ctrl+A: every bf16 run.
  message: Ctrl+S (the file goes to the working folder); 2 s later the menu bar says "saved ...", and 12 s
           later, with nothing touched, it says nothing (the idle window draws a frame when
           the message is due to go).
Each case ends the window with SIGTERM, whose --layout-report names the selected runs and
the message the last frame drew.
Only the standard library and xdotool.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time


def wait_for(path: pathlib.Path, proc: subprocess.Popen, what: str) -> None:
    for _ in range(600):  # 60 s: a window under load takes seconds to open
        if path.exists() and path.stat().st_size > 0:
            return
        if proc.poll() is not None:
            sys.exit(f"select_check: the window exited ({proc.returncode}) before {what}")
        time.sleep(0.1)
    proc.kill()
    sys.exit(f"select_check: no {what} after 60 s")


def xdo(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True)
    time.sleep(0.3)  # a frame or more for the window to take it


def session(lmprof: str, runs: str, work: pathlib.Path, name: str, gestures) -> dict:
    out = work / name
    out.mkdir(parents=True, exist_ok=True)
    where = out / "where.json"
    demo = out / "demo.json"
    demo.write_text(json.dumps({"lmprof_demo": 1, "steps": [
        {"do": "show", "window": "Runs"}, {"do": "pause", "seconds": 0.5},
        {"do": "layout", "path": str(where)}]}))
    env = dict(os.environ, LMPROF_CONFIG_DIR=str(out / "config"))
    proc = subprocess.Popen([lmprof, "--open", runs, "--window-size", "1280x720", "--demo",
                             str(demo), "--layout-report", str(out / "end.json"), "-q"],
                            env=env, cwd=out)  # Ctrl+S saves to the working folder
    try:
        wait_for(where, proc, "layout report")
        time.sleep(0.3)
        table = next(t for t in json.loads(where.read_text())["tables"] if t["table"] == "runs")
        if table["fit"] < 8:
            sys.exit(f"select_check: Runs shows {table['fit']} rows")
        def row(i: int) -> tuple[str, str]:  # the centre of the "#" cell of shown row i
            y = table["y"] + table["row_height"] * (1.5 + i)
            return str(int(table["x"] + 20)), str(int(y))
        gestures(table, row)
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    if code != 0:
        sys.exit(f"select_check: {name}: the window exited {code}")
    return json.loads((out / "end.json").read_text())


def main() -> int:
    lmprof, runs, work = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    saved = json.loads(pathlib.Path(runs).read_text())["runs"]
    ids = [r["id"] for r in saved]

    def range_gesture(table, row):
        xdo("mousemove", *row(1), "click", "1")
        xdo("mousemove", *row(5))
        xdo("keydown", "shift")
        xdo("click", "1")
        xdo("keyup", "shift")
    got = session(lmprof, runs, work, "range", range_gesture)["selected"]
    if sorted(got) != sorted(ids[1:6]):
        sys.exit(f"select_check: Shift+click of rows 2 and 6 selected {got}, not {ids[1:6]}")

    def filter_gesture(table, row):
        # The filter is on the line above the table's header.
        xdo("mousemove", str(int(table["x"] + 60)), str(int(table["y"] - 14)), "click", "1")
        xdo("type", "--delay", "50", "bf16")
        xdo("mousemove", *row(0), "click", "1")
        # Ctrl held as a hand holds it, A pressed while it is down.
        xdo("keydown", "ctrl")
        xdo("key", "a")
        xdo("keyup", "ctrl")
    got = session(lmprof, runs, work, "filter", filter_gesture)["selected"]
    bf16 = [r["id"] for r in saved if r["config"]["precision"] == "bf16"]
    if sorted(got) != sorted(bf16):
        sys.exit(f"select_check: filter bf16 and Ctrl+A selected {got}, not {bf16}")

    def save_then(seconds: float):
        def gesture(table, row):
            xdo("mousemove", *row(0), "click", "1")
            xdo("keydown", "ctrl")
            xdo("key", "s")
            xdo("keyup", "ctrl")
            time.sleep(seconds)  # nothing touched meanwhile
        return gesture
    said = {}
    for name, seconds in (("message-shown", 2.0), ("message-gone", 12.0)):
        said[name] = session(lmprof, runs, work, name, save_then(seconds))["menu_message"]
    if not said["message-shown"].startswith("saved "):
        sys.exit(f"select_check: 2 s after Ctrl+S the menu bar said {said['message-shown']!r}")
    if said["message-gone"]:
        sys.exit(f"select_check: 12 s after Ctrl+S, idle, the menu bar still said "
                 f"{said['message-gone']!r}")
    print(f"select_check: a range of 5 and {len(bf16)} filtered runs selected by hand; "
          f"the menu bar said {said['message-shown']!r}, then nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
