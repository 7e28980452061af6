"""Comparisons and logic with numpy broadcasting (``topi.greater``, ``topi.logical_and``...),
``topi.logical_not`` and ``topi.sign``: TVM's names, stage names (``T_greater``...) and tags.

Comparisons give ``bool`` tensors (two scalars give a bool expression, as in TVM); the
logical operators take ``bool`` operands only, as TVM's ``&&`` / ``||`` do: compare an
integer or float tensor first, e.g. ``topi.not_equal(x, 0)``.
"""

from __future__ import annotations

from typing import Any

from ..dsl import dtypes, expr as E
from ..dsl.construct import as_bool, binary, logical_and as _and, logical_or as _or, select
from ..dsl.tensor import Tensor, compute
from ..errors import DSLError, DTypeError
from .broadcast import _SCALARS, _binary
from .tag import ELEMWISE
from .utils import check_tensor


def _compare(cls: type, symbol: str):
    return lambda a, b: binary(cls, a, b, symbol)


def _xor(a: Any, b: Any) -> E.PrimExpr:
    what = "logical_xor"
    return binary(E.NE, as_bool(a, what), as_bool(b, what), "!=")


greater = _binary("greater", _compare(E.GT, ">"), "lhs > rhs with numpy broadcasting (bool).")
less = _binary("less", _compare(E.LT, "<"), "lhs < rhs with numpy broadcasting (bool).")
equal = _binary("equal", _compare(E.EQ, "=="), "lhs == rhs with numpy broadcasting (bool).")
not_equal = _binary("not_equal", _compare(E.NE, "!="), "lhs != rhs with numpy broadcasting (bool).")
greater_equal = _binary(
    "greater_equal", _compare(E.GE, ">="), "lhs >= rhs with numpy broadcasting (bool)."
)
less_equal = _binary(
    "less_equal", _compare(E.LE, "<="), "lhs <= rhs with numpy broadcasting (bool)."
)
logical_and = _binary(
    "logical_and", _and, "Elementwise lhs and rhs of bool tensors (or scalars), broadcast."
)
logical_or = _binary(
    "logical_or", _or, "Elementwise lhs or rhs of bool tensors (or scalars), broadcast."
)
logical_xor = _binary(
    "logical_xor", _xor, "Elementwise lhs xor rhs of bool tensors (or scalars), broadcast."
)


def logical_not(x: Any) -> Any:
    """Elementwise negation of a bool tensor (an expression for a bool expression)."""
    if not isinstance(x, Tensor):
        if not isinstance(x, _SCALARS):
            raise DSLError(
                f"topi.logical_not: x must be a te.Tensor or a scalar, got {type(x).__name__}"
            )
        return E.logical_not(x)
    check_tensor(x, "topi.logical_not: x")
    if not dtypes.is_bool(x.dtype):
        raise DTypeError(
            f"topi.logical_not expects a bool tensor, got {x.dtype} tensor {x.name!r}; "
            f"compare it first, e.g. topi.logical_not(topi.not_equal({x.name}, 0))"
        )
    return compute(x.shape, lambda *i: E.logical_not(x[i]), name="T_logical_not", tag=ELEMWISE)


def sign(x: Tensor) -> Tensor:
    """Elementwise -1, 0 or 1 by the sign of ``x``, in ``x``'s dtype.

    As TVM's ``Select(x > 0, 1, Select(x < 0, -1, 0))``: NaN gives 0 (numpy gives NaN).
    """
    check_tensor(x, "topi.sign: x")
    if dtypes.is_bool(x.dtype):
        raise DSLError(
            f"topi.sign expects a number tensor, got bool tensor {x.name!r}; "
            f"cast it first, e.g. topi.sign(topi.cast({x.name}, 'int32'))"
        )
    one, zero, minus = (E.const(v, x.dtype) for v in (1, 0, -1))

    def body(*i):
        v = x[i]
        return select(v > zero, one, select(v < zero, minus, zero))

    return compute(x.shape, body, name="T_sign", tag=ELEMWISE)
