"""numpy references of matmul, dense and batch_matmul."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import acc_dtype, result_dtype


def matmul(
    a: np.ndarray,
    b: np.ndarray,
    bias: np.ndarray | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    out_dtype: Any = None,
) -> np.ndarray:
    """op(a) @ op(b) (+ bias) accumulated in 64 bits, returned in ``out_dtype``."""
    dt = result_dtype(out_dtype, a, b)
    acc = acc_dtype(dt)
    x = (a.T if transpose_a else a).astype(acc)
    y = (b.T if transpose_b else b).astype(acc)
    out = x @ y
    if bias is not None:
        out = out + bias.astype(acc)[None, :]
    return out.astype(dt)


def dense(
    data: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None, out_dtype: Any = None
) -> np.ndarray:
    """data @ weight.T (+ bias) with weight [out, in], as TVM's dense."""
    return matmul(data, weight, bias, transpose_b=True, out_dtype=out_dtype)


def batch_matmul(
    x: np.ndarray,
    y: np.ndarray,
    out_dtype: Any = None,
    trans_x: bool = False,
    trans_y: bool = True,
) -> np.ndarray:
    """Batched op(x) @ op(y) (TVM's reference signature; y is [b, N, K] by default)."""
    dt = result_dtype(out_dtype, x, y)
    acc = acc_dtype(dt)
    xx = np.swapaxes(x, 1, 2) if trans_x else x
    yy = np.swapaxes(y, 1, 2) if trans_y else y
    return np.einsum("bmk,bkn->bmn", xx.astype(acc), yy.astype(acc)).astype(dt)
