"""Measurement inputs/results and the append-only JSON-lines records log.

One line per measured candidate: format version, workload key and structure key, target
(string and a digest of its CPU features), package and LLVM versions, the candidate's
trace, costs, error kind and message, timestamp — and the workload's DAG, so a record
replays in a plain script without the code that defined the workload. Lines are flushed
as each batch arrives, so a killed process loses nothing measured.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import llvmlite
import llvmlite.binding as llvm

from ..codegen.target import as_target, host_cpu
from ..errors import AnsorLabError, RecordError, ScheduleError
from ..schedule.trace import Trace

RECORD_VERSION = 1


class ErrorNo(enum.IntEnum):
    """Why a measurement failed (TVM's numbering)."""

    NO_ERROR = 0
    INSTANTIATION_ERROR = 1
    COMPILE_HOST = 2
    COMPILE_DEVICE = 3
    RUNTIME_DEVICE = 4
    WRONG_ANSWER = 5
    BUILD_TIMEOUT = 6
    RUN_TIMEOUT = 7
    UNKNOWN_ERROR = 8


def versions() -> dict:
    """Versions that decide whether a record is still valid."""

    from .. import __version__  # noqa: PLC0415 - the package imports this module

    try:
        llvm_version = ".".join(map(str, llvm.llvm_version_info))
    except Exception:  # noqa: BLE001 - old llvmlite
        llvm_version = "unknown"
    return {"ansor_lab": __version__, "llvmlite": llvmlite.__version__, "llvm": llvm_version}


def target_digest(target: Any) -> str:
    """A short digest of what the code depends on in a target (CPU name and features)."""

    feats = host_cpu()[1] if getattr(target, "kind", "llvm") == "llvm" else ""
    text = f"{target}|{feats}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class MeasureInput:
    """What to measure: a task and one candidate program (its trace)."""

    task: Any
    trace: dict  # Trace.as_json() of the full schedule (post-processing included)
    sketch: int | None = None
    decisions: tuple | None = None

    @property
    def workload_key(self) -> str:
        """The task's workload key."""
        return self.task.workload_key


@dataclass
class MeasureResult:
    """Costs in seconds (one per repeat) or an error, plus bookkeeping."""

    costs: list
    error_no: int = 0
    error_msg: str = ""
    all_cost: float = 0.0  # build + run wall time, seconds
    timestamp: float = field(default_factory=time.time)

    @property
    def mean_cost(self) -> float:
        """Mean of the costs (inf for an error)."""
        if self.error_no != 0 or not self.costs:
            return float("inf")
        return sum(self.costs) / len(self.costs)

    @property
    def error_kind(self) -> str:
        """The error's name (NO_ERROR when it succeeded)."""
        return ErrorNo(self.error_no).name


@dataclass
class RecordInput:
    """A MeasureInput read back from a log (no live task object)."""

    workload_key: str
    structure_key: str
    target: str
    target_digest: str
    versions: dict
    trace: dict
    dag: dict
    flop_ct: float
    sketch: int | None = None
    decisions: Any = None


def encode(inp: MeasureInput, res: MeasureResult) -> str:
    """One record as a JSON line."""
    task = inp.task
    rec = {
        "v": RECORD_VERSION,
        "workload_key": task.workload_key,
        "structure_key": task.structure_key,
        "target": str(task.target),
        "target_digest": target_digest(task.target),
        "versions": versions(),
        "flop_ct": task.compute_dag.flop_ct,
        "dag": task.dag_json,
        "sketch": inp.sketch,
        "decisions": inp.decisions,
        "trace": inp.trace,
        "costs": list(res.costs),
        "error_no": int(res.error_no),
        "error_msg": res.error_msg[:2000],
        "all_cost": res.all_cost,
        "timestamp": res.timestamp,
    }
    return json.dumps(rec, separators=(",", ":"))


def decode(line: str) -> tuple[RecordInput, MeasureResult]:
    """A record line back into (RecordInput, MeasureResult); raises ValueError if bad."""
    try:
        rec = json.loads(line)
    except RecursionError:
        raise RecordError("the line's JSON is nested too deeply") from None
    if not isinstance(rec, dict) or rec.get("v") != RECORD_VERSION:
        raise ValueError(f"not a version-{RECORD_VERSION} record")
    try:  # the trace's whole structure, so a malformed one is skipped here, not replayed
        Trace.from_json(rec["trace"])
    except ScheduleError as err:
        raise RecordError(f"field 'trace': {err}") from None
    inp = RecordInput(
        rec["workload_key"],
        rec["structure_key"],
        rec["target"],
        rec["target_digest"],
        rec["versions"],
        rec["trace"],
        rec["dag"],
        float(rec.get("flop_ct", 0.0)),
        rec.get("sketch"),
        rec.get("decisions"),
    )
    res = MeasureResult(
        list(rec["costs"]),
        int(rec["error_no"]),
        rec.get("error_msg", ""),
        float(rec.get("all_cost", 0.0)),
        float(rec.get("timestamp", 0.0)),
    )
    return inp, res


class RecordToFile:
    """A measure callback appending every measured candidate to a JSON-lines file."""

    def __init__(self, filename: str) -> None:
        self.filename = str(filename)

    def __call__(self, policy: Any, inputs: list, results: list) -> None:
        self.callback(policy, inputs, results)

    def callback(self, policy: Any, inputs: list, results: list) -> None:
        """Append one line per (input, result) and flush to disk."""
        directory = os.path.dirname(os.path.abspath(self.filename))
        os.makedirs(directory, exist_ok=True)
        with open(self.filename, "a") as f:
            for inp, res in zip(inputs, results):
                f.write(encode(inp, res) + "\n")
            f.flush()
            os.fsync(f.fileno())


def load_records(filename: str) -> Iterator[tuple[RecordInput, MeasureResult]]:
    """Every valid record of a log; corrupt or truncated lines are skipped with a warning."""
    if not os.path.exists(filename):
        return
    with open(filename) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield decode(line)
            except (ValueError, KeyError, TypeError) as err:
                warnings.warn(
                    f"{filename}:{lineno}: skipping a corrupt record ({err})", stacklevel=2
                )


def save_records(filename: str, inputs: list, results: list) -> None:
    """Append measured pairs to a log (what RecordToFile does)."""
    RecordToFile(filename).callback(None, inputs, results)


def merge_records(sources: list[str], dest: str) -> int:
    """Append the valid records of several logs into ``dest``; returns how many."""
    n = 0
    with open(dest, "a") as out:
        for src in sources:
            with open(src) as f:
                for line in f:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        decode(line)
                    except (ValueError, KeyError, TypeError):
                        continue
                    out.write(line + "\n")
                    n += 1
    return n


class RecordMismatch(AnsorLabError, LookupError):
    """No record applies to a task; the message says which part of the key differed."""


class RecordKeyError(AnsorLabError, TypeError):
    """A record lookup was given something that is neither a task nor a workload key."""


def best_records(filename: str) -> dict[str, tuple[RecordInput, MeasureResult]]:
    """The fastest valid record per workload key."""
    best: dict = {}
    for inp, res in load_records(filename):
        if res.error_no != 0:
            continue
        cur = best.get(inp.workload_key)
        if cur is None or res.mean_cost < cur[1].mean_cost:
            best[inp.workload_key] = (inp, res)
    return best


def load_best_record(
    filename: str, workload_key: Any = None, target: Any = None, include_compatible: bool = False
) -> tuple[RecordInput, MeasureResult]:
    """The fastest record that applies to a task, a workload key, or (given neither) any.

    ``workload_key`` is a SearchTask (our complete check) or, as in TVM, a task's
    ``workload_key`` string, optionally with ``target=``. A record applies when the workload
    (its structure, when a task is given), the target string, the target's CPU-feature
    digest and the ansor_lab / LLVM versions all match; otherwise RecordMismatch says what
    differed, rather than falling back to a record made for something else.
    ``include_compatible`` is accepted for TVM's signature; compatible records are not used.
    """
    task = workload_key if hasattr(workload_key, "structure_key") else None
    key = task.workload_key if task is not None else workload_key
    if key is not None and not isinstance(key, str):
        raise RecordKeyError(
            "load_best_record(filename, workload_key, target): workload_key is a SearchTask "
            f"or its workload_key string, not {type(key).__name__}"
        )
    if task is not None and target is None:
        target = task.target
    target = as_target(target) if target is not None else None
    want = {
        "structure": task.structure_key if task is not None else None,
        "target": str(target) if target is not None else None,
        "digest": target_digest(target) if target is not None else None,
        "versions": versions(),
    }
    best = None
    near: dict[str, int] = {}
    others: dict[str, int] = {}  # workload keys of the records that are for other workloads
    total = 0
    for inp, res in load_records(filename):
        total += 1
        if (
            key is not None
            and inp.workload_key != key
            and (want["structure"] is None or inp.structure_key != want["structure"])
        ):
            others[inp.workload_key] = others.get(inp.workload_key, 0) + 1
            continue
        reasons = []
        if want["structure"] is not None and inp.structure_key != want["structure"]:
            reasons.append("workload structure (same key, different computation)")
        if want["target"] is not None:  # no target given: records of any target apply
            if inp.target != want["target"]:
                reasons.append(f"target {inp.target!r} (task: {want['target']!r})")
            elif inp.target_digest != want["digest"]:
                reasons.append("CPU features of the target")
        for name in ("ansor_lab", "llvm"):
            if inp.versions.get(name) != want["versions"].get(name):
                reasons.append(
                    f"{name} version {inp.versions.get(name)} (now {want['versions'].get(name)})"
                )
        if reasons:
            for r in reasons:
                near[r] = near.get(r, 0) + 1
            continue
        if res.error_no != 0:
            near["only failed measurements"] = near.get("only failed measurements", 0) + 1
            continue
        if best is None or res.mean_cost < best[1].mean_cost:
            best = (inp, res)
    if best is None:
        if not total:
            raise RecordMismatch(f"{filename} holds no records (tune the task first)")
        if not near:
            # name what the log holds: a workload key shows its arguments (the shape)
            found = "; ".join(f"{k} ({v} records)" for k, v in list(others.items())[:3])
            more = f" and {len(others) - 3} more" if len(others) > 3 else ""
            raise RecordMismatch(
                f"{filename} has {total} records, none for workload {key}; "
                f"it holds records for: {found}{more}"
            )
        detail = "; ".join(f"{k} ({v} records)" for k, v in near.items())
        raise RecordMismatch(
            f"{filename} has records for workload {key}, but they differ in: "
            f"{detail}. Re-tune for this setting."
        )
    return best
