"""How often each element of an argument is written when it is computed at a loop.

A stage that is a function argument and computed at another stage's loop writes, at each
iteration of the loops around it, the box its readers need there (see ``lower``). These
helpers count, for every element, how many iterations' boxes cover it, so the lowering
can refuse a program that would leave part of the argument unwritten.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..dsl import expr as E
from ..errors import LoweringError

#: most (iterations x box corners) enumerated to check an argument computed at a loop
COVER_LIMIT = 1 << 24


def box_counts(
    mins: list, exts: list, shape: list, loop_vars: list, var_ext: dict, where: str
) -> np.ndarray:
    """How many iterations of ``loop_vars`` write each element (boxes ``[min, min+ext)``).

    Every combination of the loop variables is enumerated; the boxes, clipped to the
    tensor as the in-bounds guards clip the writes, are summed with an n-d difference
    array (+-1 at the 2**n corners of each box, then a prefix sum along every axis).
    """
    sizes = [var_ext[v] for v in loop_vars]
    total = math.prod(sizes)
    if total * 2 ** len(shape) > COVER_LIMIT:
        raise LoweringError(
            f"{where}; checking that every element of it is written would take "
            f"{total} region evaluations; compute_root it, or attach it at an outer loop"
        )
    grid = np.indices(sizes).reshape(len(sizes), total)
    env = dict(zip(loop_vars, grid))
    lo, hi = [], []
    for m, ext, n in zip(mins, exts, shape):
        raw = np.broadcast_to(_eval_index(m, env, where), (total,))
        lo.append(np.clip(raw, 0, n))
        hi.append(np.clip(raw + ext, 0, n))
    live = np.logical_and.reduce([h > low for low, h in zip(lo, hi)])  # empty once clipped
    padded = [n + 1 for n in shape]
    flat = np.zeros(math.prod(padded), np.int64)
    for corner in itertools.product((0, 1), repeat=len(shape)):
        idx = tuple(np.where(c, h, low)[live] for c, low, h in zip(corner, lo, hi))
        sign = -1 if sum(corner) % 2 else 1
        flat += sign * np.bincount(np.ravel_multi_index(idx, padded), minlength=flat.size)
    counts = flat.reshape(padded)
    for axis in range(len(shape)):
        counts = np.cumsum(counts, axis=axis)
    return counts[tuple(slice(0, n) for n in shape)]


def _eval_index(e: E.PrimExpr, env: dict, where: str) -> np.ndarray:
    """An integer index expression over arrays of loop-variable values."""
    if isinstance(e, E.IntImm):
        return np.int64(e.value)
    if isinstance(e, E.Var) and e in env:
        return env[e].astype(np.int64)
    ops = {
        E.Add: np.add,
        E.Sub: np.subtract,
        E.Mul: np.multiply,
        E.FloorDiv: np.floor_divide,
        E.FloorMod: np.mod,
        E.Min: np.minimum,
        E.Max: np.maximum,
    }
    fn = ops.get(type(e))
    if fn is None:
        raise LoweringError(
            f"{where}, and its region ({e}) is too complex to check that "
            "every element is written; compute_root it"
        )
    return fn(_eval_index(e.a, env, where), _eval_index(e.b, env, where))


def first_unwritten(counts: np.ndarray) -> tuple[int, ...] | None:
    """The first element no iteration writes (``box_counts`` of 0), or None."""
    if counts.min() > 0:
        return None
    return tuple(int(i) for i in np.unravel_index(int(counts.argmin()), counts.shape))
