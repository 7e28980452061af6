"""numpy references of the normalisations: batch, instance, group, RMS, L2 and LRN."""

from __future__ import annotations

from typing import Any

import numpy as np


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else [axis]
    return tuple(sorted(int(a) % ndim for a in items))


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-D array shaped to broadcast along ``axis`` of an ``ndim``-D array."""
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.astype(np.float64).reshape(shape)


def batch_norm(
    x: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    moving_mean: np.ndarray,
    moving_var: np.ndarray,
    axis: int = 1,
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    training: bool = False,
    momentum: float = 0.1,
) -> list[np.ndarray]:
    """[out, new moving_mean, new moving_var] of batch normalisation along ``axis`` (TVM's
    ``topi.testing.batch_norm``); batch statistics use the biased variance."""
    ax = int(axis) % x.ndim
    x64 = x.astype(np.float64)
    if training:
        red = tuple(d for d in range(x.ndim) if d != ax)
        mean, var = x64.mean(axis=red), x64.var(axis=red)
    else:
        mean, var = moving_mean.astype(np.float64), moving_var.astype(np.float64)
    out = (x64 - _along(mean, ax, x.ndim)) / np.sqrt(_along(var, ax, x.ndim) + epsilon)
    if scale:
        out = out * _along(gamma, ax, x.ndim)
    if center:
        out = out + _along(beta, ax, x.ndim)
    if training:
        new_mean = (1 - momentum) * moving_mean.astype(np.float64) + momentum * mean
        new_var = (1 - momentum) * moving_var.astype(np.float64) + momentum * var
    else:
        new_mean, new_var = moving_mean, moving_var
    return [out.astype(x.dtype), new_mean.astype(x.dtype), new_var.astype(x.dtype)]


def instance_norm_python(
    data: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray | None,
    axis: Any,
    epsilon: float = 1e-5,
    channel_axis: int | None = None,
) -> np.ndarray:
    """(data - mean) / sqrt(var + eps) * gamma + beta, statistics over ``axis``.

    As TVM's reference, ``gamma`` / ``beta`` broadcast against ``data`` as given; with
    ``channel_axis`` they are 1-D over that axis (``topi.nn.instance_norm``'s form).
    """
    axes = _axes(axis, data.ndim)
    x = data.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    out = (x - mean) / np.sqrt(var + epsilon)

    def param(p: np.ndarray) -> np.ndarray:
        if channel_axis is None:
            return p.astype(np.float64)
        return _along(p, int(channel_axis) % data.ndim, data.ndim)

    out = out * param(gamma)
    if beta is not None:
        out = out + param(beta)
    return out.astype(data.dtype)


def group_norm_python(
    data: np.ndarray,
    gamma: np.ndarray | None,
    beta: np.ndarray | None,
    num_groups: int,
    channel_axis: int,
    axes: Any,
    epsilon: float = 1e-5,
) -> np.ndarray:
    """Group normalisation: statistics over each group of channels and ``axes``."""
    ch = int(channel_axis) % data.ndim
    shape = list(data.shape)
    grouped = shape[:ch] + [num_groups, shape[ch] // num_groups] + shape[ch + 1 :]
    x = data.astype(np.float64).reshape(grouped)
    red = [ch + 1] + [a + 1 if a > ch else a for a in _axes(axes, data.ndim)]
    mean = x.mean(axis=tuple(red), keepdims=True)
    var = ((x - mean) ** 2).mean(axis=tuple(red), keepdims=True)
    out = ((x - mean) / np.sqrt(var + epsilon)).reshape(data.shape)
    if gamma is not None:
        out = out * _along(gamma, ch, data.ndim)
    if beta is not None:
        out = out + _along(beta, ch, data.ndim)
    return out.astype(data.dtype)


def rms_norm_python(
    data: np.ndarray, weight: np.ndarray | None, axis: Any, epsilon: float = 1e-5
) -> np.ndarray:
    """data / sqrt(mean(data**2 over ``axis``) + eps) * weight (``weight`` covers the
    normalised axes in order)."""
    axes = _axes(axis, data.ndim)
    x = data.astype(np.float64)
    out = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + epsilon)
    if weight is not None:
        expand = [data.shape[d] if d in axes else 1 for d in range(data.ndim)]
        out = out * weight.astype(np.float64).reshape(expand)
    return out.astype(data.dtype)


def l2_normalize_python(a_np: np.ndarray, eps: float, axis: Any = None) -> np.ndarray:
    """a / sqrt(max(sum(a**2 over ``axis``), eps))."""
    x = a_np.astype(np.float64)
    total = (x * x).sum(axis=_axes(axis, a_np.ndim), keepdims=True)
    return (x / np.sqrt(np.maximum(total, eps))).astype(a_np.dtype)


def lrn_python(
    a_np: np.ndarray, size: int, axis: int, bias: float, alpha: float, beta: float
) -> np.ndarray:
    """a / (bias + alpha / size * windowed sum of squares along ``axis``) ** beta (note
    TVM's argument order here: bias before alpha and beta)."""
    ax = int(axis) % a_np.ndim
    x = np.moveaxis(a_np.astype(np.float64), ax, 0)
    half = size // 2
    sq = np.zeros_like(x)
    for c in range(x.shape[0]):
        lo, hi = max(0, c - half), min(x.shape[0], c + half + 1)
        sq[c] = (x[lo:hi] ** 2).sum(axis=0)
    out = x / np.power(bias + alpha * sq / size, beta)
    return np.moveaxis(out, 0, ax).astype(a_np.dtype)
