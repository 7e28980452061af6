"""Measurement inputs/results and the append-only JSON-lines records log.

One line per measured candidate: format version, workload key and structure key, target
(string and a digest of its CPU features), package and LLVM versions, the candidate's
trace, costs, error kind and message, timestamp — and the workload's DAG, so a record
replays in a plain script without the code that defined the workload. Each record is
appended (one locked write) as its measurement finishes, so a killed tuner loses nothing
measured, and concurrent tuners never interleave lines. Every reader skips a bad line with a
warning naming it; one bad line never makes a log unusable.

Costs keep TVM's meaning, seconds per run of the kernel. ``LocalRunner`` times a program
built for one CPU thread on its runner thread's CPU clock (``LocalRunner(clock="auto")``,
the default): its costs are the seconds the kernel runs while it has the core, which on a
loaded machine are less than the wall time; the record's format is the same either way.
"""

from __future__ import annotations

import enum
import functools
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
from ..errors import AnsorLabError, LogFileError, RecordError, RecordWarning, ScheduleError
from ..schedule.trace import Trace
from .record_check import MAX_LINE_BYTES, check_record, parse_line
from .timing import ESTIMATED, check_one_timing

try:
    import fcntl
except ImportError:  # not POSIX: appends are single writes, without the lock
    fcntl = None

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
    return _digest(str(target), getattr(target, "kind", "llvm"))


@functools.lru_cache(maxsize=64)
def _digest(text: str, kind: str) -> str:
    feats = host_cpu()[1] if kind == "llvm" else ""
    return hashlib.sha256(f"{text}|{feats}".encode()).hexdigest()[:16]


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
    machine: dict | None = None  # where it was measured (hardware.machine_info), if known
    # True: the cost is the analytic GPU model's estimate of a candidate checked on the GPU
    # emulator (EmulatedRunner), not a time measured on hardware (measure/timing.py)
    estimated: bool = False

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
    if res.machine:  # optional: older records have none
        rec["machine"] = res.machine
    if res.estimated:  # optional: a record without it was measured (older logs included)
        rec["timing"] = ESTIMATED
    return json.dumps(rec, separators=(",", ":"))


#: (accepts(record) -> bool, decode(record) -> (RecordInput, MeasureResult)) for logs of
#: other tools, registered by the layers that can replay them (search/tvm_log.py)
FOREIGN_DECODERS: list = []


def is_imported(inp: RecordInput) -> bool:
    """True for a record read from another tool's log (its costs were measured elsewhere)."""
    return "imported" in inp.versions


def decode(line: str) -> tuple[RecordInput, MeasureResult]:
    """A record line back into (RecordInput, MeasureResult).

    Raises RecordError naming what is wrong: not JSON, not a version-1 record object, or a
    value no measurement can produce (record_check.py).
    """
    rec = parse_line(line)
    if not isinstance(rec, dict):
        raise RecordError(f"a JSON {type(rec).__name__}, not a record object")
    for accepts, foreign in FOREIGN_DECODERS:  # other tools' logs (search/tvm_log.py)
        if accepts(rec):
            return foreign(rec)
    if rec.get("v") != RECORD_VERSION:
        raise RecordError(f"not a version-{RECORD_VERSION} record (v={rec.get('v')!r})")
    check_record(rec)
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
        rec["machine"] if isinstance(rec.get("machine"), dict) else None,
        rec.get("timing") == ESTIMATED,
    )
    return inp, res


def _warn_skip(filename: str, lineno: int, why: Any) -> None:
    warnings.warn(f"{filename}:{lineno}: skipping a corrupt record ({why})", RecordWarning, 3)


