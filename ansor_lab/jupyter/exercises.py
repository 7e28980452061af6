"""Checked exercises for the course notebooks.

An exercise cell leaves the student's answer as ``None`` (or a schedule with nothing done)
and ends with a checker call::

    check_schedule(answer, inputs=[a, b], expected=a @ b, baseline=naive, speedup=4)

The checker builds the answer, runs it on the inputs, compares every output with the numpy
reference and times it. It never raises on a wrong or missing answer: it returns an
``ExerciseResult`` that prints "correct ..." or "not yet: <why>", so a notebook with the
blank answer still runs top to bottom. Only misuse of the checker itself (no inputs, an
expected array of the wrong shape) is an error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import AnsorLabError
from .html import FONT, esc


class ExerciseError(AnsorLabError, ValueError):
    """The checker itself was called wrongly (not a wrong answer: that is "not yet")."""


@dataclass(frozen=True)
class ExerciseResult:
    """What the checker found: passed or not, why, the error and the time."""

    title: str
    passed: bool
    message: str
    seconds: float = math.nan
    max_error: float = math.nan

    def __str__(self) -> str:
        head = "correct" if self.passed else "not yet"
        return f"{self.title}: {head}: {self.message}"

    def __bool__(self) -> bool:
        return self.passed

    def _repr_html_(self) -> str:
        color, mark = ("#1a7f37", "&#10004;") if self.passed else ("#9a6700", "&#8230;")
        head = "correct" if self.passed else "not yet"
        return (
            f'<div style="{FONT};border-left:4px solid {color};padding:4px 10px">'
            f'<b style="color:{color}">{mark} {esc(self.title)}: {head}</b>: '
            f"{esc(self.message)}</div>"
        )

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def _not_yet(title: str, why: str, **numbers: float) -> ExerciseResult:
    return ExerciseResult(title, False, why, **numbers)


def _as_callable(answer: Any, args: Sequence | None, target: str) -> Any:
    """A built module for the answer: a tir.Schedule, a (te schedule, args) pair, a TE
    schedule with ``args``, a PrimFunc / IRModule, or an already built module."""
    from .. import build
    from ..schedule.te_schedule import Schedule as TESchedule
    from ..schedule.tir_schedule import Schedule as TIRSchedule

    if hasattr(answer, "time_evaluator") and callable(answer):
        return answer  # built already
    if isinstance(answer, tuple) and len(answer) == 2:
        answer, args = answer
    if isinstance(answer, TIRSchedule):
        return build(answer.mod, target=target)
    if isinstance(answer, TESchedule):
        if args is None:
            raise ExerciseError("a TE schedule needs its tensors: pass (s, [A, B, C]) or args=")
        return build(answer, list(args), target=target)
    return build(answer, target=target)


def check_schedule(
    answer: Any,
    inputs: Sequence[np.ndarray],
    expected: np.ndarray | Sequence[np.ndarray],
    *,
    args: Sequence | None = None,
    title: str = "exercise",
    faster_than: float | None = None,
    baseline: Any = None,
    speedup: float = 1.0,
    rtol: float = 1e-4,
    atol: float = 1e-4,
    number: int = 3,
    repeat: int = 3,
    target: str = "llvm",
) -> ExerciseResult:
    """Build ``answer``, run it on ``inputs``, compare with ``expected``, time it.

    ``answer`` is a ``tir.Schedule``, ``(te_schedule, [tensors])``, a PrimFunc/IRModule or a
    built module; ``None`` means "not answered yet". The outputs are allocated from the
    shapes and dtypes of ``expected`` (one array, or one per output, in argument order).
    With ``faster_than`` (seconds) the answer must also run in less time than that. With
    ``baseline`` (a program in any form ``answer`` takes) it must run ``speedup`` times as
    fast as the baseline, both timed by the checker in alternating rounds: a time taken
    earlier, on a machine that got busier or quieter since, cannot decide the check.
    The result prints "correct: ..." or "not yet: <why>"; it never raises on a wrong answer.
    """
    if not inputs:
        raise ExerciseError("check_schedule needs the input arrays (inputs=[a, b, ...])")
    if baseline is not None and faster_than is not None:
        raise ExerciseError("give faster_than= (seconds) or baseline= (a program), not both")
    if not speedup > 0:
        raise ExerciseError(f"speedup= must be a positive factor, got {speedup!r}")
    wants = [expected] if isinstance(expected, np.ndarray) else list(expected)
    if not wants or not all(isinstance(w, np.ndarray) for w in wants):
        raise ExerciseError("expected= must be a numpy array or a list of them (the reference)")
    if answer is None or answer is Ellipsis:
        return _not_yet(title, "no answer yet: replace the None in the answer cell")
    try:
        func = _as_callable(answer, args, target)
    except ExerciseError:
        raise
    except Exception as err:  # noqa: BLE001 - a wrong answer is feedback, not a crash
        return _not_yet(title, f"it does not build: {type(err).__name__}: {err}")
    outs = [np.zeros(w.shape, dtype=w.dtype) for w in wants]
    try:
        func(*inputs, *outs)
    except Exception as err:  # noqa: BLE001 - e.g. the wrong number of arguments
        return _not_yet(title, f"it does not run: {type(err).__name__}: {err}")
    err_max = 0.0
    for got, want in zip(outs, wants):
        diff = np.abs(got.astype("float64") - want.astype("float64"))
        err_max = max(err_max, float(diff.max(initial=0.0)))
        if not np.allclose(got, want, rtol=rtol, atol=atol):
            return _not_yet(title, f"wrong result: max abs error {err_max:.3g}", max_error=err_max)
    if baseline is not None:
        base = _built_baseline(baseline, inputs, outs, args, target)
        return _against_baseline(title, func, base, inputs, outs, speedup, err_max)
    seconds = float(func.time_evaluator(number=number, repeat=repeat)(*inputs, *outs).median)
    timing = f"{seconds * 1e3:.3f} ms"
    if faster_than is not None:
        if seconds >= faster_than:
            return _not_yet(
                title,
                f"right result, but {timing} is not faster than {faster_than * 1e3:.3f} ms",
                seconds=seconds,
                max_error=err_max,
            )
        timing += (
            f", {faster_than / seconds:.1f}x faster than the {faster_than * 1e3:.3f} ms to beat"
        )
    return ExerciseResult(
        title, True, f"matches numpy (max abs error {err_max:.2g}), {timing}", seconds, err_max
    )


#: rounds of the side-by-side timing (odd: the median is one round's ratio)
BASELINE_ROUNDS = 7
#: seconds each program runs per round, at least
ROUND_SECONDS = 0.02


def _runs_per_round(func: Any, inputs: Sequence, outs: list) -> int:
    once = float(func.time_evaluator(number=1, repeat=1)(*inputs, *outs).mean)
    return max(1, min(1000, int(ROUND_SECONDS / max(once, 1e-9))))


def _built_baseline(
    baseline: Any, inputs: Sequence, outs: list, args: Sequence | None, target: str
) -> Any:
    try:
        base = _as_callable(baseline, args, target)
        base(*inputs, *[np.zeros_like(o) for o in outs])
    except Exception as err:  # noqa: BLE001 - the exercise's own baseline is broken
        raise ExerciseError(f"the baseline does not build and run: {err}") from err
    return base


def _against_baseline(
    title: str,
    func: Any,
    base: Any,
    inputs: Sequence,
    outs: list,
    speedup: float,
    err_max: float,
) -> ExerciseResult:
    """Time the answer and the baseline in alternating rounds; the median of the per-round
    ratios decides (a round's two times are taken moments apart, under the same load)."""
    n_func = _runs_per_round(func, inputs, outs)
    n_base = _runs_per_round(base, inputs, outs)

    def timed(f: Any, number: int) -> float:
        return float(f.time_evaluator(number=number, repeat=1)(*inputs, *outs).mean)

    mine, theirs = [], []
    for r in range(BASELINE_ROUNDS):
        # who goes first alternates: a round's first run may find the caches or the CPU's
        # clock in another state than its second
        if r % 2 == 0:
            mine.append(timed(func, n_func))
            theirs.append(timed(base, n_base))
        else:
            theirs.append(timed(base, n_base))
            mine.append(timed(func, n_func))
    ratios = [t_base / t_mine for t_mine, t_base in zip(mine, theirs)]
    ratio = float(np.median(ratios))
    seconds, base_seconds = float(np.median(mine)), float(np.median(theirs))
    side = f"{seconds * 1e3:.3f} ms against the baseline's {base_seconds * 1e3:.3f} ms"
    if ratio < speedup:
        return _not_yet(
            title,
            f"right result, but {ratio:.2f}x the baseline's speed ({side}, timed side by "
            f"side); {speedup:g}x wanted",
            seconds=seconds,
            max_error=err_max,
        )
    return ExerciseResult(
        title,
        True,
        f"matches numpy (max abs error {err_max:.2g}), {ratio:.1f}x faster than the baseline "
        f"({side}; {speedup:g}x wanted)",
        seconds,
        err_max,
    )


def check_value(
    answer: Any, expected: Any, *, title: str = "exercise", rtol: float = 0.05
) -> ExerciseResult:
    """A numeric (or text) answer against the expected one; ``None`` is "not yet"."""
    if answer is None or answer is Ellipsis:
        return _not_yet(title, "no answer yet: replace the None in the answer cell")
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        try:
            value = float(answer)
        except (TypeError, ValueError):
            return _not_yet(title, f"expected a number, got {answer!r}")
        if math.isclose(value, float(expected), rel_tol=rtol):
            return ExerciseResult(title, True, f"{value:g} is right")
        return _not_yet(title, f"{value:g} is not it; look again")
    if answer == expected:
        return ExerciseResult(title, True, f"{answer!r} is right")
    return _not_yet(title, f"{answer!r} is not it; look again")
