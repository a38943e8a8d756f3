"""The records a watched run writes, as types: a step, a phase's statistics, a run's summary
and record, and a result set (docs/RESULTS.md). They state in Python's typing the keys the
engine's field lists declare (engine/src/results/result_json.cpp) for what this package
writes. tests/test_records.py holds a real run's records to them, key by key and type by
type, and tests/app/record_contract_check.py holds those keys to the engine's.

They are dicts at run time. Code that annotated the package's records as ``dict[str, Any]``
reads them as ``Mapping[str, Any]``, which every TypedDict is."""

from __future__ import annotations

from typing import Any, TypedDict


class PeakBytes(TypedDict):
    """The largest allocation of each phase, in bytes."""

    forward: int
    backward: int
    optimizer: int


class PhaseStats(TypedDict):
    """One phase's times (ms) over the measured steps, by the engine's definitions
    (docs/MEASUREMENT.md): `cv` is std / mean, `noisy` the noise rule."""

    n: int
    mean: float
    std: float
    median: float
    min: float
    max: float
    p95: float
    cv: float
    iqr: float
    noisy: bool


class _StepKeys(TypedDict):
    index: int
    warmup: bool
    data_ms: float
    forward_ms: float
    backward_ms: float
    optimizer_ms: float
    rest_ms: float
    total_ms: float
    peak_allocated_bytes: int
    peak_reserved_bytes: int
    peak_allocated_by_phase: PeakBytes
    t_end_ms: float
    micro_batches: int


class StepRecord(_StepKeys, total=False):
    """One step ("steps"); the keys declared here are there only where they apply."""

    compiled: bool  # a torch.compile step: not measured
    op_profiled: bool
    memory_snapshot: bool
    # run.log(loss=...), and the other names logged. JSON has no NaN or infinity: a value
    # that is not finite is written as its name, "nan", "inf" or "-inf".
    loss: float | str
    scalars: dict[str, float | str]
    evaluation_ms: float  # an evaluation pass before the step
    evaluation_forwards: int


class RunSummary(TypedDict):
    """Statistics over a run's measured steps ("summary")."""

    data_ms: PhaseStats
    forward_ms: PhaseStats
    backward_ms: PhaseStats
    optimizer_ms: PhaseStats
    rest_ms: PhaseStats
    total_ms: PhaseStats
    tokens_per_s: float  # 0 without tokens per step
    tflops: float
    mfu: float | None
    peak_bytes: PeakBytes


class _ConfigKeys(TypedDict):
    mode: str
    precision: str
    warmup_steps: int
    measure_steps: int
    device: str


class WatchedConfig(_ConfigKeys, total=False):
    """A watched run's configuration as the script ran it ("config")."""

    op_profile: dict[str, Any]  # the profiled steps, and the trace's path
    memory_snapshot: dict[str, Any]
    sample_hz: float


class _SourceKeys(TypedDict):
    kind: str  # "watched"
    script: str
    model_class: str | None
    device: str
    autocast: str | None
    tokens_per_step: int | None
    optimizer: str | None
    torch_compile: bool
    pid: int


class Source(_SourceKeys, total=False):
    """Where a watched run came from ("source")."""

    model: dict[str, Any]  # the model's shape, found or stated
    model_note: str
    tokens_note: str


class Thinning(TypedDict):
    """How a long run's steps were thinned ("thinned", docs/WATCH.md "Long runs")."""

    every: int
    recorded_steps: int


class _RunKeys(TypedDict):
    id: str
    config: WatchedConfig
    source: Source
    parameter_count: int
    status: str  # "ok", "error", "cancelled"
    error: str | None
    failed_phase: str | None
    steps: list[StepRecord]
    summary: RunSummary


class RunRecord(_RunKeys, total=False):
    """A watched run ("runs[]"); the keys declared here come with the instruments that
    write them."""

    thinned: Thinning
    op_profile: dict[str, Any]
    memory_snapshot: dict[str, Any] | None  # None: the run ended inside the snapshot
    module_times: dict[str, Any]
    memory_columns: dict[str, list[Any]]
    sampler_cpu_ms: float
    sampler_error: str
    final_evaluation_ms: float  # an evaluation pass after the last step
    final_evaluation_forwards: int


class Tool(TypedDict):
    """The program that wrote a result set."""

    name: str
    version: str
    git: str


class ResultSet(TypedDict):
    """A result set: the document `save` writes and recover() returns."""

    schema: str
    created: str
    tool: Tool
    environment: dict[str, Any]
    runs: list[RunRecord]
