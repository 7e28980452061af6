"""Activation functions: ``topi.nn.relu``, ``leaky_relu``, ``gelu``."""

from __future__ import annotations

import math

from ...dsl import dtypes, expr as E, intrin
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..tag import ELEMWISE
from ..utils import check_tensor


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
