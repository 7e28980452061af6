"""The checks ``task.tune`` makes before any search work (measure.preflight, plus logs).

A search whose first measurement would fail for the same reason every time, or whose log
would end up mixing estimated and measured costs of one task, is refused at the start,
with a message saying what to change — not after the sketches are generated and the first
batch is built.
"""

from __future__ import annotations

from typing import Any

from ..errors import MixedTimingError
from ..measure.preflight import check_runner
from ..measure.records import load_records
from ..measure.timing import ESTIMATED, MEASURED, mix_message, timing_of


def preflight(task: Any, runner: Any, options: Any, policy: Any) -> None:
    """Refuse a runner that cannot time ``task``, and a timing kind other than the one
    the task's log (RecordToFile) or the policy's cost model already holds."""
    check_runner(task, runner)
    kind = ESTIMATED if getattr(runner, "timing", MEASURED) == ESTIMATED else MEASURED
    for cb in options.measure_callbacks or []:
        filename = getattr(cb, "filename", None)
        if not filename:
            continue
        counts: dict[str, int] = {}
        for inp, res in load_records(filename):
            same = inp.workload_key == task.workload_key and inp.target == str(task.target)
            if same and res.error_no == 0:
                counts[timing_of(res)] = counts.get(timing_of(res), 0) + 1
        if counts and kind not in counts:
            counts[kind] = 0
            raise MixedTimingError(
                mix_message(task.workload_key, counts, filename, "task.tune").replace(
                    "; their costs", f", and this search would add {kind} ones; their costs"
                )
            )
    model = getattr(policy, "model", None)
    guard = getattr(model, "__dict__", {}).get("_timings")
    have = guard.kinds.get(task.workload_key) if guard is not None else None
    if have is not None and have != kind:
        raise MixedTimingError(
            f"task.tune: the search policy's cost model learnt {have} costs of workload "
            f"{task.workload_key} and this runner gives {kind} ones; they are not "
            "comparable. Use a runner of the same kind, or a fresh cost model."
        )
