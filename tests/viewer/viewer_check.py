"""The viewer build (LMPROF_ENGINE=OFF, docs/INSTALL.md) as its user meets it: both programs
say what they are, a local run is refused in one line that names the way out, every file
command works, a watched script brings its own torch, a server from the full build runs what
the viewer submits (a run from the CLI, a study from the window, whose report the CLI then
writes again), and the window opens result sets and watches a script under Xvfb.

    viewer_check.py --cli VIEWER_CLI --gui VIEWER_WINDOW --workdir DIR --part PART
                    [--full-cli FULL_CLI] [--python PYTHON]

Parts: version, refusal, files, watch, connect (needs --full-cli; exit 77 without), window.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]
CORPUS = SOURCE / "tests" / "fuzz" / "corpus" / "result_set"
# A private X display for the window (scripts/headless.sh), exiting with the window's status.
HEADLESS = ["bash", str(SOURCE / "scripts" / "headless.sh"), "1280x720"]
HANG_GUARD_S = 300.0
SKIP = 77


def fail(what: str, output: str = "") -> None:
    sys.exit(f"FAILED: {what}\n{output}")


def run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=HANG_GUARD_S,
                          env={**os.environ, **(env or {})})


def check_version(o: argparse.Namespace) -> None:
    for program, name in ((o.cli, "lmprof-cli"), (o.gui, "lmprof")):
        got = run([program, "--version"])
        if got.returncode != 0:
            fail(f"{name} --version exited {got.returncode}", got.stderr)
        text = got.stdout
        for expected in (f"{name} ", "result sets lmprof.results/", "remote protocol ",
                         "no engine: a viewer build"):
            if expected not in text:
                fail(f"{name} --version does not say {expected!r}", text)


def check_refusal(o: argparse.Namespace) -> None:
    env = {"LMPROF_CONFIG_DIR": str(o.workdir / "config")}
    for args in (["run", "--model", "tiny", "--steps", "1"], ["serve", "--listen", "127.0.0.1:0"],
                 ["precision", "dtypes", "--model", "toy"]):
        got = run([o.cli, *args], env)
        lines = got.stderr.strip().splitlines()
        if got.returncode == 0 or not any("has no engine" in line for line in lines):
            fail(f"lmprof-cli {args[0]} without an engine: exit {got.returncode}, no refusal",
                 got.stderr)
        line = next(line for line in lines if "has no engine" in line)
        for way_out in ("--connect", "docs/INSTALL.md"):
            if way_out not in line:
                fail(f"the refusal does not name {way_out}", line)


def check_files(o: argparse.Namespace) -> None:
    run_json, sweep_json, ops_json = (str(CORPUS / n) for n in ("run.json", "sweep.json", "ops.json"))
    merged = o.workdir / "merged.json"
    commands = [["show", sweep_json], ["show", sweep_json, "--format", "markdown"],
                ["show", sweep_json, "--format", "csv"], ["compare", run_json, sweep_json],
                ["ops", ops_json, "--by", "op"], ["columns"],
                ["merge", run_json, sweep_json, "--json", str(merged)]]
    for args in commands:
        got = run([o.cli, *args])
        if got.returncode != 0 or not got.stdout.strip():
            fail(f"lmprof-cli {' '.join(args)}: exit {got.returncode}", got.stderr)
    # merge keeps one run of each id (the two files share one).
    ids = {r["id"] for n in ("run.json", "sweep.json")
           for r in json.loads((CORPUS / n).read_text())["runs"]}
    if {r["id"] for r in json.loads(merged.read_text())["runs"]} != ids:
        fail("merge did not keep every run", merged.read_text()[:400])


def train_script(steps: int, pause_s: float = 0.0) -> str:
    """A real PyTorch loop of `steps` steps, each after `pause_s` (a slow loader)."""
    return f"""
