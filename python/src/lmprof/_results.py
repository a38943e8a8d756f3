"""A watched run as a result set (docs/RESULTS.md): its summary with the engine's statistics,
the environment block, the whole file written atomically, and the step journal that a
killed script leaves behind (docs/WATCH.md, "Faults")."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import torch

from . import _files, _formats
from ._records import ResultSet, RunRecord, Source, StepRecord, Tool, WatchedConfig
from ._steps import PEAK_PHASES, PHASES
from ._tally import MAX_STEPS, Tally

SCHEMA = _formats.RESULT_SCHEMA
JOURNAL_SCHEMA = _formats.JOURNAL_SCHEMA
VERSION = "0.1.0"
MAX_DURATION_MS = 1e9  # the C++ reader's bound on a duration (docs/LIMITS.md)
JOURNAL_SUFFIX = ".steps.jsonl"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(device: torch.device | None) -> dict[str, Any]:
    """The result set's environment block for the watched process."""
    cpu = _cpu_model()
    info: dict[str, Any] = {"type": "cpu", "name": cpu, "memory_bytes": 0}
    if device is not None and device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info = {"type": "cuda", "name": props.name, "memory_bytes": int(props.total_memory)}
    elif hasattr(os, "sysconf"):
        try:
            info["memory_bytes"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            pass
    return {
        "torch": torch.__version__.split("+")[0],
        "cuda": torch.version.cuda or "",
        "device": info,
        "cpu": {"model": cpu, "threads": torch.get_num_threads()},
        "host": socket.gethostname(),
    }


def watched_run(name: str, model: torch.nn.Module | None, device: torch.device | None,
                tally: Tally, steps: list[StepRecord], *, source: dict[str, Any],
                status: str, error: str | None) -> RunRecord:
    """A watched run's record (docs/RESULTS.md, "source"): its configuration as the script
    ran it (precision from autocast, the step counts, the device), where it came from, its
    steps and their summary. `source` holds what only the run knows: the script, the model's
    class and shape, autocast, tokens per step and the optimizer."""
    parameters = sum(p.numel() for p in model.parameters()) if model is not None else 0
    where = str(device) if device is not None else "cpu"
    # The run's step counts are every step recorded, not only those in `steps` (the recent
    # ones in memory): a reader checks each step's index against them.
    measured = tally.measured()
    precision = {"bfloat16": "bf16", "float16": "fp16"}.get(source.get("autocast") or "", "fp32")
    config: WatchedConfig = {"mode": "train", "precision": precision,
                              "warmup_steps": len(tally) - measured,
                              "measure_steps": measured, "device": where}
    described: Source = {"kind": "watched", "script": source["script"],
                         "model_class": source["model_class"],
                         "device": where, "autocast": source["autocast"],
                         "tokens_per_step": source["tokens_per_step"],
                         "optimizer": source["optimizer"],
                         "torch_compile": any(s.get("compiled") for s in steps),
                         "pid": os.getpid()}
    if "model" in source:
        described["model"] = source["model"]
    if "model_note" in source:
        described["model_note"] = source["model_note"]
    if "tokens_note" in source:
        described["tokens_note"] = source["tokens_note"]
    return {
        "id": name,
        "config": config,
        "source": described,
        "parameter_count": parameters,
        "status": status, "error": error, "failed_phase": None,
        "steps": steps,
        "summary": tally.summary(source["tokens_per_step"]),
    }


def device_offers(device: torch.device | None) -> list[dict[str, Any]]:
    """A welcome's device list (docs/REMOTE.md): the one the run trains on, refusing nothing
    (a watched script takes no runs at all)."""
    device = device or torch.device("cpu")
    cuda = device.type == "cuda"
    memory = int(torch.cuda.get_device_properties(device).total_memory) if cuda else 0
    return [{"name": str(device), "cuda": cuda, "memory_bytes": memory, "refusals": {}}]


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def tool() -> Tool:
    return {"name": "lmprof-python", "version": VERSION, "git": ""}


def result_set(runs: Iterable[RunRecord], env: dict[str, Any], created: str) -> ResultSet:
    return {
        "schema": SCHEMA,
        "created": created,
        "tool": tool(),
        "environment": env,
        "runs": list(runs),
    }


def write_atomically(path: Path, document: Mapping[str, Any]) -> None:
    """A temporary file beside `path`, fsynced, then renamed over it: a reader sees the old
    file or the new one, never half of one."""
    path = Path(path)
    why = _files.not_regular(path)
    if why is not None:  # os.replace would put the file in a device's or a link's place
        raise ValueError(f"save: {str(path)!r} {why}; lmprof writes only regular files")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=1, allow_nan=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_result(save: Path, document: Mapping[str, Any], journal: Journal | None) -> None:
    """The result set written to `save`, then its journal removed. Should the write fail (a
    full disk), the journal is kept and the ValueError names it."""
    try:
        write_atomically(save, document)
    except (OSError, ValueError) as exc:
        if journal is None:
            raise
        journal.close(remove=False)  # the steps are there: recover() reads them
        raise ValueError(f"save: the result set was not written ({exc}); every step is in "
                         f"{str(journal.path)!r}, which lmprof.recover() reads") from exc
    if journal is not None:
        journal.close(remove=True)


class Journal:
    """`<save>.steps.jsonl`: the run's header, then one line per finished step, then its end.
    Each line is written through to the operating system as it is made, so a script killed
    with SIGKILL leaves every step it finished (`lmprof.recover()` turns it into a result
    set). close() replaces it by the result set."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = _files.create_text(path, "save")  # never through a link, nor a FIFO

    def write(self, kind: str, body: dict[str, Any]) -> None:
        self._file.write(json.dumps({"kind": kind, **body}, allow_nan=False) + "\n")

    def close(self, *, remove: bool) -> None:
        self._file.close()
        if remove:
            try:
                os.unlink(self.path)
            except OSError:
                pass


def journal_path(save: Path) -> Path:
    return save.with_name(save.name + JOURNAL_SUFFIX)


def _step_problem(step: Any) -> str | None:
    """Why a journal's step cannot be a step of the run (None: it can)."""
    if not isinstance(step, dict):
        return "the step is not an object"
    index = step.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 2**31 - 1:
        return "the step has no index from 0 to 2^31-2"
    if not isinstance(step.get("warmup"), bool):
        return "the step's warmup is not true or false"
    for key in (*(f"{p}_ms" for p in PHASES), "total_ms"):
        value = step.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                0 <= value <= MAX_DURATION_MS):
            return f"the step's {key} is not a duration from 0 to 1e9 ms"
    peaks = step.get("peak_allocated_by_phase")
    if not isinstance(peaks, dict) or any(
            isinstance(peaks.get(p), bool) or not isinstance(peaks.get(p), int)
            for p in PEAK_PHASES):
        return "the step's peak_allocated_by_phase is not a byte count per phase"
    return None


