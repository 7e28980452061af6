"""Normalisations (``topi.nn.batch_norm``, ``instance_norm``, ``group_norm``, ``rms_norm``,
``l2_normalize``, ``lrn``).

Statistics are plain two-pass reductions (a sum, then a sum of centred squares), as
``layer_norm``: the auto-scheduler does not search TVM's tuple reductions (sum of x and
x*x in one pass), and the two-pass variance is the more accurate one. float16 data is
reduced in float32 and the result cast back, as TVM does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...dsl import dtypes, intrin
from ...dsl.tensor import Tensor, compute, reduce_axis
from ...errors import DSLError
from ..reduction import comm_reduce
from ..tag import BROADCAST, ELEMWISE, INJECTIVE
from ..utils import check_tensor, get_const_int, normalize_axes, normalize_axis
from .pad import pad


def _float_data(data: Any, op: str) -> Tensor:
    check_tensor(data, f"{op}: data")
    if not dtypes.is_float(data.dtype):
        raise DSLError(
            f"{op} expects a float tensor, got {data.dtype}; cast it with "
            "topi.cast(data, 'float32') first"
        )
    if data.ndim == 0:
        raise DSLError(f"{op}: data is 0-D; pass a tensor with at least one dimension")
    return data


def _check_param(t: Any, what: str, shape: tuple, data: Tensor, op: str) -> None:
    check_tensor(t, f"{op}: {what}")
    if tuple(t.shape) != tuple(shape):
        raise DSLError(
            f"{op}: {what} has shape {t.shape} but must have shape {shape}; pass a {what} "
            f"of shape {shape}"
        )
    if t.dtype != data.dtype:
        raise DSLError(f"{op}: {what} is {t.dtype} but data is {data.dtype}; cast one of them")


def _acc(dtype: str) -> str:
    """The dtype statistics are accumulated in: float32 for float16, else the dtype."""
    return "float32" if dtype == "float16" else dtype


def _load(t: Tensor, idx: tuple, acc: str) -> Any:
    v = t[idx]
    return v if t.dtype == acc else v.astype(acc)


def _moments(
    data: Tensor, axes: tuple, prefix: str
) -> tuple[Tensor, Tensor, Callable[[tuple], tuple], int]:
    """Mean and sum of centred squares of ``data`` over ``axes`` (two plain reductions).

    Returns (mean, varsum, stat_index, count): ``stat_index(i)`` maps an index of ``data``
    to one of the statistics; the variance is ``varsum / count``.
    """
    acc = _acc(data.dtype)
    keep = len(axes) == data.ndim  # every axis reduced: statistics of shape (1, ..., 1)
    count = math.prod(data.shape[a] for a in axes)

    def stat_index(i: tuple) -> tuple:
        if keep:
            return (0,) * data.ndim
        return tuple(v for d, v in enumerate(i) if d not in axes)

    total = comm_reduce(
        data.shape, axes, "sum", lambda i: _load(data, i, acc), keep, name=f"{prefix}_sum"
    )
    mean = compute(
        total.shape, lambda *i: total[i] / float(count), name=f"{prefix}_mean", tag=ELEMWISE
    )

    def centred_square(i: tuple) -> Any:
        c = _load(data, i, acc) - mean[stat_index(i)]
        return c * c

    varsum = comm_reduce(data.shape, axes, "sum", centred_square, keep, name=f"{prefix}_varsum")
    return mean, varsum, stat_index, count


def _cast_back(value: Any, dtype: str) -> Any:
    return value if value.dtype == dtype else value.astype(dtype)


def batch_norm(
    data: Tensor,
    gamma: Tensor | None,
    beta: Tensor | None,
    moving_mean: Tensor,
    moving_var: Tensor,
    axis: int | None = None,
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    training: bool = False,
    momentum: float = 0.1,
) -> list[Tensor]:
    """Batch normalisation along channel ``axis`` (1 when None); returns TVM's list
    ``[out, new_moving_mean, new_moving_var]``.

    Inference (the default) normalises with ``moving_mean`` / ``moving_var`` and returns
    copies of them; ``training=True`` uses the batch statistics (biased variance) and
    returns ``(1 - momentum) * moving + momentum * batch`` for each. ``gamma`` (``beta``)
    may be None when ``scale`` (``center``) is False. The three outputs are single fused
    stages here (``T_batch_norm``...) where TVM chains generic broadcast ops.
    """
    op = "topi.nn.batch_norm"
    _float_data(data, op)
    ax = normalize_axis(1 if axis is None else axis, data.ndim, op)
    channels = (data.shape[ax],)
    for what, t, used in (
        ("gamma", gamma, scale),
        ("beta", beta, center),
        ("moving_mean", moving_mean, True),
        ("moving_var", moving_var, True),
    ):
        if t is None and not used:
            continue
        _check_param(t, what, channels, data, op)
    if training and not 0 <= float(momentum) <= 1:
        raise DSLError(f"{op}: momentum {momentum} is outside [0, 1]; pass a value in [0, 1]")
    if training:
        if data.ndim < 2:
            raise DSLError(
                f"{op}: training statistics of 1-D data reduce no axis; pass data with a "
                "batch axis, e.g. topi.expand_dims(data, 0)"
            )
        red = tuple(d for d in range(data.ndim) if d != ax)
        mean, varsum, _, count = _moments(data, red, "T_batch_norm")
        var = compute(
            channels, lambda c: varsum[c] / float(count), name="T_batch_norm_var", tag=ELEMWISE
        )
        stat_mean, stat_var = mean, var
    else:
        stat_mean, stat_var = moving_mean, moving_var
    acc = _acc(data.dtype)

    def fcompute(*i):
        c = (i[ax],)
        centred = _load(data, i, acc) - _load(stat_mean, c, acc)
        out = centred / intrin.sqrt(_load(stat_var, c, acc) + float(epsilon))
        out = _cast_back(out, data.dtype)
        if scale:
            out = out * gamma[c]
        return out + beta[c] if center else out

    out = compute(data.shape, fcompute, name="T_batch_norm", tag=BROADCAST)
    if not training:
        # as TVM: copies, so that the outputs are not the placeholders themselves
        new_mean = compute(
            channels, lambda c: moving_mean[c] * 1.0, name="T_batch_norm_moving_mean", tag=BROADCAST
        )
        new_var = compute(
            channels, lambda c: moving_var[c] * 1.0, name="T_batch_norm_moving_var", tag=BROADCAST
        )
        return [out, new_mean, new_var]
    m = float(momentum)

    def update(moving: Tensor, batch: Tensor) -> Callable:
        return lambda c: moving[c] * (1.0 - m) + _cast_back(batch[c], data.dtype) * m

    new_mean = compute(
        channels, update(moving_mean, mean), name="T_batch_norm_moving_mean", tag=BROADCAST
    )
    new_var = compute(
        channels, update(moving_var, stat_var), name="T_batch_norm_moving_var", tag=BROADCAST
    )
    return [out, new_mean, new_var]


def instance_norm(
    data: Tensor,
    gamma: Tensor,
    beta: Tensor | None,
    channel_axis: int = 1,
    axis: Any = None,
    epsilon: float = 1e-5,
) -> Tensor:
    """(data - mean) / sqrt(var + epsilon) * gamma[c] + beta[c], statistics over ``axis``.

    TVM's C++ form (``topi.nn.instance_norm(data, gamma, beta, channel_axis, axis,
    epsilon)``, as Relax legalises to): ``gamma`` / ``beta`` are 1-D over ``channel_axis``;
    ``beta`` may be None. ``axis`` defaults to every axis but 0 and ``channel_axis``
    (H and W of NCHW).
    """
    op = "topi.nn.instance_norm"
    _float_data(data, op)
    if isinstance(channel_axis, (list, tuple)):
        raise DSLError(
            f"{op}: channel_axis {channel_axis!r} is a list; the signature is "
            "instance_norm(data, gamma, beta, channel_axis, axis, epsilon), e.g. "
            "instance_norm(x, g, b, 1, [2, 3]) for NCHW"
        )
    ch = normalize_axis(channel_axis, data.ndim, op)
    if axis is None:
        axes = tuple(d for d in range(data.ndim) if d not in (0, ch))
    else:
        axes = normalize_axes(axis, data.ndim, op)
    if not axes:
        raise DSLError(
            f"{op}: no axis to normalise over for data of shape {data.shape}; pass axis, "
            "e.g. axis=[2, 3] for NCHW"
        )
    channels = (data.shape[ch],)
    _check_param(gamma, "gamma", channels, data, op)
    if beta is not None:
        _check_param(beta, "beta", channels, data, op)
    mean, varsum, stat, count = _moments(data, axes, "T_instance_norm")
    acc = _acc(data.dtype)

    def fcompute(*i):
        k = stat(i)
        inv_std = intrin.rsqrt(varsum[k] / float(count) + float(epsilon))
        out = _cast_back((_load(data, i, acc) - mean[k]) * inv_std, data.dtype) * gamma[i[ch]]
        return out + beta[i[ch]] if beta is not None else out

    return compute(data.shape, fcompute, name="T_instance_norm", tag=INJECTIVE)


def group_norm(
    data: Tensor,
    gamma: Tensor | None,
    beta: Tensor | None,
    num_groups: int,
    channel_axis: int,
    axes: Any,
    epsilon: float = 1e-5,
) -> Tensor:
    """Group normalisation: the channels split into ``num_groups`` groups, statistics over
    each group's channels and ``axes`` (which must not hold ``channel_axis``); then
    ``* gamma[c] + beta[c]`` (each may be None). Computed without TVM's reshapes."""
    op = "topi.nn.group_norm"
    _float_data(data, op)
    ch = normalize_axis(channel_axis, data.ndim, op)
    red = normalize_axes(axes, data.ndim, op)
    if ch in red:
        raise DSLError(
            f"{op}: axes {tuple(red)} contain the channel axis {ch}; list only the other "
            "axes to normalise over (the channels of a group are always included)"
        )
    groups = get_const_int(num_groups)
    channels = data.shape[ch]
    if groups < 1 or channels % groups:
        raise DSLError(
            f"{op}: {channels} channels do not split into num_groups={num_groups} groups; "
            f"pass a num_groups that divides {channels}"
        )
    size = channels // groups
    for what, t in (("gamma", gamma), ("beta", beta)):
        if t is not None:
            _check_param(t, what, (channels,), data, op)
    acc = _acc(data.dtype)
    kept = [d for d in range(data.ndim) if d not in red]  # the channel axis becomes the group
    stat_shape = tuple(groups if d == ch else data.shape[d] for d in kept)
    count = size * math.prod(data.shape[a] for a in red)

    def stat_index(i: tuple) -> tuple:
        return tuple(i[d] // size if d == ch and size != 1 else i[d] for d in kept)

    def reduced(fsource: Callable[[tuple], Any], name: str) -> Tensor:
        rc = reduce_axis((0, size), name="rc")
        rv = {a: reduce_axis((0, data.shape[a]), name=f"k{a}") for a in red}

        def fcompute(*s):
            pos = dict(zip(kept, s))
            idx = tuple(
                rv[d] if d in rv else (pos[d] * size + rc if d == ch else pos[d])
                for d in range(data.ndim)
            )
            return intrin.sum(fsource(idx), axis=[rc, *rv.values()])

        return compute(stat_shape, fcompute, name=name, tag="comm_reduce")

    total = reduced(lambda i: _load(data, i, acc), "T_group_norm_sum")
    mean = compute(
        stat_shape, lambda *s: total[s] / float(count), name="T_group_norm_mean", tag=ELEMWISE
    )

    def centred_square(i: tuple) -> Any:
        c = _load(data, i, acc) - mean[stat_index(i)]
        return c * c

    varsum = reduced(centred_square, "T_group_norm_varsum")

    def fcompute(*i):
        k = stat_index(i)
        inv_std = intrin.rsqrt(varsum[k] / float(count) + float(epsilon))
        out = _cast_back((_load(data, i, acc) - mean[k]) * inv_std, data.dtype)
        if gamma is not None:
            out = out * gamma[i[ch]]
        return out + beta[i[ch]] if beta is not None else out

    return compute(data.shape, fcompute, name="T_group_norm", tag=INJECTIVE)


def rms_norm(data: Tensor, weight: Tensor | None, axis: Any, epsilon: float = 1e-5) -> Tensor:
    """data * rsqrt(mean(data**2 over ``axis``) + epsilon) * weight.

    ``weight`` has the shape of the normalised axes (``data.shape[axis]``) and may be None.
    TVM computes in float32 whatever the dtype; here float64 stays float64.
    """
    op = "topi.nn.rms_norm"
    _float_data(data, op)
    axes = normalize_axes(axis, data.ndim, op)
    if not axes:
        raise DSLError(f"{op}: axis is empty; list the axes to normalise over, e.g. axis=[-1]")
    norm_shape = tuple(data.shape[a] for a in axes)
    if weight is not None:
        _check_param(weight, "weight", norm_shape, data, op)
    acc = _acc(data.dtype)
    keep = len(axes) == data.ndim
    count = math.prod(norm_shape)

    def square(i: tuple) -> Any:
        v = _load(data, i, acc)
        return v * v

    sqsum = comm_reduce(data.shape, axes, "sum", square, keep, name="T_rms_norm_sqsum")

    def fcompute(*i):
        k = (0,) * data.ndim if keep else tuple(v for d, v in enumerate(i) if d not in axes)
        out = _load(data, i, acc) * intrin.rsqrt(sqsum[k] / float(count) + float(epsilon))
        if weight is not None:
            out = out * _load(weight, tuple(i[a] for a in axes), acc)
        return _cast_back(out, data.dtype)

    return compute(data.shape, fcompute, name="T_rms_norm", tag=INJECTIVE)


def l2_normalize(data: Tensor, eps: float, axis: Any = None) -> Tensor:
    """data / sqrt(max(sum(data**2 over ``axis``), eps)); ``axis`` None is every axis."""
    op = "topi.nn.l2_normalize"
    _float_data(data, op)
    axes = normalize_axes(axis, data.ndim, op)
    if not axes:
        raise DSLError(f"{op}: axis is empty; list the axes to normalise over, e.g. axis=[1]")
    acc = _acc(data.dtype)

    def square(i: tuple) -> Any:
        v = _load(data, i, acc)
        return v * v

    sqsum = comm_reduce(data.shape, axes, "sum", square, True, name="T_l2_normalize_sqsum")

    def fcompute(*i):
        k = tuple(0 if d in axes else v for d, v in enumerate(i))
        norm = intrin.sqrt(intrin.max(sqsum[k], float(eps)))
        return _cast_back(_load(data, i, acc) / norm, data.dtype)

    return compute(data.shape, fcompute, name="T_l2_normalize", tag=BROADCAST)


def lrn(
    data: Tensor,
    size: int,
    axis: int = 1,
    alpha: float = 0.0001,
    beta: float = 0.75,
    bias: float = 2,
) -> Tensor:
    """Local response normalisation across ``axis``:
    data / (bias + alpha / size * sum of squares over a window of ``size``) ** beta.

    The window is centred (``size`` odd), zero-padded at the ends. TVM takes only 4-D data
    with axis 1 or 3; any rank and axis work here.
    """
    op = "topi.nn.lrn"
    _float_data(data, op)
    n = get_const_int(size)
    if n < 1 or n % 2 == 0:
        raise DSLError(f"{op}: size {size} must be a positive odd number (a centred window)")
    ax = normalize_axis(axis, data.ndim, op)
    half = n // 2
    before = [half if d == ax else 0 for d in range(data.ndim)]
    padded = pad(data, before, before, 0.0, name="pad_data") if half else data
    rxs = reduce_axis((0, n), name="rxs")

    def window(*i):
        idx = tuple(v + rxs if d == ax else v for d, v in enumerate(i))
        return intrin.sum(padded[idx] * padded[idx], axis=rxs)

    sqr_sum = compute(data.shape, window, name="T_lrn_sqr_sum", tag="sqr_sum")

    def fcompute(*i):
        up = intrin.power(float(bias) + float(alpha) * sqr_sum[i] / float(n), float(beta))
        return data[i] / up

    return compute(data.shape, fcompute, name="T_lrn", tag=BROADCAST)
