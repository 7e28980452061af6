"""How a record's time was obtained, and the rule that kinds are never mixed for one task.

A cost is *measured* (a kernel timed on the hardware of the record's target) or
*estimated* (``EmulatedRunner``: the candidate was checked on the GPU emulator and timed
by the analytic GPU model, ``search.gpu_model``). The two are not comparable — an estimate
can be off by a constant factor, or by more for some kernels — so the best of a mixed set
means nothing, and a cost model trained on both learns the difference between them rather
than between programs. ``apply_best``, resume (``PreloadMeasuredStates``,
``update_from_file``) and the cost model therefore refuse records of one task that mix the
kinds (MixedTimingError), naming how to keep one kind (``filter_records``).

On disk a record carries ``"timing": "estimated"``; a record without the field (every log
written before estimates existed) was measured.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import MixedTimingError

MEASURED = "measured"
ESTIMATED = "estimated"
TIMINGS = (MEASURED, ESTIMATED)


def timing_of(res: Any) -> str:
    """ "estimated" or "measured" for a MeasureResult."""
    return ESTIMATED if getattr(res, "estimated", False) else MEASURED


def estimated_note(seconds: float) -> str:
    """One line saying a best time is an estimate (print_best, the widget, the CLI)."""
    return (
        f"estimated {seconds * 1e3:.4f} ms: the analytic GPU model's time of a kernel "
        "checked on the GPU emulator (EmulatedRunner), not measured on a GPU"
    )


def mix_message(workload: str, counts: dict, where: str, who: str) -> str:
    """The MixedTimingError text: which task, how many of each kind, how to keep one."""
    return (
        f"{who}: {where} holds {counts.get(MEASURED, 0)} measured and "
        f"{counts.get(ESTIMATED, 0)} estimated (emulated GPU) records for workload {workload}; "
        "their costs are not comparable. Keep one kind: "
        "auto_scheduler.filter_records(log, new_log, estimated=False) keeps the measured "
        "ones (estimated=True the estimated ones), then use the new log."
    )


def check_one_timing(pairs: Iterable[tuple[Any, Any]], where: str, who: str) -> None:
    """Raise MixedTimingError if the successful records of one workload mix timings."""
    kinds: dict[str, dict[str, int]] = {}
    for inp, res in pairs:
        if res.error_no != 0:  # a failure has no cost to compare
            continue
        counts = kinds.setdefault(inp.workload_key, {})
        t = timing_of(res)
        counts[t] = counts.get(t, 0) + 1
    for workload, counts in kinds.items():
        if len(counts) > 1:
            raise MixedTimingError(mix_message(workload, counts, where, who))


class TimingGuard:
    """Remembers the timing kind learnt per group (task) and refuses a second kind.

    The cost model and the search policy hold one: a model trained on estimates must not
    be fed measurements of the same task (and the reverse).
    """

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}

    def note(self, group: str, estimated: bool, where: str, who: str) -> None:
        """Record that ``group`` learns from ``estimated`` costs; raise on a mix."""
        kind = ESTIMATED if estimated else MEASURED
        have = self.kinds.setdefault(group, kind)
        if have != kind:
            counts = {have: 1, kind: 1}
            raise MixedTimingError(
                mix_message(group, counts, where, who).replace(
                    "holds 1 measured and 1 estimated", "would mix measured and estimated"
                )
            )
