"""Dilation and flattening (``topi.nn.dilate``, ``topi.nn.flatten``)."""

from __future__ import annotations

import math
from typing import Any

from ...dsl import expr as E, intrin
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..tag import INJECTIVE
from ..utils import check_tensor, get_const_int


def dilate(
    data: Tensor, strides: Any, dilation_value: float = 0.0, name: str = "DilatedInput"
) -> Tensor:
    """``data`` with ``strides[d] - 1`` copies of ``dilation_value`` between neighbours
    along each dimension d: shape (n - 1) * s + 1 (stride 1 leaves a dimension as it is)."""
    op = "topi.nn.dilate"
    check_tensor(data, f"{op}: data")
    if not isinstance(strides, (list, tuple)) or len(strides) != data.ndim:
        raise DSLError(
            f"{op}: strides must list one stride per dimension ({data.ndim} for shape "
            f"{data.shape}), got {strides!r}"
        )
    s = tuple(get_const_int(v) for v in strides)
    if any(v < 1 for v in s):
        raise DSLError(f"{op}: strides {s} must be positive integers (1 = no dilation)")
    if any(e == 0 for e in data.shape):
        raise DSLError(f"{op}: data of shape {data.shape} has an empty dimension")
    try:
        fill = E.const(dilation_value, data.dtype)
    except DSLError as err:
        raise DSLError(
            f"{op}: dilation_value {dilation_value!r} does not fit {data.dtype}: {err}"
        ) from None
    shape = tuple((e - 1) * v + 1 for e, v in zip(data.shape, s))

    def fcompute(*i):
        idx = tuple(v if k == 1 else v // k for v, k in zip(i, s))
        conds = [v % k == 0 for v, k in zip(i, s) if k != 1]
        if not conds:
            return data[idx]
        return E.if_then_else(intrin.all(*conds), data[idx], fill)

    return compute(shape, fcompute, name=name, tag=INJECTIVE + ",dilate")


def flatten(data: Tensor) -> Tensor:
    """(d0, d1, ..., dn) to (d0, d1 * ... * dn), row-major (TVM's ``topi.nn.flatten``;
    Relay called it ``batch_flatten``)."""
    op = "topi.nn.flatten"
    check_tensor(data, f"{op}: data")
    if data.ndim == 0:
        raise DSLError(f"{op}: data is 0-D; pass a tensor with at least one dimension")
    rest = data.shape[1:]
    dim = math.prod(rest)

    def fcompute(i, j):
        idx = []
        for e in reversed(rest[1:]):  # innermost first; the outermost takes what is left
            idx.append(j % e if e != 1 else 0)
            j = j // e if e != 1 else j
        if rest:
            idx.append(j)
        return data[(i, *reversed(idx))]

    return compute((data.shape[0], dim), fcompute, name="T_flatten", tag=INJECTIVE)