import time
import torch
torch.manual_seed(0)
model = torch.nn.Linear(16, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range({steps}):
    time.sleep({pause_s})
    model(torch.randn(4, 16)).square().mean().backward()
    opt.step()
    opt.zero_grad()
"""


def check_watch(o: argparse.Namespace) -> None:
    script = o.workdir / "train.py"
    script.write_text(train_script(6))
    saved = o.workdir / "watched.json"
    got = run([o.cli, "watch", "--json", str(saved), "--", o.python, str(script)],
              {"LMPROF_CONFIG_DIR": str(o.workdir / "config")})
    if got.returncode != 0:
        fail(f"lmprof-cli watch exited {got.returncode}", got.stderr)
    run0 = json.loads(saved.read_text())["runs"][0]
    if run0["status"] != "ok" or len(run0["steps"]) != 6:
        fail("the watched run is not the script's six steps", json.dumps(run0)[:400])


def check_connect(o: argparse.Namespace) -> None:
    if not o.full_cli:
        print("skipped: no --full-cli to serve from")
        sys.exit(SKIP)
    config = o.workdir / "config"
    log = o.workdir / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen([o.full_cli, "serve", "--listen", "127.0.0.1:0"],
                                  stdout=out, stderr=subprocess.STDOUT,
                                  env={**os.environ, "LMPROF_CONFIG_DIR": str(config)})
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        address = None
        while address is None and time.monotonic() < deadline and server.poll() is None:
            found = re.search(r"listening on (127\.0\.0\.1:\d+)", log.read_text())
            address = found.group(1) if found else None
            time.sleep(0.1)
        if address is None:
            fail("the full build's serve did not listen", log.read_text())
        token = str(config / "server" / "token")
        saved = o.workdir / "remote.json"
        got = run([o.cli, "run", "--model", "tiny", "--ctx", "16", "--batch", "2", "--warmup", "1",
                   "--steps", "2", "--device", "cpu", "--connect", address, "--token-file", token,
                   "--json", str(saved), "--quiet"])
        if got.returncode != 0:
            fail(f"run --connect from the viewer exited {got.returncode}", got.stderr)
        run0 = json.loads(saved.read_text())["runs"][0]
        if run0["status"] != "ok" or not run0["steps"]:
            fail("the served run did not come back", json.dumps(run0)[:400])
        # The engine's machine is the server's: the set says which LibTorch measured it.
        if not json.loads(saved.read_text())["environment"].get("torch"):
            fail("the remote run's environment names no LibTorch", saved.read_text()[:400])
        check_remote_study(o, address, token)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


STUDY_DEMO = {"lmprof_demo": 1, "steps": [
    {"do": "show", "window": "Study"},
    {"do": "study", "device": "cpu", "budget": "20s"},
    {"do": "wait", "for": "study", "timeout_s": 240}]}


def check_remote_study(o: argparse.Namespace, address: str, token: str) -> None:
    """The viewer's window runs a study on the server and writes its folder, report and
    charts at the desk; the viewer's CLI then writes the report again from that folder."""
    if not shutil.which("Xvfb"):
        return
    config = o.workdir / "window-config"
    demo = o.workdir / "study.json"
    demo.write_text(json.dumps(STUDY_DEMO))
    got = run([*HEADLESS, o.gui, "--window-size",
               "1280x720", "--connect", address, "--token-file", token, "--demo", str(demo),
               "--exit-when-done"],
              {"LMPROF_CONFIG_DIR": str(config), "LIBGL_ALWAYS_SOFTWARE": "1"})
    studies = sorted((config / "studies").glob("study-*"))
    if got.returncode != 0 or not studies or not (studies[0] / "report.md").exists():
        fail(f"the viewer window's study on the server wrote no report (exit {got.returncode})",
             got.stderr)
    report = studies[0] / "report.md"
    charts = sorted(studies[0].glob("*.png"))
    if "## " not in report.read_text() or not charts:
        fail("the study's report has no sections or no charts", report.read_text()[:600])
    report.unlink()
    got = run([o.cli, "study", "--report", str(studies[0])])
    if got.returncode != 0 or "## " not in report.read_text():
        fail(f"lmprof-cli study --report in the viewer: exit {got.returncode}", got.stderr)


def check_window(o: argparse.Namespace) -> None:
    if not shutil.which("Xvfb"):
        print("skipped: no Xvfb")
        sys.exit(SKIP)
    env = {"LMPROF_CONFIG_DIR": str(o.workdir / "config"), "LIBGL_ALWAYS_SOFTWARE": "1"}
    shot = o.workdir / "opened.png"
    got = run([*HEADLESS, o.gui, "--window-size",
               "1280x720", "--discard-last", "--open", str(CORPUS / "sweep.json"),
               "--screenshot", str(shot), "--exit-when-done"], env)
    if got.returncode != 0 or not shot.exists() or shot.stat().st_size < 10_000:
        fail(f"the viewer window did not open a result set (exit {got.returncode})", got.stderr)
    # Asked to run, the window finishes the run at once with the refusal, and says it.
    got = run([*HEADLESS, o.gui, "--window-size",
               "1280x720", "--discard-last", "--model", "tiny", "--steps", "1", "--autorun",
               "--exit-when-done"], env)
    if got.returncode == 0 or "has no engine" not in got.stderr:
        fail(f"the viewer window's run was not refused in words (exit {got.returncode})",
             got.stderr)
    # The window watches a script that brings its own torch, and saves its run. The window
    # connects from the script's first step, retrying each second: a slow loader (0.3 s a
    # step, as gui_end_to_end_watched's) lets it see the run while it comes.
    script = o.workdir / "train.py"
    script.write_text(train_script(8, pause_s=0.3))
    saved = o.workdir / "watched.json"
    got = run([*HEADLESS, o.gui, "--window-size",
               "1280x720", "--discard-last", "--exit-when-done", "--save-on-exit", str(saved),
               "--", o.python, str(script)], env)
    if got.returncode != 0 or not saved.exists():
        fail(f"the viewer window watching a script: exit {got.returncode}", got.stderr)
    run0 = json.loads(saved.read_text())["runs"][0]
    if run0["status"] != "ok" or len(run0["steps"]) != 8:
        fail("the window's watched run is not the script's eight steps", json.dumps(run0)[:400])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--gui", required=True)
    parser.add_argument("--full-cli", default="")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--part", required=True,
                        choices=["version", "refusal", "files", "watch", "connect", "window"])
    o = parser.parse_args()
    shutil.rmtree(o.workdir, ignore_errors=True)
    o.workdir.mkdir(parents=True)
    globals()[f"check_{o.part}"](o)
    print(f"viewer {o.part}: ok")


if __name__ == "__main__":
    main()
