"""CUDA C text of the intrinsics of ``dsl.intrin_extra`` and of the float functions
``dsl.intrin.FLOAT_UNARY`` gained after its first ten (the CUDA side of
``llvm_intrin_extra``, same semantics: numpy's)."""

from __future__ import annotations

from typing import Any

from ..dsl import dtypes, expr as E

#: (float32 name, fast float32 name, float64 name), as ``cuda_expr.MATH``
MATH = {
    "exp2": ("exp2f", "exp2f", "exp2"),
    "exp10": ("exp10f", "__exp10f", "exp10"),
    "log2": ("log2f", "__log2f", "log2"),
    "log10": ("log10f", "__log10f", "log10"),
    "log1p": ("log1pf", "log1pf", "log1p"),
    "sin": ("sinf", "__sinf", "sin"),
    "cos": ("cosf", "__cosf", "cos"),
    "tan": ("tanf", "__tanf", "tan"),
    "sinh": ("sinhf", "sinhf", "sinh"),
    "cosh": ("coshf", "coshf", "cosh"),
    "asin": ("asinf", "asinf", "asin"),
    "acos": ("acosf", "acosf", "acos"),
    "atan": ("atanf", "atanf", "atan"),
    "asinh": ("asinhf", "asinhf", "asinh"),
    "acosh": ("acoshf", "acoshf", "acosh"),
    "atanh": ("atanhf", "atanhf", "atanh"),
    "trunc": ("truncf", "truncf", "trunc"),
    "nearbyint": ("nearbyintf", "nearbyintf", "nearbyint"),
    "atan2": ("atan2f", "atan2f", "atan2"),
    "fmod": ("fmodf", "fmodf", "fmod"),
    "hypot": ("hypotf", "hypotf", "hypot"),
    "copysign": ("copysignf", "copysignf", "copysign"),
    "nextafter": ("nextafterf", "nextafterf", "nextafter"),
}

HELPERS = {
    "shl_": """template <typename T>
__device__ __forceinline__ T shl_(T a, T b) {
  // numpy's rule: a shift by a negative amount or by the width or more gives 0
  return ((unsigned long long)(long long)b < sizeof(T) * 8)
      ? (T)((unsigned long long)(long long)a << b) : T(0);
}""",
    "shr_": """template <typename T>
__device__ __forceinline__ T shr_(T a, T b) {
  // arithmetic; out of range, the sign (-1 or 0), as numpy
  return ((unsigned long long)(long long)b < sizeof(T) * 8)
      ? (T)(a >> b) : (a < T(0) ? T(-1) : T(0));
}""",
}

#: the other functions this module's text calls (names a buffer must not take)
CALLED = ("isnan", "isinf", "isfinite", "__popc", "__popcll", "__clz", "__clzll")
_UNSIGNED = {8: "unsigned char", 32: "unsigned int"}
_OPERATOR = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}


def call_text(printer: Any, e: E.Call, c_type: Any) -> str | None:
    """The text of ``e`` when it is one of ``intrin_extra``'s integer or classification
    intrinsics, else None (``printer``: the expression printer, for operands;
    ``c_type``: a dtype's C type)."""
    op = e.op
    if op in ("isnan", "isinf", "isfinite"):
        return f"{op}({printer._f(e.args[0])})"  # half: through float
    if op in _OPERATOR:
        a, b = (printer.expr(x) for x in e.args)
        return printer._wrap_small(f"({a} {_OPERATOR[op]} {b})", e.dtype)
    if op == "bitwise_not":
        return printer._wrap_small(f"(~{printer.expr(e.args[0])})", e.dtype)
    if op in ("shift_left", "shift_right"):
        helper = "shl_" if op == "shift_left" else "shr_"
        printer.helpers.add(helper)
        a, b = (printer.expr(x) for x in e.args)
        return f"{helper}<{c_type(e.dtype)}>({a}, {b})"
    x = e.args[0] if e.args else None
    if op == "popcount":
        bits = dtypes.bits(x.dtype)
        if bits == 64:
            count = f"__popcll((unsigned long long)({printer.expr(x)}))"
        else:  # the bits of the operand's own width (a negative int8 has 8 set, not 32)
            count = f"__popc((unsigned int)({_UNSIGNED[bits]})({printer.expr(x)}))"
        return f"(({c_type(e.dtype)}){count})"
    if op == "clz":
        bits = dtypes.bits(x.dtype)
        if bits == 64:
            return f"__clzll((long long)({printer.expr(x)}))"
        if bits == 32:
            return f"__clz((int)({printer.expr(x)}))"
        return f"(__clz((int)({_UNSIGNED[bits]})({printer.expr(x)})) - {32 - bits})"
    return None
