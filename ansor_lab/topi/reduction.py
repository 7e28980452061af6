"""Commutative reductions over axes: ``topi.sum``, ``topi.max``, ``topi.min``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..dsl import intrin
from ..dsl.tensor import Tensor, compute, reduce_axis
from ..errors import DSLError
from .tag import COMM_REDUCE
from .utils import check_tensor, normalize_axes

_REDUCERS = {"sum": intrin.sum, "max": intrin.max, "min": intrin.min}


def comm_reduce(
    shape: tuple,
    axes: tuple,
    combiner: str,
    fsource: Callable[[tuple], Any],
    keepdims: bool = False,
    name: str = "T_reduce",
    tag: str = COMM_REDUCE,
) -> Tensor:
    """Reduce ``fsource(index)`` over ``axes`` of an iteration space of ``shape``.

    ``fsource`` receives a full index of ``len(shape)`` entries, reduction variables in the
    reduced positions; the result drops those dimensions (keeps them as 1 with ``keepdims``).
    """
    reducer = _REDUCERS[combiner]
    red = {a: reduce_axis((0, shape[a]), name=f"k{a}") for a in axes}
    out_shape = tuple((1 if keepdims else None) if d in red else e for d, e in enumerate(shape))
    out_shape = tuple(e for e in out_shape if e is not None)

    def fcompute(*i):
        full = []
        pos = 0
        for d in range(len(shape)):
            if d in red:
                full.append(red[d])
                pos += 1 if keepdims else 0
            else:
                full.append(i[pos])
                pos += 1
        return reducer(fsource(tuple(full)), axis=list(red.values()))

    return compute(out_shape, fcompute, name=name, tag=tag)


def _reduction(combiner: str, doc: str) -> Callable[..., Tensor]:
    def op(data: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
        check_tensor(data, f"topi.{combiner}: data")
        if data.ndim == 0:
            raise DSLError(f"topi.{combiner}: data is 0-D; there is no axis to reduce")
        if combiner == "sum" and data.dtype == "bool":
            raise DSLError("topi.sum of a bool tensor: cast it with topi.cast(x, 'int32') first")
        axes = normalize_axes(axis, data.ndim, f"topi.{combiner}")
        if not axes:  # numpy: reducing over no axis is a copy
            return compute(data.shape, lambda *i: data[i], name=f"T_{combiner}", tag=COMM_REDUCE)
        return comm_reduce(
            data.shape, axes, combiner, lambda idx: data[idx], keepdims, name=f"T_{combiner}"
        )

    op.__name__ = op.__qualname__ = combiner
    op.__doc__ = doc
    return op


sum = _reduction("sum", "Sum of ``data`` over ``axis`` (all axes when None), as numpy.sum.")
max = _reduction("max", "Maximum of ``data`` over ``axis`` (all when None), as numpy.max.")
min = _reduction("min", "Minimum of ``data`` over ``axis`` (all when None), as numpy.min.")
