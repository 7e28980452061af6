"""Layer normalisation over trailing or arbitrary axes (``topi.nn.layer_norm``)."""

from __future__ import annotations

from typing import Any

from ...dsl import dtypes, intrin
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..reduction import comm_reduce
from ..utils import check_tensor, normalize_axes


def layer_norm(
    data: Tensor, gamma: Tensor, beta: Tensor | None, axis: Any, epsilon: float = 1e-5
) -> Tensor:
    """(data - mean) / sqrt(var + epsilon) * gamma + beta, with statistics over ``axis``.

    ``gamma`` and ``beta`` have the shape of the normalised axes (``data.shape[axis]``);
    ``beta`` may be None.
    """
    op = "topi.nn.layer_norm"
    check_tensor(data, f"{op}: data")
    if not dtypes.is_float(data.dtype):
        raise DSLError(f"{op} expects a float tensor, got {data.dtype}; cast it first")
    axes = normalize_axes(axis, data.ndim, op)
    if not axes:
        raise DSLError(f"{op}: axis is empty; list the axes to normalise over, e.g. axis=[-1]")
    norm_shape = tuple(data.shape[a] for a in axes)
    for what, t in (("gamma", gamma), ("beta", beta)):
        if t is None and what == "beta":
            continue
        check_tensor(t, f"{op}: {what}")
        if t.shape != norm_shape:
            raise DSLError(
                f"{op}: {what} has shape {t.shape} but the normalised axes {axes} of data "
                f"{data.shape} have shape {norm_shape}; pass a {what} of shape {norm_shape}"
            )
        if t.dtype != data.dtype:
            raise DSLError(f"{op}: {what} is {t.dtype} but data is {data.dtype}; cast one of them")
    count = 1
    for e in norm_shape:
        count *= e

    # normalising every axis keeps the statistics as shape (1, ..., 1) rather than 0-D
    keep = len(axes) == data.ndim

    def kept(i: tuple) -> tuple:
        if keep:
            return (0,) * data.ndim
        return tuple(v for d, v in enumerate(i) if d not in axes)

    def normed(i: tuple) -> tuple:
        return tuple(i[a] for a in axes)

    mean_sum = comm_reduce(
        data.shape, axes, "sum", lambda i: data[i], keep, name="T_layer_norm_sum"
    )
    mean = compute(
        mean_sum.shape,
        lambda *i: mean_sum[i] / float(count),
        name="T_layer_norm_mean",
        tag="elemwise",
    )

    def centered_square(i: tuple):
        c = data[i] - mean[kept(i)]
        return c * c

    var_sum = comm_reduce(
        data.shape, axes, "sum", centered_square, keep, name="T_layer_norm_varsum"
    )

    def fcompute(*i):
        k = kept(i)
        inv_std = intrin.rsqrt(var_sum[k] / float(count) + float(epsilon))
        out = (data[i] - mean[k]) * inv_std * gamma[normed(i)]
        return out + beta[normed(i)] if beta is not None else out

    return compute(data.shape, fcompute, name="T_layer_norm", tag="injective")
