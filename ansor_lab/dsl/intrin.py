"""Math intrinsics and reducers of the DSL (``te.exp``, ``te.sum``...)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from ..errors import DSLError, DTypeError
from . import dtypes, expr as E

#: Float-only unary intrinsics, evaluated like numpy's functions of the same name (the
#: inverse trigonometric ones as numpy's arcsin..., nearbyint as rint: half to even).
FLOAT_UNARY = (
    "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "floor", "ceil", "round",
    "exp2", "exp10", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh", "cosh",
    "asin", "acos", "atan", "asinh", "acosh", "atanh", "trunc", "nearbyint",
)  # fmt: skip

#: Unary intrinsics that round (one instruction, never expanded).
ROUNDING = ("floor", "ceil", "round", "trunc", "nearbyint")


def _float_operand(name: str, x: object) -> E.PrimExpr:
    e = E.as_expr(x)
    if not dtypes.is_float(e.dtype):
        raise DTypeError(
            f"te.{name} expects a float expression, got {e.dtype} ({e}); "
            f"cast first, e.g. te.{name}(x.astype('float32'))"
        )
    return e


def _unary(name: str):
    def fn(x: object) -> E.PrimExpr:
        e = _float_operand(name, x)
        return E.Call(name, (e,), e.dtype)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of a float expression."
    return fn


exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
erf = _unary("erf")
floor = _unary("floor")
ceil = _unary("ceil")
round = _unary("round")  # noqa: A001 - TVM's name; rounds half to even like numpy
exp2 = _unary("exp2")
exp10 = _unary("exp10")
log2 = _unary("log2")
log10 = _unary("log10")
log1p = _unary("log1p")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
sinh = _unary("sinh")
cosh = _unary("cosh")
asin = _unary("asin")
acos = _unary("acos")
atan = _unary("atan")
asinh = _unary("asinh")
acosh = _unary("acosh")
atanh = _unary("atanh")
trunc = _unary("trunc")
nearbyint = _unary("nearbyint")  # the default rounding mode: half to even, as round


def abs(x: object) -> E.PrimExpr:  # noqa: A001 - TVM's name
    """Absolute value (ints and floats)."""
    e = E.as_expr(x)
    if dtypes.is_bool(e.dtype):
        raise DTypeError("te.abs of a bool is meaningless; cast it first")
    return E.Call("abs", (e,), e.dtype)


def power(x: object, y: object) -> E.PrimExpr:
    """x raised to the power y (floats)."""
    a, b = E.match_operands(x, y, "pow")
    if not dtypes.is_float(a.dtype):
        raise DTypeError(f"te.power expects float operands, got {a.dtype}; cast them first")
    return E.Call("pow", (a, b), a.dtype)


pow = power  # noqa: A001 - TVM exposes both names


def truncdiv(a: object, b: object) -> E.PrimExpr:
    """Integer division rounding toward zero (C semantics)."""
    return _int_binary(E.Div, a, b, "truncdiv")


def truncmod(a: object, b: object) -> E.PrimExpr:
    """Remainder of truncdiv: it has the sign of the dividend (C's %)."""
    return _int_binary(E.Mod, a, b, "truncmod")


def floordiv(a: object, b: object) -> E.PrimExpr:
    """Division rounding toward minus infinity (Python's //)."""
    return E.binary(E.FloorDiv, a, b, "//")


def floormod(a: object, b: object) -> E.PrimExpr:
    """Remainder of floordiv: it has the sign of the divisor (Python's %)."""
    return E.binary(E.FloorMod, a, b, "%")


def indexdiv(a: object, b: object) -> E.PrimExpr:
    """Division of index expressions (TVM's indexdiv: floordiv, exact for non-negative ones)."""
    return floordiv(a, b)


def indexmod(a: object, b: object) -> E.PrimExpr:
    """Remainder of index expressions (TVM's indexmod: floormod)."""
    return floormod(a, b)


def _int_binary(cls, a, b, name):
    out = E.binary(cls, a, b, name)
    if not dtypes.is_int(out.dtype):
        raise DTypeError(f"te.{name} expects integer operands, got {out.dtype}")
    return out


def all(*conds: object) -> E.PrimExpr:  # noqa: A001 - TVM's name
    """Logical and of any number of bool expressions."""
    if not conds:
        return E.IntImm(1, "bool")
    out = E.as_bool(conds[0], "te.all")
    for c in conds[1:]:
        out = E.logical_and(out, c)
    return out


def any(*conds: object) -> E.PrimExpr:  # noqa: A001 - TVM's name
    """Logical or of any number of bool expressions."""
    if not conds:
        return E.IntImm(0, "bool")
    out = E.as_bool(conds[0], "te.any")
    for c in conds[1:]:
        out = E.logical_or(out, c)
    return out


# --------------------------------------------------------------------------------------
# Reducers


def reduce_identity(combiner: str, dtype: str) -> E.PrimExpr:
    """The identity element of a reducer: 0 for sum, -inf / +inf (or int limits) for max / min."""
    if combiner == "sum":
        return E.const(0, dtype)
    if combiner == "max":
        return E.const(dtypes.min_value(dtype), dtype)
    if combiner == "min":
        return E.const(dtypes.max_value(dtype), dtype)
    raise DSLError(f"unknown reducer {combiner!r}")


def _axis_tuple(axis: object) -> tuple:
    items: Sequence = axis if isinstance(axis, (list, tuple)) else [axis]
    out = []
    for a in items:
        if not isinstance(a, E.IterVar) or a.kind != "reduce":
            raise DSLError(
                f"reduction axis must come from te.reduce_axis(...), got {a!r}; "
                "create it with k = te.reduce_axis((0, K), name='k')"
            )
        out.append(a)
    if not out:
        raise DSLError("a reduction needs at least one axis")
    if len(set(map(id, out))) != len(out):
        raise DSLError("a reduction axis is listed twice")
    return tuple(out)


def _reducer(combiner: str):
    def fn(expr: object, axis: object = None, where: object = None, *rest) -> E.PrimExpr:
        # te.max(a, b) without axis is the elementwise maximum, as in TVM.
        if axis is not None and not isinstance(axis, (E.IterVar, list, tuple)):
            if where is not None or rest:
                raise DSLError(f"te.{combiner}(a, b) takes exactly two expressions")
            if combiner == "sum":
                raise DSLError(
                    f"te.sum: axis must be a te.reduce_axis (or a list of them), got {axis!r}; "
                    "write a + b for an elementwise sum"
                )
            cls = E.Max if combiner == "max" else E.Min
            return E.binary(cls, expr, axis, combiner)
        if axis is None:
            elementwise = (
                ""
                if combiner == "sum"
                else (f" (or two expressions for the elementwise {combiner})")
            )
            raise DSLError(
                f"te.{combiner} needs a reduction axis: te.{combiner}(expr, axis=k){elementwise}"
            )
        source = E.as_expr(expr)
        if dtypes.is_bool(source.dtype):
            raise DTypeError(f"te.{combiner} of bool values: cast them to an int dtype first")
        if any_reduce(source):
            raise DSLError("a reduction cannot contain another reduction; use two computes")
        cond = None if where is None else E.as_bool(where, f"te.{combiner}(where=)")
        return E.Reduce(combiner, source, _axis_tuple(axis), cond, source.dtype)

    fn.__name__ = combiner
    fn.__doc__ = (
        f"``te.{combiner}(expr, axis=k, where=cond)`` reduces over reduction axes; "
        f"``te.{combiner}(a, b)`` is elementwise."
        if combiner != "sum"
        else "``te.sum(expr, axis=k, where=cond)`` sums over reduction axes."
    )
    return fn


def any_reduce(e: E.PrimExpr) -> bool:
    """True if a Reduce node occurs anywhere in ``e``."""
    return builtins.any(isinstance(n, E.Reduce) for n in E.post_order(e))


sum = _reducer("sum")  # noqa: A001 - TVM's name
max = _reducer("max")  # noqa: A001
min = _reducer("min")  # noqa: A001


def max_value(dtype: str) -> E.PrimExpr:
    """The largest value of ``dtype`` (+inf for floats)."""
    d = dtypes.canonical(dtype)
    return E.const(dtypes.max_value(d), d)


def min_value(dtype: str) -> E.PrimExpr:
    """The smallest value of ``dtype`` (-inf for floats)."""
    d = dtypes.canonical(dtype)
    return E.const(dtypes.min_value(d), d)


def div(a: object, b: object) -> E.PrimExpr:
    """``a / b`` as C computes it (TVM's ``tir.div``): truncating on integers."""
    return E.binary(E.Div, a, b, "/")


def ceildiv(a: object, b: object) -> E.PrimExpr:
    """``ceil(a / b)`` of integers (TVM's ``tir.ceildiv``), as ``(a + b - 1) // b``."""
    return _int_binary(E.FloorDiv, E.as_expr(a) + (E.as_expr(b) - 1), b, "ceildiv")


def likely(cond: object) -> E.PrimExpr:
    """``cond`` itself: TVM's branch hint, which changes no result."""
    return E.as_expr(cond)


def add(lhs: object, rhs: object) -> E.PrimExpr:
    """``lhs + rhs`` of expressions (TVM's ``te.add``; ``topi.add`` takes tensors)."""
    return E.as_expr(lhs) + rhs


def subtract(lhs: object, rhs: object) -> E.PrimExpr:
    """``lhs - rhs`` of expressions (TVM's ``te.subtract``)."""
    return E.as_expr(lhs) - rhs


def multiply(lhs: object, rhs: object) -> E.PrimExpr:
    """``lhs * rhs`` of expressions (TVM's ``te.multiply``)."""
    return E.as_expr(lhs) * rhs
