"""Integer index expressions evaluated over many points at once (numpy arrays).

The GPU access model reads a kernel's addresses lane by lane with it; the CPU prior counts
the distinct elements a register tile reads (an index through a division or a modulo).
"""

from __future__ import annotations

import numpy as np

from ..dsl import expr as E

_BIN = {
    E.Add: np.add,
    E.Sub: np.subtract,
    E.Mul: np.multiply,
    E.FloorDiv: lambda a, b: np.floor_divide(a, np.where(b == 0, 1, b)),
    E.FloorMod: lambda a, b: np.mod(a, np.where(b == 0, 1, b)),
    E.Div: lambda a, b: np.floor_divide(a, np.where(b == 0, 1, b)),
    E.Mod: lambda a, b: np.fmod(a, np.where(b == 0, 1, b)),
    E.Min: np.minimum,
    E.Max: np.maximum,
    E.LT: np.less,
    E.LE: np.less_equal,
    E.GT: np.greater,
    E.GE: np.greater_equal,
    E.EQ: np.equal,
    E.NE: np.not_equal,
}


def evaluate(e: E.PrimExpr, env: dict) -> np.ndarray | int:
    """An integer expression over lanes: variables in ``env`` (arrays), others 0."""
    if isinstance(e, E.IntImm):
        return int(e.value)
    if isinstance(e, E.FloatImm):
        return int(e.value)
    if isinstance(e, E.Var):
        return env.get(e, 0)
    if isinstance(e, E.Cast):
        return evaluate(e.value, env)
    fn = _BIN.get(type(e))
    if fn is not None:
        return fn(np.asarray(evaluate(e.a, env)), np.asarray(evaluate(e.b, env)))
    if isinstance(e, E.And):
        return np.logical_and(evaluate(e.a, env), evaluate(e.b, env))
    if isinstance(e, E.Or):
        return np.logical_or(evaluate(e.a, env), evaluate(e.b, env))
    if isinstance(e, E.Not):
        return np.logical_not(evaluate(e.a, env))
    if isinstance(e, E.Select):
        return np.where(
            evaluate(e.condition, env),
            evaluate(e.true_value, env),
            evaluate(e.false_value, env),
        )
    if isinstance(e, E.Call) and e.op == "if_then_else" and len(e.args) == 3:
        c, t, f = (evaluate(a, env) for a in e.args)
        return np.where(c, t, f)
    return 0  # a data-dependent index (an indirect load): read as element 0
