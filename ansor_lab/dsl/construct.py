"""Building expression nodes from Python values, with dtype checking.

``const``, ``as_expr``, ``cast`` and the operand matching behind every arithmetic operator
of ``PrimExpr`` (``binary``), and the logical and select builders. The node classes are in
``dsl.expr``, which re-exports these names (``E.const``, ``E.binary`` ...).
"""

from __future__ import annotations

import numpy as np

from ..errors import DSLError, DTypeError
from . import dtypes
from .expr import (
    And,
    Call,
    Cast,
    CmpOp,
    ExprOp,
    FloatImm,
    IntImm,
    Not,
    Or,
    PrimExpr,
    Select,
)

_PY_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def _convertible(x: object) -> bool:
    return isinstance(x, (ExprOp,) + _PY_SCALARS)


def const(value: object, dtype: str | None = None) -> PrimExpr:
    """A constant; the dtype defaults to int32 for ints, float32 for floats, bool for bools."""
    if dtype is None:
        if isinstance(value, (bool, np.bool_)):
            dtype = "bool"
        elif isinstance(value, (int, np.integer)):
            dtype = "int32"
        elif isinstance(value, (float, np.floating)):
            dtype = "float32"
        else:
            raise DSLError(f"cannot make a constant from {value!r} of type {type(value).__name__}")
    dtype = dtypes.canonical(dtype)
    if isinstance(value, (str, bytes)) or value is None:
        # TVM takes numbers only; float("x") / int(None) would fail with Python's message
        raise DSLError(
            f"const: the value must be a number (int, float or bool), got "
            f"{type(value).__name__} {value!r:.60}; e.g. tir.const(1.5, 'float32')"
        )
    if dtypes.is_float(dtype):
        return FloatImm(float(value), dtype)
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise DTypeError(f"constant {value!r} is not an integer and cannot have dtype {dtype}")
    ivalue = int(value)
    if dtypes.is_bool(dtype):
        return IntImm(int(bool(ivalue)), "bool")
    lo, hi = dtypes.int_range(dtype)
    if not lo <= ivalue <= hi:
        raise DTypeError(f"constant {ivalue} is out of the range of {dtype} [{lo}, {hi}]")
    return IntImm(ivalue, dtype)


def as_expr(x: object) -> PrimExpr:
    """Convert a Python scalar, IterVar or expression to a PrimExpr."""
    if isinstance(x, PrimExpr):
        return x
    if isinstance(x, ExprOp):
        return x._as_operand()
    if isinstance(x, _PY_SCALARS):
        return const(x)
    raise DSLError(
        f"expected an expression or a number, got {type(x).__name__} {x!r}"
        + (
            "; a tensor must be indexed, e.g. A[i, j]"
            if hasattr(x, "op") and hasattr(x, "shape")
            else ""
        )
    )


def cast(x: object, dtype: str) -> PrimExpr:
    """Convert ``x`` to ``dtype``; a no-op when it already has it."""
    dtype = dtypes.canonical(dtype)
    e = as_expr(x)
    if e.dtype == dtype:
        return e
    if isinstance(e, (IntImm, FloatImm)) and not dtypes.is_bool(dtype):
        value = const_value(e)
        if dtypes.is_int(dtype):
            if isinstance(value, float) and not np.isfinite(value):
                return Cast(e, dtype)  # no integer holds inf or NaN: leave it to run time
            value = int(value)  # float -> int truncates, as Cast does
            lo, hi = dtypes.int_range(dtype)
            if lo <= value <= hi:
                return IntImm(value, dtype)
        elif dtypes.is_float(dtype):
            return FloatImm(float(value), dtype)
    return Cast(e, dtype)


def const_value(e: IntImm | FloatImm) -> int | float:
    """The value a constant really has: a FloatImm keeps the number it was written with,
    so round it to its dtype first (``const(0.1, "float32")`` is 0.10000000149...)."""
    if isinstance(e, FloatImm):
        with np.errstate(over="ignore"):
            return float(np.dtype(e.dtype).type(e.value))
    return int(e.value)


