"""The records are what their types say (lmprof/_records.py): a real watched run, with every
instrument that writes a field, is held key by key and type by type to the TypedDicts, as
run.result_set() returns it, as `save` writes it and as recover() rebuilds it. A key written
but not declared, a declared key missing, or a value of another type fails, so the types
cannot drift from what the package writes."""

from __future__ import annotations

import json
import shutil
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest
import torch

import lmprof
from conftest import TinyGPT, batches, loss_of
from lmprof import _records, _results, _tally


def problems_of(value: Any, hint: Any, path: str = "$") -> list[str]:
    """Where `value` is not what `hint` (a TypedDict, a union, a list, a dict or a plain
    JSON type) declares."""
    if hint is Any:
        return []
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{path}: {type(value).__name__}, not a {hint.__name__}"]
        hints = get_type_hints(hint)
        found = [f"{path}.{key}: written but not declared in {hint.__name__}"
                 for key in value if key not in hints]
        found += [f"{path}.{key}: declared required in {hint.__name__} but missing"
                  for key in sorted(hint.__required_keys__) if key not in value]
        for key, item in value.items():
            if key in hints:
                found += problems_of(item, hints[key], f"{path}.{key}")
        return found
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [problems_of(value, arg, path) for arg in get_args(hint)]
        return [] if any(not o for o in options) else min(options, key=len)
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: {type(value).__name__}, not a list"]
        (item_hint,) = get_args(hint)
        return [p for i, item in enumerate(value) for p in problems_of(item, item_hint,
                                                                       f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: {type(value).__name__}, not a dict"]
        _, item_hint = get_args(hint)
        return [p for key, item in value.items() for p in problems_of(item, item_hint,
                                                                       f"{path}.{key}")]
    if hint is type(None):
        return [] if value is None else [f"{path}: {value!r}, not None"]
    if hint is float:  # JSON's numbers: an int is a float too, a bool is not
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, hint)
    return [] if ok else [f"{path}: {value!r} is not {getattr(hint, '__name__', hint)}"]


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """A run with the instruments that write fields: logged scalars, evaluations between
    steps and after the last, the memory timeline, module times, an op profile and a memory
    snapshot, thinned past KEPT_STEPS, one step logging values that are not finite; its
    result set while it ran and where it was saved, beside a copy of its journal as it was
    before close()."""
    save = tmp_path_factory.mktemp("records") / "run.json"
    kept = _tally.KEPT_STEPS
    _tally.KEPT_STEPS = 6
    try:
        torch.manual_seed(0)
        model = TinyGPT()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        run = lmprof.watch(model, opt, name="records", tokens_per_step=64, save=save,
                           memory_hz=50)
        run.time_modules(depth=1)
        run.profile_ops(step=3)
        run.memory_snapshot(step=4)
        during = None
        for i, (x, y) in enumerate(batches(16)):
            with run.step():
                loss = loss_of(model, x, y)
                loss.backward()
                opt.step()
                opt.zero_grad()
            if i == 8:  # a diverged step, kept by the thinning (every 4th): not finite values
                run.log(loss=float("nan"), lr=float("inf"), tokens_seen=float("-inf"))
            else:
                run.log(loss=loss, lr=1e-3, tokens_seen=(i + 1) * 64)
            if i == 10:
                during = run.result_set()
            if i in (5, 15):  # an evaluation between steps, and one after the last
                with torch.no_grad():
                    model(x)
        # The journal as a killed process would leave it, for recover().
        shutil.copy(_results.journal_path(save), save.with_name("killed.journal.jsonl"))
        run.close()
        assert during is not None
        return during, save
    finally:
        _tally.KEPT_STEPS = kept


def test_a_watched_runs_records_are_what_their_types_declare(
        watched: tuple[dict[str, Any], Path]) -> None:
    result, save = watched
    saved = json.loads(save.read_text())
    # The run used what it was meant to: the optional keys below are all checked.
    run = saved["runs"][0]
    assert {"thinned", "op_profile", "memory_snapshot", "module_times", "memory_columns",
            "final_evaluation_ms"} <= set(run)
    assert {"op_profile", "memory_snapshot", "sample_hz"} <= set(run["config"])
    assert any("evaluation_ms" in s for s in run["steps"])
    assert any("scalars" in s and "loss" in s for s in run["steps"])
    assert {"loss": "nan", "lr": "inf", "tokens_seen": "-inf"} in [
        {"loss": s.get("loss"), **s.get("scalars", {})} for s in run["steps"]]
    assert problems_of(saved, _records.ResultSet) == []
    assert result["runs"][0]["status"] == "ok" and len(result["runs"][0]["steps"]) == 11
    assert problems_of(result, _records.ResultSet) == []  # run.result_set(), while it ran


def test_recover_rebuilds_a_result_set_of_the_same_types(
        watched: tuple[dict[str, Any], Path]) -> None:
    _, save = watched
    recovered = lmprof.recover(save.with_name("killed.journal.jsonl"))
    assert recovered["runs"][0]["status"] == "cancelled"
    assert problems_of(recovered, _records.ResultSet) == []


def test_a_key_the_types_do_not_declare_fails(watched: tuple[dict[str, Any], Path]) -> None:
    result, _ = watched
    run = json.loads(json.dumps(result))["runs"][0]
    run["steps"][0]["stray"] = 1.0
    run["summary"]["total_ms"]["mean"] = "fast"
    del run["source"]["pid"]
    assert sorted(problems_of(run, _records.RunRecord)) == [
        "$.source.pid: declared required in Source but missing",
        "$.steps[0].stray: written but not declared in StepRecord",
        "$.summary.total_ms.mean: 'fast' is not float",
    ]