def _raw_lines(filename: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-empty line; a line that is not UTF-8 text or is
    longer than any record is skipped with a warning."""
    with open(filename, "rb") as f:
        lineno = 0
        while True:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            lineno += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # drop the rest of the line
                    raw = f.readline(1 << 20)
                _warn_skip(filename, lineno, f"a line over {MAX_LINE_BYTES >> 20} MiB")
                continue
            raw = raw.strip()
            if not raw:
                continue
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as err:
                _warn_skip(filename, lineno, f"not UTF-8 text: byte {err.start} is invalid")


def _records_with_lines(filename: str) -> Iterator[tuple[int, str, RecordInput, MeasureResult]]:
    for lineno, line in _raw_lines(filename):
        try:
            inp, res = decode(line)
        except RecordError as err:
            _warn_skip(filename, lineno, err)
            continue
        yield lineno, line, inp, res


def load_records(filename: str) -> Iterator[tuple[RecordInput, MeasureResult]]:
    """Every valid record of a log; a corrupt, truncated or implausible line is skipped
    with a RecordWarning naming the file and the line."""
    filename = str(filename)
    if not os.path.exists(filename):
        return
    if os.path.isdir(filename):
        raise LogFileError(f"{filename!r} is a directory; give a records log file (JSON lines)")
    for _, _, inp, res in _records_with_lines(filename):
        yield inp, res


def append_lines(filename: str, lines: list[str], sync: bool = False) -> None:
    """Append whole lines to a log, safe against a torn last line and other writers.

    One ``os.write`` of all the lines on an O_APPEND descriptor under an exclusive
    ``flock``: two tuners appending to one log never interleave a line, and if the file
    ends in a line torn by a kill, a newline goes first so the new record stays whole.
    """
    if os.path.isdir(filename):
        raise LogFileError(f"the records log {filename!r} is a directory; give a file name")
    if not lines:
        return
    data = "".join(line + "\n" for line in lines).encode()
    directory = os.path.dirname(os.path.abspath(filename))
    os.makedirs(directory, exist_ok=True)
    fd = os.open(filename, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)  # releases the lock


class RecordToFile:
    """A measure callback appending every measured candidate to a JSON-lines file.

    The measurer calls ``on_result`` as each measurement finishes, so each record is in the
    file (one locked append) before the next candidate runs: a tuner killed mid-batch loses
    no completed measurement. Called with a batch (TVM's callback form) it appends the batch.
    """

    def __init__(self, filename: str, sync: bool = False) -> None:
        self.filename = str(filename)
        self.sync = sync  # fsync each append (~5 ms; else once per batch, in flush)

    def __call__(self, policy: Any, inputs: list, results: list) -> None:
        self.callback(policy, inputs, results)

    def callback(self, policy: Any, inputs: list, results: list) -> None:
        """Append one line per (input, result)."""
        append_lines(self.filename, [encode(i, r) for i, r in zip(inputs, results)], self.sync)

    def on_result(self, policy: Any, inp: MeasureInput, res: MeasureResult) -> None:
        """Append one measured candidate now."""
        append_lines(self.filename, [encode(inp, res)], self.sync)

    def flush(self) -> None:
        """fsync the log (the measurer calls it after each batch: ~5 ms per batch, where
        each record's own append is ~10 us and already survives a kill of the tuner)."""
        try:
            fd = os.open(self.filename, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def filter_records(filename: str, dest: str, estimated: bool) -> int:
    """Append to ``dest`` the records of ``filename`` whose costs were estimated
    (``estimated=True``: EmulatedRunner) or measured (False); returns how many.

    The way out of a MixedTimingError: one log per kind of cost. Failed records are kept
    with either kind (they hold no cost). Bad lines are skipped with a warning.
    """
    lines = [
        line
        for _, line, _, res in _records_with_lines(str(filename))
        if res.error_no != 0 or res.estimated == bool(estimated)
    ]
    append_lines(str(dest), lines)
    return len(lines)


def save_records(filename: str, inputs: list, results: list) -> None:
    """Append measured pairs to a log (what RecordToFile does)."""
    RecordToFile(filename).callback(None, inputs, results)


def merge_records(sources: list[str], dest: str) -> int:
    """Append the valid records of several logs into ``dest``; returns how many.

    Bad lines are skipped with a warning naming their file and line, as every reader does.
    """
    lines = []
    for src in sources:
        if not os.path.isfile(src):
            raise LogFileError(
                f"merge_records: {src!r} is "
                + ("a directory" if os.path.isdir(src) else "not there")
                + "; give the paths of existing records logs"
            )
        lines.extend(line for _, line, _, _ in _records_with_lines(str(src)))
    append_lines(str(dest), lines)
    return len(lines)


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


@dataclass(frozen=True)
class RecordKey:
    """What a record must match to apply: workload structure, target, CPU features, and
    the ansor_lab and LLVM versions. The one check behind apply_best, resume and
    update_from_file; ``mismatch`` names each part that differs."""

    structure: str | None
    target: str | None
    digest: str | None
    versions: dict

    @classmethod
    def of(cls, task: Any = None, target: Any = None) -> RecordKey:
        """The key of a task (target: the task's, unless given); None parts match anything."""
        if task is not None and target is None:
            target = task.target
        target = as_target(target) if target is not None else None
        return cls(
            task.structure_key if task is not None else None,
            str(target) if target is not None else None,
            target_digest(target) if target is not None else None,
            versions(),
        )

    def mismatch(self, inp: RecordInput, imported_ok: bool = False) -> list[str]:
        """The parts of the key in which a record differs (empty: it applies).

        A record imported from another tool's log (``is_imported``) applies only with
        ``imported_ok`` (choosing a program), and then whatever machine measured it.
        """
        if is_imported(inp):
            if not imported_ok:
                return [f"imported from {inp.versions['imported']} (measured elsewhere)"]
            same = self.structure is None or inp.structure_key == self.structure
            return [] if same else ["workload structure (same key, different computation)"]
        reasons = []
        if self.structure is not None and inp.structure_key != self.structure:
            reasons.append("workload structure (same key, different computation)")
        if self.target is not None:  # no target given: records of any target apply
            if inp.target != self.target:
                reasons.append(f"target {inp.target!r} (task: {self.target!r})")
            elif inp.target_digest != self.digest:
                reasons.append("CPU features of the target")
        for name in ("ansor_lab", "llvm"):
            if inp.versions.get(name) != self.versions.get(name):
                reasons.append(
                    f"{name} version {inp.versions.get(name)} (now {self.versions.get(name)})"
                )
        return reasons


def _count_reasons(near: dict[str, int]) -> str:
    return "; ".join(f"{k} ({v} records)" for k, v in near.items())


def task_records(
    filename: str, task: Any = None, who: str = "resume"
) -> Iterator[tuple[RecordInput, MeasureResult]]:
    """The records of a log that apply to ``task`` (all tasks when None), under the whole key.

    A record of the task's workload that differs in structure, target, CPU features or
    versions is left out, and one RecordWarning says how many and in what (records of
    other workloads are simply not this task's). Without a task a record must match its own
    target on this machine and today's versions: costs measured elsewhere are not learnt.
    """
    near: dict[str, int] = {}
    keys: dict[str, RecordKey] = {}
    want = RecordKey.of(task) if task is not None else None
    kept = []
    for inp, res in load_records(filename):
        if task is not None:
            if inp.workload_key != task.workload_key:
                continue
            key = want
        else:
            key = keys.get(inp.target)
            if key is None:
                try:
                    key = keys[inp.target] = RecordKey.of(target=inp.target)
                except AnsorLabError as err:
                    key = keys[inp.target] = RecordKey(None, f"unreadable here: {err}", "", {})
        reasons = key.mismatch(inp)
        if reasons:
            for r in reasons:
                near[r] = near.get(r, 0) + 1
            continue
        kept.append((inp, res))
    # estimated and measured costs of one task are not comparable: refuse before any is used
    check_one_timing(kept, filename, who)
    yield from kept
    if near:
        which = f"workload {task.workload_key}" if task is not None else "its log"
        warnings.warn(
            f"{who}: records of {which} in {filename} were not used; they differ in: "
            f"{_count_reasons(near)}. Their costs do not hold here: tune again for this "
            "setting, or use a log made with it.",
            RecordWarning,
            2,
        )


def load_best_record(
    filename: str, workload_key: Any = None, target: Any = None, include_compatible: bool = False
) -> tuple[RecordInput, MeasureResult]:
    """The fastest record that applies to a task, a workload key, or (given neither) any.

    ``workload_key`` is a SearchTask (our complete check) or, as in TVM, a task's
    ``workload_key`` string, optionally with ``target=``. A record applies when the workload
    (its structure, when a task is given), the target string, the target's CPU-feature
    digest and the ansor_lab / LLVM versions all match (RecordKey); otherwise
    RecordMismatch says what differed, rather than falling back to a record made for
    something else. ``include_compatible`` is accepted for TVM's signature; compatible
    records are not used.
    """
    task = workload_key if hasattr(workload_key, "structure_key") else None
    key = task.workload_key if task is not None else workload_key
    if key is not None and not isinstance(key, str):
        raise RecordKeyError(
            "load_best_record(filename, workload_key, target): workload_key is a SearchTask "
            f"or its workload_key string, not {type(key).__name__}"
        )
    want = RecordKey.of(task, target)
    best = None
    near: dict[str, int] = {}
    others: dict[str, int] = {}  # workload keys of the records that are for other workloads
    total = 0
    applying = []  # the successful records that apply, checked for a timing mix
    for inp, res in load_records(filename):
        total += 1
        if (
            key is not None
            and inp.workload_key != key
            and (want.structure is None or inp.structure_key != want.structure)
        ):
            others[inp.workload_key] = others.get(inp.workload_key, 0) + 1
            continue
        reasons = want.mismatch(inp, imported_ok=True)
        if reasons:
            for r in reasons:
                near[r] = near.get(r, 0) + 1
            continue
        if res.error_no != 0:
            near["only failed measurements"] = near.get("only failed measurements", 0) + 1
            continue
        applying.append((inp, res))
        if best is None or res.mean_cost < best[1].mean_cost:
            best = (inp, res)
    check_one_timing(applying, filename, "apply_best")
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
        raise RecordMismatch(
            f"{filename} has records for workload {key}, but they differ in: "
            f"{_count_reasons(near)}. Re-tune for this setting."
        )
    return best
