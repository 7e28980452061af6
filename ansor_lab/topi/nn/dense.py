"""Matrix products: ``topi.nn.matmul``, ``topi.nn.dense`` and ``topi.nn.batch_matmul``."""

from __future__ import annotations

from ...dsl import dtypes, intrin
from ...dsl.tensor import Tensor, compute, reduce_axis
from ...errors import DSLError
from ..tag import BROADCAST
from ..utils import check_tensor


def _out_dtype(op: str, a: Tensor, b: Tensor, out_dtype: str | None) -> str:
    if out_dtype is not None:
        return dtypes.canonical(out_dtype)
    if a.dtype != b.dtype:
        raise DSLError(
            f"{op}: operands are {a.dtype} and {b.dtype}; pass out_dtype= "
            "(both are cast to it before multiplying) or cast one of them"
        )
    return a.dtype


def _add_bias(op: str, out: Tensor, bias: Tensor | None) -> Tensor:
    if bias is None:
        return out
    check_tensor(bias, f"{op}: bias", 1)
    n = out.shape[-1]
    if bias.shape[0] != n:
        raise DSLError(
            f"{op}: bias has {bias.shape[0]} entries but the output has {n} columns; "
            f"pass a bias of shape ({n},)"
        )
    return compute(
        out.shape,
        lambda i, j: out[i, j] + bias[j].astype(out.dtype),
        name="T_bias_add",
        tag=BROADCAST,
    )


def matmul(
    A: Tensor,
    B: Tensor,
    bias: Tensor | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    out_dtype: str | None = None,
) -> Tensor:
    """op(A) @ op(B) (+ bias[j]) where op transposes when asked; A is [M, K] or [K, M]."""
    op = "topi.nn.matmul"
    check_tensor(A, f"{op}: A", 2)
    check_tensor(B, f"{op}: B", 2)
    dt = _out_dtype(op, A, B, out_dtype)
    name = f"T_matmul_{'T' if transpose_a else 'N'}{'T' if transpose_b else 'N'}"
    out = matmul_product(op, A, B, transpose_a, transpose_b, dt, name)
    return _add_bias(op, out, bias)


def matmul_product(
    op: str, A: Tensor, B: Tensor, transpose_a: bool, transpose_b: bool, dtype: str, name: str
) -> Tensor:
    """Stage ``name`` (tag ``matmul``): op(A) @ op(B) summed in ``dtype``, the 2-D operands
    checked by the caller ``op`` (``topi.matmul`` and ``topi.nn.matmul`` share it)."""
    m, ka = (A.shape[1], A.shape[0]) if transpose_a else A.shape
    kb, n = (B.shape[1], B.shape[0]) if transpose_b else B.shape
    if ka != kb:
        raise DSLError(
            f"{op}: reduction sizes differ: A{' (transposed)' if transpose_a else ''} {A.shape} "
            f"gives K={ka} but B{' (transposed)' if transpose_b else ''} {B.shape} gives K={kb}; "
            "check the shapes or the transpose flags"
        )
    k = reduce_axis((0, ka), name="k")

    def fcompute(i, j):
        a = A[k, i] if transpose_a else A[i, k]
        b = B[j, k] if transpose_b else B[k, j]
        return intrin.sum(a.astype(dtype) * b.astype(dtype), axis=k)

    return compute((m, n), fcompute, name=name, tag="matmul")


def dense(
    data: Tensor, weight: Tensor, bias: Tensor | None = None, out_dtype: str | None = None
) -> Tensor:
    """data [batch, in] times weight [out, in] transposed (+ bias[out]), as TVM's dense."""
    op = "topi.nn.dense"
    check_tensor(data, f"{op}: data [batch, in_dim]", 2)
    check_tensor(weight, f"{op}: weight [out_dim, in_dim]", 2)
    batch, in_dim = data.shape
    out_dim, w_in = weight.shape
    if w_in != in_dim:
        raise DSLError(
            f"{op}: data {data.shape} has in_dim={in_dim} but weight {weight.shape} has "
            f"in_dim={w_in}; weight must be [out_dim, {in_dim}] (TVM layout, not [in, out])"
        )
    dt = _out_dtype(op, data, weight, out_dtype)
    k = reduce_axis((0, in_dim), name="k")
    out = compute(
        (batch, out_dim),
        lambda i, j: intrin.sum(data[i, k].astype(dt) * weight[j, k].astype(dt), axis=k),
        name="T_dense",
        tag="dense",
    )
    return _add_bias(op, out, bias)


def batch_matmul(
    x: Tensor,
    y: Tensor,
    transpose_a: bool = False,
    transpose_b: bool = True,
    out_dtype: str | None = None,
) -> Tensor:
    """Batched op(x) @ op(y); by default (TVM) x is [b, M, K] and y is [b, N, K].

    A batch size of 1 on one side broadcasts against the other.
    """
    op = "topi.nn.batch_matmul"
    check_tensor(x, f"{op}: x", 3)
    check_tensor(y, f"{op}: y", 3)
    xb, yb = x.shape[0], y.shape[0]
    if xb != yb and 1 not in (xb, yb):
        raise DSLError(
            f"{op}: batch sizes {xb} and {yb} differ; they must be equal or one of them 1"
        )
    m, kx = (x.shape[2], x.shape[1]) if transpose_a else (x.shape[1], x.shape[2])
    ky, n = (y.shape[2], y.shape[1]) if transpose_b else (y.shape[1], y.shape[2])
    if kx != ky:
        raise DSLError(
            f"{op}: reduction sizes differ: x {x.shape} gives K={kx} and y {y.shape} gives "
            f"K={ky} (transpose_a={transpose_a}, transpose_b={transpose_b}); with the default "
            "transpose_b=True, y must be [batch, N, K]"
        )
    dt = _out_dtype(op, x, y, out_dtype)
    k = reduce_axis((0, kx), name="k")

    def fcompute(b, i, j):
        bx = 0 if xb == 1 else b
        by = 0 if yb == 1 else b
        a = x[bx, k, i] if transpose_a else x[bx, i, k]
        c = y[by, j, k] if transpose_b else y[by, k, j]
        return intrin.sum(a.astype(dt) * c.astype(dt), axis=k)

    name = f"T_batch_matmul_{'T' if transpose_a else 'N'}{'T' if transpose_b else 'N'}"
    return compute((max(xb, yb), m, n), fcompute, name=name, tag="batch_matmul")
