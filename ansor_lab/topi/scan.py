"""Cumulative sums and products (``topi.cumsum``, ``topi.cumprod``), TVM's signatures.

TVM builds them with ``te.extern`` (a serial loop per row); ansor_lab compiles only
``te.compute`` and has no ``te.scan``, so here each output element is its own reduction
over the scanned axis, masked by a condition: ``out[..., i, ...] = te.sum(x[..., k, ...],
axis=k, where=k <= i)``. Unscheduled, the sum adds k = 0, 1, ... in order, as a serial
scan does (a tuned program may reassociate it, as its schedule states); the work is
O(n^2) in the scanned length n instead of O(n): fine for the lengths of a model's axis,
slow for a flattened tensor of millions of elements.
"""

from __future__ import annotations

import math
from typing import Any

from ..dsl import dtypes, intrin
from ..dsl.construct import const
from ..dsl.tensor import Tensor, compute, reduce_axis
from ..dsl.unsupported import comm_reducer
from ..errors import DSLError
from .utils import check_tensor, get_const_tuple, normalize_axis

# TVM's prod reducer (as topi.prod): builds on every backend, the auto-scheduler refuses it
_PROD = comm_reducer(lambda x, y: x * y, lambda dtype: const(1, dtype), name="prod")


def _unravel(flat: Any, shape: tuple[int, ...]) -> tuple:
    """The index into ``shape`` (row-major) of the flat position ``flat``."""
    index = []
    stride = 1
    for d in reversed(range(len(shape))):
        if shape[d] == 1:
            index.append(0)
        else:
            q = flat // stride if stride != 1 else flat
            index.append(q % shape[d] if d > 0 else q)
        stride *= shape[d]
    return tuple(reversed(index))


def scanop(
    data: Tensor,
    combiner: str,
    op_name: str,
    axis: Any = None,
    dtype: str | None = None,
    exclusive: bool | None = None,
) -> Tensor:
    """The cumulative sum (``combiner`` "sum") or product ("prod") of ``data`` along
    ``axis`` (None: of the flattened data, a 1-D result), in ``dtype`` (None: data's).

    ``exclusive``: element j combines the first j elements only (element 0 is the
    identity, 0 or 1). One ``te.compute`` named and tagged ``op_name``: a reduction over
    the scanned axis with the condition ``k <= i`` (``k < i`` when exclusive), O(n^2).
    """
    what = f"topi.{op_name.removesuffix('_generic')}"
    check_tensor(data, f"{what}: data")
    out_dtype = data.dtype if dtype is None or dtype == "" else dtypes.canonical(dtype)
    if out_dtype == "bool":
        raise DSLError(
            f"{what} in bool: pass dtype='int32' (or a float dtype) to count the True values"
        )
    exclusive = bool(exclusive)
    shape = get_const_tuple(data.shape)
    if axis is None:
        out_shape: tuple[int, ...] = (math.prod(shape),)
        ax = 0

        def element(i: tuple) -> Any:
            return data[_unravel(i[0], shape)]

    else:
        if data.ndim == 0:
            raise DSLError(
                f"{what}: data is 0-D; there is no axis {axis}. Pass axis=None (a 1-D result) "
                "or a tensor of at least one dimension"
            )
        ax = normalize_axis(axis, data.ndim, what)
        out_shape = shape

        def element(i: tuple) -> Any:
            return data[i]

    k = reduce_axis((0, out_shape[ax]), name="k")
    reducer = intrin.sum if combiner == "sum" else _PROD

    def fcompute(*i: Any) -> Any:
        src = element(i[:ax] + (k,) + i[ax + 1 :])
        if out_dtype != data.dtype:
            src = src.astype(out_dtype)
        return reducer(src, axis=k, where=k < i[ax] if exclusive else k <= i[ax])

    return compute(out_shape, fcompute, name=op_name, tag=op_name)


def cumsum(
    data: Tensor, axis: Any = None, dtype: str | None = None, exclusive: bool | None = None
) -> Tensor:
    """numpy-style cumulative sum of ``data`` along ``axis`` (TVM's ``topi.cumsum``).

    ``axis`` None sums over the flattened data (a 1-D result); ``dtype`` is the result's
    and the accumulator's (default: data's; integers wrap around); ``exclusive`` leaves
    each element out of its own sum (the first is 0). Each element is a masked
    ``te.sum`` over the axis: O(n^2) work in the axis length n (see the module).
    The auto-scheduler tunes it as any reduction.
    """
    return scanop(data, "sum", "cumsum_generic", axis, dtype, exclusive)


def cumprod(
    data: Tensor, axis: Any = None, dtype: str | None = None, exclusive: bool | None = None
) -> Tensor:
    """numpy-style cumulative product of ``data`` along ``axis`` (TVM's ``topi.cumprod``).

    Arguments as ``cumsum`` (the exclusive first element is 1). Each element is a masked
    product reduction over the axis: O(n^2) work in the axis length n. The product is a
    ``te.comm_reducer`` as in ``topi.prod``: it builds and runs with any schedule, but the
    auto-scheduler refuses it (a TaskError: it does not search tuple reductions).
    """
    return scanop(data, "prod", "cumprod_generic", axis, dtype, exclusive)


__all__ = ["cumprod", "cumsum"]
