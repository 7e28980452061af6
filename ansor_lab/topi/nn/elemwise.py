"""Activation functions: ``topi.nn.relu``, ``leaky_relu``, ``prelu``, ``gelu``."""

from __future__ import annotations

import math

from ...dsl import dtypes, expr as E, intrin
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..tag import BROADCAST, ELEMWISE
from ..utils import check_tensor, normalize_axis


def relu(x: Tensor) -> Tensor:
    """max(x, 0) elementwise."""
    check_tensor(x, "topi.nn.relu: x")
    zero = E.const(0, x.dtype)
    return compute(x.shape, lambda *i: intrin.max(x[i], zero), name="T_relu", tag=ELEMWISE)


def leaky_relu(x: Tensor, alpha: float) -> Tensor:
    """x where x > 0, else alpha * x (float tensors)."""
    check_tensor(x, "topi.nn.leaky_relu: x")
    if not dtypes.is_float(x.dtype):
        raise DSLError(f"topi.nn.leaky_relu expects a float tensor, got {x.dtype}; cast it first")
    return compute(
        x.shape,
        lambda *i: E.select(x[i] > 0.0, x[i], x[i] * float(alpha)),
        name="T_leaky_relu",
        tag=ELEMWISE,
    )


def prelu(x: Tensor, slope: Tensor, axis: int = 1) -> Tensor:
    """x where x > 0, else slope[c] * x, with c the index along channel ``axis``.

    ``slope`` is 1-D with one entry per channel, or a single entry broadcast to them
    (TVM's ``slope_broadcasted`` stage).
    """
    op = "topi.nn.prelu"
    check_tensor(x, f"{op}: x")
    check_tensor(slope, f"{op}: slope", ndim=1)
    if not dtypes.is_float(x.dtype):
        raise DSLError(f"{op} expects a float tensor, got {x.dtype}; cast it first")
    if slope.dtype != x.dtype:
        raise DSLError(f"{op}: slope is {slope.dtype} but x is {x.dtype}; cast one of them")
    ax = normalize_axis(axis, x.ndim, op)
    channels = x.shape[ax]
    if slope.shape[0] == 1 and channels != 1:
        single = slope
        slope = compute((channels,), lambda c: single[0], name="slope_broadcasted", tag=BROADCAST)
    if slope.shape[0] != channels:
        raise DSLError(
            f"{op}: slope has {slope.shape[0]} entries but axis {axis} of x {x.shape} has "
            f"{channels} channels; pass one slope per channel (or a single one)"
        )
    return compute(
        x.shape,
        lambda *i: E.select(x[i] > 0.0, x[i], x[i] * slope[i[ax]]),
        name="T_prelu",
        tag=BROADCAST,
    )


def gelu(x: Tensor) -> Tensor:
    """0.5 * x * (1 + erf(x / sqrt(2))), the exact (erf) form of GELU."""
    check_tensor(x, "topi.nn.gelu: x")
    if not dtypes.is_float(x.dtype):
        raise DSLError(f"topi.nn.gelu expects a float tensor, got {x.dtype}; cast it first")
    inv_sqrt2 = 1.0 / math.sqrt(2.0)
    return compute(
        x.shape,
        lambda *i: x[i] * 0.5 * (1.0 + intrin.erf(x[i] * inv_sqrt2)),
        name="T_gelu",
        tag=ELEMWISE,
    )
