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
from ...ir.index_values import UnknownIndex, evaluate


def static_values(e: E.PrimExpr, values: dict) -> np.ndarray | None:
    """``e`` for every thread (``values``: Var -> array over the threads), or None when
    it is not an integer expression of those variables and constants alone."""
    try:
        value = evaluate(e, values, strict=True, missing=None)
    except UnknownIndex:
        return None
    return np.broadcast_to(value, next(iter(values.values())).shape)


def thread_dependent(e: E.PrimExpr, thread_vars: tuple) -> bool:
    """True unless ``e`` is provably the same for every thread: it reads no memory and
    uses no thread index."""
    for node in E.post_order(e):
        if isinstance(node, E.Var) and any(node is v for v in thread_vars):
            return True
        if isinstance(node, N.BufferLoad):
            return True
    return False
