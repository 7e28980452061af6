"""Integer intervals of index expressions, to leave out the checks that cannot fail.

``interval(e, ranges)`` bounds ``e`` from the ranges of its variables (loop variables with
constant bounds, thread and block indices); an access whose every index lies inside its
dimension for every value in those ranges needs no run-time bound check. Most accesses
of a lowered GPU program are of that kind, and leaving their checks out keeps check
mode's code small (it compiles and runs faster). Anything not understood is None: the
access keeps its check.
"""

from __future__ import annotations

from ...dsl import expr as E
from ...ir.bound_check import form_range
from ...ir.simplify import linear_form


def interval(e: E.PrimExpr, ranges: dict) -> tuple[int, int] | None:
    """(min, max) of integer expression ``e`` over ``ranges`` (Var -> (min, max))."""
    if isinstance(e, E.IntImm):
        return (e.value, e.value)
    if isinstance(e, E.Var):
        return ranges.get(e)
    if isinstance(e, E.Cast):
        return interval(e.value, ranges) if e.dtype.startswith("int") else None
    if isinstance(e, (E.Add, E.Sub, E.Mul, E.Min, E.Max)):
        a, b = interval(e.a, ranges), interval(e.b, ranges)
        if a is None or b is None:
            return None
        if isinstance(e, E.Add):
            return (a[0] + b[0], a[1] + b[1])
        if isinstance(e, E.Sub):
            return (a[0] - b[1], a[1] - b[0])
        if isinstance(e, E.Min):
            return (min(a[0], b[0]), min(a[1], b[1]))
        if isinstance(e, E.Max):
            return (max(a[0], b[0]), max(a[1], b[1]))
        corners = [x * y for x in a for y in b]
        return (min(corners), max(corners))
    if isinstance(e, (E.FloorDiv, E.FloorMod)):
        a = interval(e.a, ranges)
        if a is None or not isinstance(e.b, E.IntImm) or e.b.value <= 0:
            return None
        c = e.b.value
        if isinstance(e, E.FloorDiv):
            return (a[0] // c, a[1] // c)
        if a[0] // c == a[1] // c:
            return (a[0] % c, a[1] % c)
        return (0, c - 1)
    if isinstance(e, E.Select):
        a, b = interval(e.true_value, ranges), interval(e.false_value, ranges)
        if a is None or b is None:
            return None
        return (min(a[0], b[0]), max(a[1], b[1]))
    return None


def in_bounds(indices: tuple, shape: tuple, ranges: dict) -> bool:
    """True when every index provably lies inside its dimension (the exact range of a
    linear index, as the build's bound check computes it, else its interval)."""
    for ix, extent in zip(indices, shape):
        span = form_range(linear_form(ix), ranges) or interval(ix, ranges)
        if span is None or span[0] < 0 or span[1] >= extent:
            return False
    return True
