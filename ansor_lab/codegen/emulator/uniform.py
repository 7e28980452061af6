"""Is a value the same for every thread of a block? (The bound or condition around a
barrier must be.)

``static_values`` evaluates an expression of the thread indices and constants for every
thread of the block at once (numpy), so a divergent barrier of that kind is found before
anything runs; anything else (loads, block-dependent values) is checked at run time.
"""

from __future__ import annotations

import numpy as np

from ...dsl import expr as E
from ...ir import nodes as N

_BINARY = {
    E.Add: np.add,
    E.Sub: np.subtract,
    E.Mul: np.multiply,
    E.Min: np.minimum,
    E.Max: np.maximum,
    E.EQ: np.equal,
    E.NE: np.not_equal,
    E.LT: np.less,
    E.LE: np.less_equal,
    E.GT: np.greater,
    E.GE: np.greater_equal,
    E.And: np.logical_and,
    E.Or: np.logical_or,
}


class _Unknown(Exception):
    pass


def static_values(e: E.PrimExpr, values: dict) -> np.ndarray | None:
    """``e`` for every thread (``values``: Var -> array over the threads), or None when
    it is not an integer expression of those variables and constants alone."""
    try:
        return np.broadcast_to(_eval(e, values), next(iter(values.values())).shape)
    except _Unknown:
        return None


def _eval(e: E.PrimExpr, values: dict):
    if isinstance(e, E.Var):
        if e not in values:
            raise _Unknown
        return values[e]
    if isinstance(e, E.IntImm):
        return np.int64(e.value)
    if isinstance(e, E.Not):
        return np.logical_not(_eval(e.a, values))
    fn = _BINARY.get(type(e))
    if fn is not None:
        return fn(_eval(e.a, values), _eval(e.b, values))
    if isinstance(e, (E.FloorDiv, E.FloorMod)):
        a, b = _eval(e.a, values), _eval(e.b, values)
        if np.any(b == 0):
            raise _Unknown
        return a // b if isinstance(e, E.FloorDiv) else a % b
    if isinstance(e, E.Select):
        return np.where(
            _eval(e.condition, values), _eval(e.true_value, values), _eval(e.false_value, values)
        )
    raise _Unknown


def thread_dependent(e: E.PrimExpr, thread_vars: tuple) -> bool:
    """True unless ``e`` is provably the same for every thread: it reads no memory and
    uses no thread index."""
    for node in E.post_order(e):
        if isinstance(node, E.Var) and any(node is v for v in thread_vars):
            return True
        if isinstance(node, N.BufferLoad):
            return True
    return False