def _const_for(value: object, other: PrimExpr, what: str) -> tuple[PrimExpr, PrimExpr]:
    """Turn a Python scalar into a constant matching ``other``; may widen ``other``."""
    if isinstance(value, (bool, np.bool_)):
        if dtypes.is_bool(other.dtype):
            return IntImm(int(value), "bool"), other
        value = int(value)
    if isinstance(value, (float, np.floating)) and not dtypes.is_float(other.dtype):
        if dtypes.is_bool(other.dtype):
            raise DTypeError(f"operator {what}: cannot mix bool with a float constant")
        return FloatImm(float(value), "float32"), cast(other, "float32")
    if dtypes.is_bool(other.dtype) and what not in ("==", "!="):
        raise DTypeError(
            f"operator {what}: bool does not take part in arithmetic; cast it with .astype('int32')"
        )
    return const(value, other.dtype), other


def match_operands(a: object, b: object, what: str) -> tuple[PrimExpr, PrimExpr]:
    """Convert both operands and bring them to a common dtype (see ``dtypes.promote``)."""
    a_py = isinstance(a, _PY_SCALARS)
    b_py = isinstance(b, _PY_SCALARS)
    if a_py and b_py:
        ea, eb = as_expr(a), as_expr(b)
        if ea.dtype == eb.dtype or dtypes.is_bool(ea.dtype) or dtypes.is_bool(eb.dtype):
            return ea, eb
        # two numbers of different kinds (select(c, 1, 0.5), max(1, 0.5)): as in TVM the
        # int becomes the float's type, never a float constant in an int32 expression
        target = dtypes.promote(ea.dtype, eb.dtype, f"operator {what}")
        return cast(ea, target), cast(eb, target)
    if a_py:
        ca, eb = _const_for(a, as_expr(b), what)
        return ca, eb
    if b_py:
        cb, ea = _const_for(b, as_expr(a), what)
        return ea, cb
    ea, eb = as_expr(a), as_expr(b)
    if ea.dtype == eb.dtype:
        return ea, eb
    if what in ("==", "!=") and dtypes.is_bool(ea.dtype) and dtypes.is_bool(eb.dtype):
        return ea, eb
    target = dtypes.promote(ea.dtype, eb.dtype, f"operator {what}")
    return cast(ea, target), cast(eb, target)


def binary(cls: type, a: object, b: object, what: str) -> PrimExpr:
    """Build ``cls(a, b)`` after operand conversion and dtype matching."""
    ea, eb = match_operands(a, b, what)
    if issubclass(cls, CmpOp):
        return cls(ea, eb)
    if dtypes.is_bool(ea.dtype):
        raise DTypeError(
            f"operator {what}: bool does not take part in arithmetic; cast with .astype('int32')"
        )
    return cls(ea, eb, ea.dtype)


def as_bool(x: object, what: str) -> PrimExpr:
    if isinstance(x, (bool, np.bool_)):
        return IntImm(int(x), "bool")
    e = as_expr(x)
    if not dtypes.is_bool(e.dtype):
        raise DTypeError(
            f"{what} expects a bool condition, got {e.dtype} expression {e}; "
            "compare it first, e.g. x != 0"
        )
    return e


def logical_and(a: object, b: object) -> PrimExpr:
    """Logical and of two bool expressions."""
    return And(as_bool(a, "and (&)"), as_bool(b, "and (&)"))


def logical_or(a: object, b: object) -> PrimExpr:
    """Logical or of two bool expressions."""
    return Or(as_bool(a, "or (|)"), as_bool(b, "or (|)"))


def logical_not(a: object) -> PrimExpr:
    """Logical negation of a bool expression."""
    return Not(as_bool(a, "not (~)"))


def select(condition: object, true_value: object, false_value: object) -> PrimExpr:
    """Eager choice between two values of one dtype (both are evaluated)."""
    cond = as_bool(condition, "select")
    t, f = match_operands(true_value, false_value, "select")
    return Select(cond, t, f, t.dtype)


def if_then_else(condition: object, true_value: object, false_value: object) -> PrimExpr:
    """Lazy choice: only the branch selected by ``condition`` is evaluated.

    Guarded reads are therefore safe: ``if_then_else(i < n, A[i], 0.0)`` never reads
    ``A[n]``.
    """
    cond = as_bool(condition, "if_then_else")
    t, f = match_operands(true_value, false_value, "if_then_else")
    return Call("if_then_else", (cond, t, f), t.dtype)
