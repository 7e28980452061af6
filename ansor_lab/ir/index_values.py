"""Integer index expressions evaluated over many points at once (numpy arrays).

One evaluator for every place that reads addresses point by point: the GPU access model
(lane by lane), the CPU prior (the distinct elements a register tile reads), the GPU
emulator's barrier check (a bound the same for every thread?) and TVMScript's check of
loop-carried dependences (which iterations touch an element).

``strict=False`` reads what it cannot evaluate as 0 (a data-dependent index: element 0)
and a zero divisor as 1: an estimate. ``strict=True`` raises ``UnknownIndex`` instead:
a proof must not rest on a guess.
"""

from __future__ import annotations

import numpy as np

from ..dsl import expr as E


class UnknownIndex(Exception):
    """An expression a strict evaluation cannot compute (a load, a float, a zero divisor)."""


def _trunc_div(a, b):
    return np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))


_DIVISIONS = {
    E.FloorDiv: np.floor_divide,
    E.FloorMod: np.mod,
    E.Div: _trunc_div,  # C semantics: toward zero
    E.Mod: np.fmod,  # the sign of the dividend
}
_BIN = {
    E.Add: np.add,
    E.Sub: np.subtract,
    E.Mul: np.multiply,
    E.Min: np.minimum,
    E.Max: np.maximum,
    E.LT: np.less,
    E.LE: np.less_equal,
    E.GT: np.greater,
    E.GE: np.greater_equal,
    E.EQ: np.equal,
    E.NE: np.not_equal,
    E.And: np.logical_and,
    E.Or: np.logical_or,
}
_UNBOUND = object()


def evaluate(e: E.PrimExpr, env: dict, *, strict: bool = False, missing=0):
    """``e`` over the points of ``env`` (Var -> array; arrays broadcast). A variable not
    in ``env`` takes ``missing``; ``missing=None`` makes it unknown (``UnknownIndex``)."""

    def unknown(what: str):
        if strict:
            raise UnknownIndex(what)
        return 0

    def ev(x: E.PrimExpr):
        if isinstance(x, E.IntImm):
            return np.int64(x.value)
        if isinstance(x, E.Var):
            value = env.get(x, _UNBOUND)
            if value is not _UNBOUND:
                return value
            if missing is None:
                raise UnknownIndex(f"variable {x.name} has no values")
            return np.int64(missing)
        if isinstance(x, E.FloatImm):
            if strict:
                raise UnknownIndex("a float")
            return np.int64(int(x.value))
        if isinstance(x, E.Cast):
            if x.dtype == "bool":
                return ev(x.value) != 0
            if x.dtype.startswith("float") and strict:
                raise UnknownIndex("a float")
            return ev(x.value)
        fn = _BIN.get(type(x))
        if fn is not None:
            return fn(np.asarray(ev(x.a)), np.asarray(ev(x.b)))
        div = _DIVISIONS.get(type(x))
        if div is not None:
            a, b = np.asarray(ev(x.a)), np.asarray(ev(x.b))
            if np.any(b == 0):
                if strict:
                    raise UnknownIndex("division by zero")
                b = np.where(b == 0, 1, b)
            return div(a, b)
        if isinstance(x, E.Not):
            return np.logical_not(ev(x.a))
        if isinstance(x, E.Select):
            return np.where(ev(x.condition), ev(x.true_value), ev(x.false_value))
        if isinstance(x, E.Call) and x.op == "if_then_else" and len(x.args) == 3:
            c, t, f = (ev(a) for a in x.args)
            return np.where(c, t, f)
        return unknown(type(x).__name__)

    return ev(e)
