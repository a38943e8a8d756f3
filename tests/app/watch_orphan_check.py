"""lmprof-cli watch never leaves its script training alone (docs/WATCH.md, "Faults"; issue
56): a second Ctrl+C, or a SIGKILL of lmprof-cli itself, ends the script with it. After a
second Ctrl+C lmprof-cli names the folder whose journal holds every finished step, and
lmprof.recover() reads it. Nothing here waits on how fast a process starts: each wait is for
an event (a step line, a process gone), with a limit that only catches a hang.

    watch_orphan_check.py --cli build/app/lmprof-cli --workdir DIR [--python PYTHON]
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import check_args

HANG_GUARD_S = 300.0

# Trains for as long as it is let, a step every 0.2 s; a Ctrl+C starts a close that takes
# minutes (as closing 10^6 steps did).
TRAIN = '''
import time
import torch
model = torch.nn.Linear(16, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
try:
    for step in range(100000):
        time.sleep(0.2)
        model(torch.randn(4, 16)).square().mean().backward()
        opt.step()
        opt.zero_grad()
except KeyboardInterrupt:
    time.sleep(600)
'''


def fail(what: str, stderr: str = "") -> None:
    sys.exit(f"FAILED: {what}\nstderr:\n{stderr}")


class Watched:
    """lmprof-cli watch running the script, its stderr read on a thread as it comes."""

    def __init__(self, cli: str, python: str, script: Path) -> None:
        scratch = script.parent / "tmp"  # lmprof-cli's scratch folders, left by a kill
        scratch.mkdir(exist_ok=True)
        self.process = subprocess.Popen([cli, "watch", "--", python, str(script)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, env={**os.environ, "TMPDIR": str(scratch)})
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def wait_for(self, text: str) -> None:
        deadline = time.monotonic() + HANG_GUARD_S
        while text not in self.stderr:
            if self.process.poll() is not None or time.monotonic() > deadline:
                fail(f"no {text!r} from lmprof-cli", self.stderr)
            time.sleep(0.1)

    def script_pid(self) -> int:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        pids = [int(p) for p in children.read_text().split()]
        if len(pids) != 1:
            fail(f"expected one child of lmprof-cli, found {pids}", self.stderr)
        return pids[0]

    def end(self) -> int:
        code = self.process.wait(timeout=HANG_GUARD_S)
        self._reader.join(HANG_GUARD_S)
        return code


def wait_gone(pid: int, what: str, stderr: str) -> None:
    deadline = time.monotonic() + HANG_GUARD_S
    while Path(f"/proc/{pid}").exists():
        status = Path(f"/proc/{pid}/status")
        try:
            if "State:\tZ" in status.read_text():
                return  # ended, waiting for init to reap it
        except OSError:
            return
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            fail(f"{what}: the script {pid} is still running", stderr)
        time.sleep(0.1)


def main() -> None:
    a = check_args.parse()
    script = a.workdir / "train.py"
    script.write_text(TRAIN)

    # A second Ctrl+C during a slow close: lmprof-cli ends, says where the steps are, and the script ends too.
    watched = Watched(a.cli, a.python, script)
    watched.wait_for("] step 3 ")
    pid = watched.script_pid()
    os.kill(watched.process.pid, signal.SIGINT)
    watched.wait_for("passed the interrupt on")  # two signals sent at once would be one
    os.kill(watched.process.pid, signal.SIGINT)
    code = watched.end()
    if code != -signal.SIGINT:
        fail(f"a second Ctrl+C ends lmprof-cli by the signal, got {code}", watched.stderr)
    wait_gone(pid, "after a second Ctrl+C", watched.stderr)
    named = re.search(r"every step it finished is in (\S+) \(", watched.stderr)
    if not named:
        fail("lmprof-cli names the folder with the script's steps", watched.stderr)
    folder = Path(named.group(1))
    journals = list(folder.glob("*.steps.jsonl"))
    if len(journals) != 1:
        fail(f"one journal in {folder}, found {journals}", watched.stderr)
    recovered = subprocess.run(
        [a.python, "-c", "import lmprof, sys; r = lmprof.recover(sys.argv[1])['runs'][0]; "
         "print(len(r['steps']), r['status'])", str(journals[0])],
        capture_output=True, text=True, timeout=HANG_GUARD_S)
    steps, status = recovered.stdout.split()
    if int(steps) < 3 or status != "cancelled":
        fail(f"recover() of the named journal: {recovered.stdout} {recovered.stderr}")
    shutil.rmtree(folder, ignore_errors=True)

    # lmprof-cli killed outright: the script dies with it.
    watched = Watched(a.cli, a.python, script)
    watched.wait_for("] step 2 ")
    pid = watched.script_pid()
    os.kill(watched.process.pid, signal.SIGKILL)
    watched.end()
    wait_gone(pid, "after lmprof-cli's SIGKILL", watched.stderr)
    print("watch never orphans its script: ok")


if __name__ == "__main__":
    main()
