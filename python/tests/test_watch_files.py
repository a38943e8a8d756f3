"""What the watcher writes and reads, only where asked, and what it keeps when something goes
wrong (issue 56): `save` resolved and checked once at watch(); devices, FIFOs, folders and
symlinks refused; recover() keeping every readable line; log() refusing values it could
not record; a finished step journaled as it ends; a watcher that stops saying so."""

from __future__ import annotations

import functools
import json
import os
import signal
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import lmprof
from conftest import TinyGPT, batches, loss_of, run_script, train_steps
from lmprof import _instruments

HANG_GUARD_S = 60.0


def watch_sgd(model: TinyGPT, **kwargs: Any) -> tuple[lmprof.Run, torch.optim.Optimizer]:
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    return lmprof.watch(model, opt, **kwargs), opt


@pytest.mark.parametrize("save, why", [
    ("/dev/null", "is a device"),
    ("/dev/full", "is a device"),
    ("{tmp}", "is a folder"),
    ("{tmp}/sub/", "names a folder"),
    ("{tmp}/missing/run.json", "does not exist"),
    ("/proc/self/run.json", "cannot be written"),
])
def test_save_that_is_no_regular_file_is_refused_at_watch(
        model: TinyGPT, tmp_path: Path, save: str, why: str) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match=f"save: .*{why}"):
        watch_sgd(model, save=save.format(tmp=tmp_path))
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_a_fifo_or_a_link_in_saves_place_or_its_journals_is_refused(
        model: TinyGPT, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(ValueError, match="is a FIFO"):
        watch_sgd(model, save=tmp_path / "fifo.json")
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (tmp_path / "linked.json").symlink_to(target)
    with pytest.raises(ValueError, match="is a symbolic link"):
        watch_sgd(model, save=tmp_path / "linked.json")
    (tmp_path / "run.json.steps.jsonl").symlink_to(target)
    with pytest.raises(ValueError, match=r"steps\.jsonl' is a symbolic link"):
        watch_sgd(model, save=tmp_path / "run.json")
    assert target.read_text() == "keep me\n"


def test_a_link_planted_after_watch_is_not_written_through(
        model: TinyGPT, tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    run, opt = watch_sgd(model, save=tmp_path / "run.json")
    (tmp_path / "run.json.steps.jsonl").symlink_to(target)  # between watch() and the journal
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_steps(run, model, opt, 3)
        run.close()
    assert target.read_text() == "keep me\n"
    assert any("symbolic link" in str(w.message) for w in caught)
    (record,) = json.loads((tmp_path / "run.json").read_text())["runs"]
    assert record["status"] == "error" and "lmprof stopped watching" in record["error"]


def test_save_is_resolved_once_so_chdir_moves_nothing(
        model: TinyGPT, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    run, opt = watch_sgd(model, save="run.json")
    train_steps(run, model, opt, 2)
    monkeypatch.chdir(tmp_path / "b")
    train_steps(run, model, opt, 2)
    run.close()
    assert len(json.loads((tmp_path / "a" / "run.json").read_text())["runs"][0]["steps"]) == 4
    assert not list((tmp_path / "b").iterdir())


@pytest.mark.parametrize("tokens", [10**400, 2**53 + 1, 0, -5],
                         ids=["10^400", "2^53+1", "0", "-5"])
def test_tokens_per_step_beyond_what_a_reader_takes_is_refused_at_watch(
        model: TinyGPT, tokens: int) -> None:
    with pytest.raises(ValueError, match="tokens_per_step: expected an int from 1 to 2\\^53"):
        watch_sgd(model, tokens_per_step=tokens)


@pytest.mark.parametrize("value, why", [
    (1 + 2j, "expected a number or a tensor, got complex"),
    (10**400, "is beyond a double"),
    (torch.tensor(1 + 2j), "complex"),
    (torch.empty((), device="meta"), "meta device"),
], ids=["complex", "10^400", "a complex tensor", "a meta tensor"])
def test_a_value_log_cannot_record_is_refused_and_the_run_loses_nothing(
        model: TinyGPT, tmp_path: Path, value: Any, why: str) -> None:
    run, opt = watch_sgd(model, save=tmp_path / "run.json")
    for i, (x, y) in enumerate(batches(10)):
        with run.step():
            loss = loss_of(model, x, y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            if i == 6:
                with pytest.raises(ValueError, match=why):
                    run.log(odd=value)
            run.log(loss=loss)
    run.close()
    (record,) = json.loads((tmp_path / "run.json").read_text())["runs"]
    assert record["status"] == "ok" and len(record["steps"]) == 10
    assert all("loss" in s and "scalars" not in s for s in record["steps"])


def test_a_watcher_that_stops_on_its_own_error_says_so_in_the_run(
        model: TinyGPT, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run, opt = watch_sgd(model, save=tmp_path / "run.json")
    train_steps(run, model, opt, 6)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a fault of the watcher's own")

    monkeypatch.setattr(_instruments.Instruments, "begin", broken)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        train_steps(run, model, opt, 4)
    run.close()
    (record,) = json.loads((tmp_path / "run.json").read_text())["runs"]
    assert len(record["steps"]) == 6
    assert record["status"] == "error"
    assert "stopped watching after 6 recorded step(s)" in record["error"]
    assert "a fault of the watcher's own" in record["error"]


def in_a_thread(call: Callable[[], Any]) -> Any:
    """Runs `call` on a daemon thread: a hang fails the test instead of blocking it."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except Exception as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), "it hung"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def test_recover_refuses_a_fifo_a_device_and_a_folder_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    for path, why in ((tmp_path / "fifo", "is a FIFO"), ("/dev/zero", "is a device"),
                      (tmp_path, "is a folder")):
        with pytest.raises(ValueError, match=f"recover: .*{why}"):
            in_a_thread(functools.partial(lmprof.recover, path))


def test_recover_keeps_every_readable_line_and_names_the_bad_ones(
        model: TinyGPT, tmp_path: Path) -> None:
    run, opt = watch_sgd(model, save=tmp_path / "run.json")
    train_steps(run, model, opt, 6)
    journal = tmp_path / "run.json.steps.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)  # header, then six steps
    assert len(lines) == 7
    no_index = json.loads(lines[3])
    del no_index["step"]["index"]
    damaged = [lines[0], lines[1], b'{"kind": "step", "step": "\xff\xfe"}\n', lines[2],
               b"[" * 5000 + b"]" * 5000 + b"\n", (json.dumps(no_index) + "\n").encode(),
               lines[4], b'{"kind": "vote"}\n', lines[5], lines[6][:40]]
    journal.write_bytes(b"".join(damaged))
    with pytest.warns(RuntimeWarning) as told:
        (record,) = lmprof.recover(journal)["runs"]
    message = str(told[0].message)
    assert "5 line(s) skipped" in message and "line 10: not JSON" in message  # cut by a kill
    assert "line 3: not UTF-8" in message and "line 5: not JSON" in message
    assert "line 6: the step has no index" in message and "line 8: not a line" in message
    assert [s["index"] for s in record["steps"]] == [0, 1, 3, 4]
    assert record["status"] == "cancelled"
    run.close()


def test_a_kill_right_after_a_step_loses_no_finished_step(tmp_path: Path) -> None:
    save = tmp_path / "run.json"
    done = run_script(f"""
import os, signal, torch
import lmprof
model = torch.nn.Linear(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=1e-2)
run = lmprof.watch(model, opt, save={str(save)!r})
for i in range(5):
    with run.step():
        loss = model(torch.randn(4, 8)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    run.log(loss=loss)  # after the step: added to its record
os.kill(os.getpid(), signal.SIGKILL)
""", tmp_path)
    assert done.returncode == -signal.SIGKILL
    (record,) = lmprof.recover(tmp_path / "run.json.steps.jsonl")["runs"]
    assert [s["index"] for s in record["steps"]] == [0, 1, 2, 3, 4]
    assert all(isinstance(s["loss"], float) for s in record["steps"])


def test_a_scalar_logged_after_its_step_is_in_the_result(model: TinyGPT, tmp_path: Path) -> None:
    run, opt = watch_sgd(model, save=tmp_path / "run.json")
    for x, y in batches(3):
        with run.step():
            loss = loss_of(model, x, y)
            loss.backward()
            opt.step()
            opt.zero_grad()
        run.log(loss=loss, lr=0.01)
    assert all("loss" in s and s["scalars"] == {"lr": 0.01} for s in run.steps)
    run.close()
    (record,) = json.loads((tmp_path / "run.json").read_text())["runs"]
    assert [s["scalars"]["lr"] for s in record["steps"]] == [0.01] * 3
