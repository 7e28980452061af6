"""Elementwise unary operators: ``topi.exp``, ``topi.sigmoid``, ``topi.cast``, ``topi.clip``..."""

from __future__ import annotations

from collections.abc import Callable

from ..dsl import dtypes, expr as E, intrin, intrin_extra
from ..dsl.tensor import Tensor, compute
from ..errors import DSLError
from .tag import ELEMWISE
from .utils import check_tensor


def _require_float(x: Tensor, name: str) -> None:
    if not dtypes.is_float(x.dtype):
        raise DSLError(
            f"topi.{name} expects a float tensor, got {x.dtype} tensor {x.name!r}; "
            f"cast it first, e.g. topi.{name}(topi.cast({x.name}, 'float32'))"
        )


def _unary(name: str, fn: Callable, float_only: bool, doc: str) -> Callable[[Tensor], Tensor]:
    def op(x: Tensor) -> Tensor:
        check_tensor(x, f"topi.{name}: x")
        if float_only:
            _require_float(x, name)
        return compute(x.shape, lambda *i: fn(x[i]), name=f"T_{name}", tag=ELEMWISE)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


exp = _unary("exp", intrin.exp, True, "Elementwise e**x of a float tensor.")
log = _unary("log", intrin.log, True, "Elementwise natural logarithm of a float tensor.")
sqrt = _unary("sqrt", intrin.sqrt, True, "Elementwise square root of a float tensor.")
rsqrt = _unary("rsqrt", intrin.rsqrt, True, "Elementwise 1/sqrt(x) of a float tensor.")
tanh = _unary("tanh", intrin.tanh, True, "Elementwise hyperbolic tangent of a float tensor.")
sigmoid = _unary("sigmoid", intrin.sigmoid, True, "Elementwise 1/(1+exp(-x)) of a float tensor.")
erf = _unary("erf", intrin.erf, True, "Elementwise Gauss error function of a float tensor.")
floor = _unary("floor", intrin.floor, True, "Elementwise floor of a float tensor.")
ceil = _unary("ceil", intrin.ceil, True, "Elementwise ceiling of a float tensor.")
round = _unary(
    "round", intrin.round, True, "Elementwise rounding (half to even) of a float tensor."
)
tan = _unary("tan", intrin.tan, True, "Elementwise tangent of a float tensor.")
cos = _unary("cos", intrin.cos, True, "Elementwise cosine of a float tensor.")
cosh = _unary("cosh", intrin.cosh, True, "Elementwise hyperbolic cosine of a float tensor.")
sin = _unary("sin", intrin.sin, True, "Elementwise sine of a float tensor.")
sinh = _unary("sinh", intrin.sinh, True, "Elementwise hyperbolic sine of a float tensor.")
acos = _unary("acos", intrin.acos, True, "Elementwise arc cosine of a float tensor.")
acosh = _unary("acosh", intrin.acosh, True, "Elementwise inverse hyperbolic cosine.")
asin = _unary("asin", intrin.asin, True, "Elementwise arc sine of a float tensor.")
asinh = _unary("asinh", intrin.asinh, True, "Elementwise inverse hyperbolic sine.")
atan = _unary("atan", intrin.atan, True, "Elementwise arc tangent of a float tensor.")
atanh = _unary("atanh", intrin.atanh, True, "Elementwise inverse hyperbolic tangent.")
log2 = _unary("log2", intrin.log2, True, "Elementwise base-2 logarithm of a float tensor.")
log10 = _unary("log10", intrin.log10, True, "Elementwise base-10 logarithm of a float tensor.")
trunc = _unary("trunc", intrin.trunc, True, "Elementwise rounding toward zero of a float tensor.")
isnan = _unary("isnan", intrin_extra.isnan, False, "Elementwise NaN test (a bool tensor).")
isinf = _unary("isinf", intrin_extra.isinf, False, "Elementwise infinity test (a bool tensor).")
isfinite = _unary("isfinite", intrin_extra.isfinite, False, "Elementwise finiteness test (bool).")
bitwise_not = _unary("bitwise_not", intrin_extra.bitwise_not, False, "Elementwise ~x of integers.")
# TVM's fast approximations; ours are the exact functions, already vectorized
fast_exp = _unary("fast_exp", intrin.exp, True, "Elementwise e**x (the exact exp here).")
fast_tanh = _unary("fast_tanh", intrin.tanh, True, "Elementwise tanh (the exact tanh here).")
fast_erf = _unary("fast_erf", intrin.erf, True, "Elementwise erf (the exact erf here).")
abs = _unary("abs", intrin.abs, False, "Elementwise absolute value.")
negative = _unary("negative", lambda v: -v, False, "Elementwise negation.")
identity = _unary("identity", lambda v: v, False, "An elementwise copy of the tensor.")


def cast(x: Tensor, dtype: str) -> Tensor:
    """Elementwise conversion to ``dtype`` (float to int truncates toward zero)."""
    check_tensor(x, "topi.cast: x")
    dt = dtypes.canonical(dtype)
    return compute(x.shape, lambda *i: x[i].astype(dt), name="T_cast", tag=ELEMWISE)


def clip(x: Tensor, a_min: float, a_max: float) -> Tensor:
    """Elementwise clamp of ``x`` into ``[a_min, a_max]``."""
    check_tensor(x, "topi.clip: x")
    if a_min > a_max:
        raise DSLError(f"topi.clip: a_min={a_min} is larger than a_max={a_max}; swap them")
    lo, hi = E.const(a_min, x.dtype), E.const(a_max, x.dtype)
    return compute(
        x.shape, lambda *i: intrin.min(intrin.max(x[i], lo), hi), name="T_clip", tag=ELEMWISE
    )


def elemwise_sum(xs: list, name: str = "elemwise_sum") -> Tensor:
    """The elementwise sum of tensors of one shape and dtype (TVM's ``topi.elemwise_sum``)."""
    xs = list(xs)
    if not xs:
        raise DSLError("topi.elemwise_sum needs at least one tensor, e.g. [A, B]")
    for k, x in enumerate(xs):
        check_tensor(x, f"topi.elemwise_sum: xs[{k}]")
        if x.shape != xs[0].shape or x.dtype != xs[0].dtype:
            raise DSLError(
                f"topi.elemwise_sum: xs[{k}] is {x.dtype}{list(x.shape)}, xs[0] is "
                f"{xs[0].dtype}{list(xs[0].shape)}; all must match (broadcast with topi.add)"
            )

    def body(*i: E.Var) -> E.PrimExpr:
        total = xs[0][i]
        for x in xs[1:]:
            total = total + x[i]
        return total

    return compute(xs[0].shape, body, name=name, tag=ELEMWISE)