def recover(journal: os.PathLike[str] | str) -> ResultSet:
    """The result set of a journal left by a script that was killed: the run with every step
    the journal holds (thinned past KEPT_STEPS as a live run's, its summary over all of them),
    ended `cancelled` unless the journal recorded its end. Every line that cannot be read (the
    one cut by the kill, bytes that are not UTF-8, a step without its index) is skipped and
    named in one RuntimeWarning; the journal must be a regular file with its header line.
    Memory stays bounded whatever the journal's length. Raises ValueError naming the
    journal."""
    header: dict[str, Any] | None = None
    tally = Tally()
    end: dict[str, Any] | None = None
    skipped = _Skipped()
    last_index = -1
    with _files.open_regular(journal, "recover") as f:
        for number, raw in enumerate(f, 1):
            try:
                entry = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError too
                why = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else "not JSON"
                skipped.add(f"line {number}: {why}")
                continue
            kind = entry.get("kind") if isinstance(entry, dict) else None
            if kind == "header":
                if entry.get("schema") != JOURNAL_SCHEMA:
                    raise ValueError(f"{journal}:{number}: schema is "
                                     f"{str(entry.get('schema'))[:80]!r}, expected "
                                     f"{JOURNAL_SCHEMA!r}")
                header = entry
            elif kind == "step":
                problem = _step_problem(entry.get("step"))
                if problem is None and entry["step"]["index"] <= last_index:
                    problem = "a step whose index came before"
                if problem is not None:
                    skipped.add(f"line {number}: {problem}")
                    continue
                last_index = entry["step"]["index"]
                if not tally.add(entry["step"]):
                    skipped.add(f"line {number}: past the {MAX_STEPS} steps a run records")
            elif kind == "scalars" and isinstance(entry.get("scalars"), dict):
                # log() after the step was journaled: its step is the last one, if kept
                step = tally.last_kept()
                if step is not None and step["index"] == entry.get("index"):
                    apply_scalars(step, entry["scalars"])
            elif kind == "end" and isinstance(entry.get("status"), str):
                end = entry
            else:
                skipped.add(f"line {number}: not a line of an lmprof watch journal")
    if header is None or not isinstance(header.get("run"), dict):
        raise ValueError(f"{journal}: no header line: not an lmprof watch journal")
    if skipped.count:
        warnings.warn(f"recover: {journal}: {skipped}", RuntimeWarning, stacklevel=2)
    run = cast(RunRecord, dict(header["run"]))
    run["steps"] = tally.kept()
    run["status"] = end["status"] if end else "cancelled"
    run["error"] = end.get("error") if end else "the watched process ended without closing its run"
    run["config"]["measure_steps"] = tally.measured()
    run["config"]["warmup_steps"] = len(tally) - tally.measured()
    run["summary"] = tally.summary(run["source"].get("tokens_per_step"))
    thinned = tally.thinning()
    if thinned is not None:
        run["thinned"] = thinned
    return result_set([run], header["environment"], header["created"])


class _Skipped:
    """The lines recover() could not read: every one counted, the first ten named."""

    def __init__(self) -> None:
        self.named: list[str] = []
        self.count = 0

    def add(self, line: str) -> None:
        self.count += 1
        if len(self.named) < 10:
            self.named.append(line)

    def __str__(self) -> str:
        more = self.count - len(self.named)
        return (f"{self.count} line(s) skipped: " + "; ".join(self.named)
                + (f"; and {more} more" if more else ""))


def apply_scalars(record: StepRecord, scalars: dict[str, Any]) -> None:
    """Scalars logged after the step was recorded, added to its record."""
    scalars = dict(scalars)
    if "loss" in scalars:
        record["loss"] = scalars.pop("loss")
    if scalars:
        record.setdefault("scalars", {}).update(scalars)
