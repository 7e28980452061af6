"""Softmax along one axis (``topi.nn.softmax``, ``fast_softmax``, ``log_softmax``)."""

from __future__ import annotations

from ...dsl import dtypes, intrin
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..reduction import comm_reduce
from ..utils import check_tensor, normalize_axis


def _prepare(x: Tensor, axis: int, op: str) -> int:
    check_tensor(x, f"{op}: x")
    if not dtypes.is_float(x.dtype):
        raise DSLError(
            f"{op} expects a float tensor, got {x.dtype} tensor {x.name!r}; "
            "cast it with topi.cast(x, 'float32') first"
        )
    if x.ndim == 0:
        raise DSLError(f"{op}: x is 0-D; pass a tensor with at least one dimension")
    return normalize_axis(axis, x.ndim, op)


def _stat_index(i: tuple, axis: int) -> tuple:
    # a 1-D input keeps its statistics 1-D (shape (1,)) rather than 0-D
    return i[:axis] + i[axis + 1 :] if len(i) > 1 else (0,)


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along ``axis`` (four stages, as TVM)."""
    ax = _prepare(x, axis, "topi.nn.softmax")
    keep = x.ndim == 1
    max_elem = comm_reduce(x.shape, (ax,), "max", lambda i: x[i], keep, name="T_softmax_maxelem")
    exp = compute(
        x.shape,
        lambda *i: intrin.exp(x[i] - max_elem[_stat_index(i, ax)]),
        name="T_softmax_exp",
        tag="softmax_exp",
    )
    expsum = comm_reduce(x.shape, (ax,), "sum", lambda i: exp[i], keep, name="T_softmax_expsum")
    return compute(
        x.shape,
        lambda *i: exp[i] / expsum[_stat_index(i, ax)],
        name="T_softmax_norm",
        tag="softmax_output",
    )


def fast_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """Softmax through TVM's fast_softmax stages (max, delta, fast_exp, sum, norm).

    TVM's ``fast_exp`` is a polynomial approximation; here it is the exact exp, so the
    values are softmax's.
    """
    ax = _prepare(x, axis, "topi.nn.fast_softmax")
    keep = x.ndim == 1
    tag = "fast_softmax_output"
    max_elem = comm_reduce(x.shape, (ax,), "max", lambda i: x[i], keep, name="T_softmax_maxelem")
    delta = compute(
        x.shape, lambda *i: x[i] - max_elem[_stat_index(i, ax)], name="T_softmax_delta", tag=tag
    )
    exp = compute(x.shape, lambda *i: intrin.exp(delta[i]), name="T_fast_exp", tag="elemwise")
    expsum = comm_reduce(x.shape, (ax,), "sum", lambda i: exp[i], keep, name="T_softmax_expsum")
    return compute(
        x.shape,
        lambda *i: exp[i] / expsum[_stat_index(i, ax)],
        name="T_softmax_norm",
        tag=tag,
    )


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """x - max - log(sum(exp(x - max))) along ``axis``."""
    ax = _prepare(x, axis, "topi.nn.log_softmax")
    keep = x.ndim == 1
    max_elem = comm_reduce(x.shape, (ax,), "max", lambda i: x[i], keep, name="T_softmax_maxelem")
    expsum = comm_reduce(
        x.shape,
        (ax,),
        "sum",
        lambda i: intrin.exp(x[i] - max_elem[_stat_index(i, ax)]),
        keep,
        name="T_softmax_expsum",
    )
    return compute(
        x.shape,
        lambda *i: x[i] - max_elem[_stat_index(i, ax)] - intrin.log(expsum[_stat_index(i, ax)]),
        name="T_log_softmax",
        tag="log_softmax_output",
    )
