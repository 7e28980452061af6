"""CUDA C text of scalar expressions (the part of ``codegen.cuda_c`` below statements).

Everything is printed fully parenthesised, as TVM's CUDA printer does, so precedence is
never a question. Semantics follow ``dsl.expr``:

* ``/`` on integers truncates (C's ``/``); ``//`` and ``%`` floor. Where both operands are
  provably non-negative (loop indices, thread indices, sums and products of them) floor and
  truncation agree and plain ``/`` / ``%`` are printed; elsewhere the helpers
  ``floordiv_``/``floormod_`` (templates at the top of the source) are called. They also
  wrap ``INT_MIN // -1`` to ``INT_MIN`` as numpy does (C leaves it undefined). A divisor
  that is zero at run time gives an unspecified value on a GPU (no trap): the GPU emulator
  reports it.
* float max / min propagate NaN, as numpy's ``maximum`` / ``minimum`` and the CPU backend
  (CUDA's ``fmaxf`` returns the other operand): the helpers ``fmax_nan_`` / ``fmin_nan_``.
* float -> int casts truncate and saturate, NaN -> 0: the ``__float2int_rz`` family, which
  is what PTX's ``cvt.rzi`` does, spelled so the compiler cannot assume otherwise.
* ``fast_math`` (``tvm.build(..., fast_math=True)``) prints the float32 intrinsics with
  their fast hardware variants (``__expf``, ``__logf``, ``__powf``, ``__fdividef``) and the
  compilers get ``--use_fast_math``.
"""

from __future__ import annotations

import math
import struct

from ..dsl import dtypes, expr as E
from ..dsl.visitor import EXPR, Visitor
from ..errors import CodegenError
from ..ir import nodes as N
from . import cuda_intrin_extra
from .vector_form import HAND_BUILT_VECTOR

#: C type of each dtype.
C_TYPES = {
    "float32": "float",
    "float16": "__half",
    "float64": "double",
    "int32": "int",
    "int64": "long long",
    "int8": "signed char",
    "bool": "bool",
}

_BIN = {E.Add: "+", E.Sub: "-", E.Mul: "*"}
_CMP = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}

#: (float32 name, fast float32 name, float64 name); half is computed in float32
MATH = {
    "exp": ("expf", "__expf", "exp"),
    "log": ("logf", "__logf", "log"),
    "sqrt": ("sqrtf", "sqrtf", "sqrt"),
    "rsqrt": ("rsqrtf", "rsqrtf", "rsqrt"),
    "tanh": ("tanhf", "tanhf", "tanh"),
    "erf": ("erff", "erff", "erf"),
    "floor": ("floorf", "floorf", "floor"),
    "ceil": ("ceilf", "ceilf", "ceil"),
    "round": ("rintf", "rintf", "rint"),  # half to even, as numpy's round
    "abs": ("fabsf", "fabsf", "fabs"),
    "pow": ("powf", "__powf", "pow"),
    **cuda_intrin_extra.MATH,
}

#: Device helpers, printed at the top of a source that calls them.
HELPERS = {
    "floordiv_": """template <typename T>
__device__ __forceinline__ T floordiv_(T a, T b) {
  // floor division; INT_MIN // -1 wraps (two's complement) instead of being undefined
  if (b == T(-1)) return T(0) - a;
  T q = a / b;
  return (q * b != a && ((a < T(0)) != (b < T(0)))) ? q - T(1) : q;
}""",
    "floormod_": """template <typename T>
__device__ __forceinline__ T floormod_(T a, T b) {
  // floor modulo: the remainder has the sign of the divisor
  if (b == T(-1)) return T(0);
  T r = a % b;
  return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
}""",
    "truncdiv_": """template <typename T>
__device__ __forceinline__ T truncdiv_(T a, T b) {
  return b == T(-1) ? T(0) - a : a / b;  // INT_MIN / -1 wraps
}""",
    "truncmod_": """template <typename T>
__device__ __forceinline__ T truncmod_(T a, T b) {
  return b == T(-1) ? T(0) : a % b;
}""",
    "fmax_nan_": """template <typename T>
__device__ __forceinline__ T fmax_nan_(T a, T b) {
  // numpy's maximum: NaN where either operand is NaN (fmax returns the other operand)
  return (a != a || b != b) ? a + b : fmax(a, b);
}""",
    "fmin_nan_": """template <typename T>
__device__ __forceinline__ T fmin_nan_(T a, T b) {
  // numpy's minimum: NaN where either operand is NaN (fmin returns the other operand)
  return (a != a || b != b) ? a + b : fmin(a, b);
}""",
    **cuda_intrin_extra.HELPERS,
}


def c_type(dtype: str) -> str:
    """The C type of ``dtype``."""
    try:
        return C_TYPES[dtype]
    except KeyError:
        raise CodegenError(f"CUDA C has no type for dtype {dtype!r}") from None


def float_literal(value: float, dtype: str) -> str:
    """A C literal of exactly ``value`` rounded to ``dtype`` (inf/nan by bit pattern)."""
    if dtype == "float64":
        if math.isfinite(value):
            return repr(float(value))
        bits = struct.unpack("<q", struct.pack("<d", value))[0]
        return f"__longlong_as_double({bits}LL)"
    f32 = struct.unpack("<f", struct.pack("<f", value))[0] if math.isfinite(value) else value
    if math.isfinite(f32):
        text = f"{f32:.9g}"
        if not any(ch in text for ch in ".en"):
            text += ".0"
        text = f"{text}f"
    else:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        text = f"__int_as_float(0x{bits:08x})"
    return f"__float2half_rn({text})" if dtype == "float16" else text


class ExprPrinter(Visitor):
    """``expr_<Node>`` methods returning C text; needs ``name_of(var)`` and ``index_of``.

    A subclass supplies ``name_of`` (C name of a variable, or a literal such as
    ``((int)threadIdx.x)``), ``load_text`` (C text of a buffer read) and the set
    ``helpers`` that records which device helpers the text calls.
    """

    error_class = CodegenError
    fast_math = False

    def __init__(self) -> None:
        self.helpers: set[str] = set()
        self.nonneg: set = set()  # loop variables known to be >= 0
        self.uses_half = False

    def expr(self, e: E.PrimExpr) -> str:
        """C text of ``e``."""
        if e.dtype == "float16":
            self.uses_half = True
        return self.handler(EXPR, e)(e)

    # -- leaves -----------------------------------------------------------------------
    def expr_Var(self, e: E.Var) -> str:
        return self.name_of(e)

    def expr_IntImm(self, e: E.IntImm) -> str:
        if e.dtype == "bool":
            return "true" if e.value else "false"
        if e.dtype == "int64":
            return f"{e.value}LL" if e.value != -(2**63) else "(-9223372036854775807LL - 1)"
        if e.dtype == "int32" and e.value == -(2**31):
            return "(-2147483647 - 1)"
        if e.dtype == "int8":
            return f"((signed char){e.value})"
        return str(e.value)

    def expr_FloatImm(self, e: E.FloatImm) -> str:
        return float_literal(float(e.value), e.dtype)

    # -- arithmetic -------------------------------------------------------------------
    def _wrap_small(self, text: str, dtype: str) -> str:
        # C promotes int8 operands to int: bring the result back, wrapping as numpy does
        return f"((signed char){text})" if dtype == "int8" else text

    def _arith(self, e: E.BinaryOp, op: str) -> str:
        a, b = self.expr(e.a), self.expr(e.b)
        return self._wrap_small(f"({a} {op} {b})", e.dtype)

    def expr_Add(self, e):
        return self._arith(e, "+")

    def expr_Sub(self, e):
        return self._arith(e, "-")

    def expr_Mul(self, e):
        return self._arith(e, "*")

    def expr_Div(self, e):
        if dtypes.is_float(e.dtype):
            if self.fast_math and e.dtype == "float32":
                return f"__fdividef({self.expr(e.a)}, {self.expr(e.b)})"
            return f"({self.expr(e.a)} / {self.expr(e.b)})"
        return self._int_div(e, "/", "truncdiv_")

    def expr_Mod(self, e):
        if dtypes.is_float(e.dtype):
            fn = {"float32": "fmodf", "float64": "fmod"}.get(e.dtype, "fmodf")
            return self._via_float(e.dtype, f"{fn}({self._f(e.a)}, {self._f(e.b)})")
        return self._int_div(e, "%", "truncmod_")

    def expr_FloorDiv(self, e):
        if dtypes.is_float(e.dtype):
            fn = "floor" if e.dtype == "float64" else "floorf"
            return self._via_float(e.dtype, f"{fn}({self._f(e.a)} / {self._f(e.b)})")
        return self._int_div(e, "/", "floordiv_")

    def expr_FloorMod(self, e):
        if dtypes.is_float(e.dtype):
            fl = "floor" if e.dtype == "float64" else "floorf"
            a, b = self._f(e.a), self._f(e.b)
            return self._via_float(e.dtype, f"({a} - {fl}({a} / {b}) * {b})")
        return self._int_div(e, "%", "floormod_")

    def _int_div(self, e: E.BinaryOp, op: str, helper: str) -> str:
        a, b = self.expr(e.a), self.expr(e.b)
        divisor = e.b.value if isinstance(e.b, E.IntImm) else None
        if divisor is not None and divisor > 0 and self.is_nonneg(e.a):
            return self._wrap_small(f"({a} {op} {b})", e.dtype)  # floor == trunc here
        if divisor is not None and divisor > 0 and helper.startswith("trunc"):
            return self._wrap_small(f"({a} {op} {b})", e.dtype)  # C's own semantics
        self.helpers.add(helper)
        return f"{helper}<{c_type(e.dtype)}>({a}, {b})"

    def is_nonneg(self, e: E.PrimExpr) -> bool:
        """True when ``e`` is provably >= 0 (then floor and truncated division agree)."""
        if isinstance(e, E.IntImm):
            return e.value >= 0
        if isinstance(e, E.Var):
            return e in self.nonneg
        if isinstance(e, (E.Add, E.Mul, E.FloorDiv, E.FloorMod, E.Div, E.Mod)):
            return self.is_nonneg(e.a) and self.is_nonneg(e.b)
        if isinstance(e, E.Max):
            return self.is_nonneg(e.a) or self.is_nonneg(e.b)
        if isinstance(e, E.Min):
            return self.is_nonneg(e.a) and self.is_nonneg(e.b)
        if isinstance(e, E.Cast):
            return dtypes.is_int(e.value.dtype) and self.is_nonneg(e.value)
        return False

    def _minmax(self, e: E.BinaryOp, name: str) -> str:
        a, b = self.expr(e.a), self.expr(e.b)
        if not dtypes.is_float(e.dtype):
            return f"{name}({a}, {b})"
        # NaN-propagating, as numpy and the CPU backend (fmaxf would drop the NaN)
        helper = f"f{name}_nan_"
        self.helpers.add(helper)
        if e.dtype == "float16":
            return f"__float2half_rn({helper}<float>(__half2float({a}), __half2float({b})))"
        return f"{helper}<{c_type(e.dtype)}>({a}, {b})"

    def expr_Min(self, e):
        return self._minmax(e, "min")

    def expr_Max(self, e):
        return self._minmax(e, "max")

    # -- logic ------------------------------------------------------------------------
    def _cmp(self, e: E.CmpOp) -> str:
        return f"({self.expr(e.a)} {_CMP[type(e)]} {self.expr(e.b)})"

    expr_EQ = expr_NE = expr_LT = expr_LE = expr_GT = expr_GE = _cmp

    def expr_And(self, e):
        return f"({self.expr(e.a)} && {self.expr(e.b)})"

    def expr_Or(self, e):
        return f"({self.expr(e.a)} || {self.expr(e.b)})"

    def expr_Not(self, e):
        return f"(!{self.expr(e.a)})"

    def expr_Select(self, e):
        c, t, f = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
        return f"({c} ? {t} : {f})"

    # -- casts and calls --------------------------------------------------------------
    def expr_Cast(self, e: E.Cast) -> str:
        return self.cast_text(self.expr(e.value), e.value.dtype, e.dtype)

    def cast_text(self, v: str, src: str, dst: str) -> str:
        """C text converting ``v`` from ``src`` to ``dst`` with our cast semantics."""
        if src == dst:
            return v
        if dst == "float16":
            self.uses_half = True
            if src == "float32":
                return f"__float2half_rn({v})"
            return f"__float2half_rn((float)({self.cast_text(v, src, 'float32')}))"
        if src == "float16":
            return self.cast_text(f"__half2float({v})", "float32", dst)
        if dst == "bool":
            return f"({v} != {'0' if not dtypes.is_float(src) else '0.0'})"
        if dtypes.is_float(src) and dtypes.is_int(dst):
            f = "__float2" if src == "float32" else "__double2"
            if dst == "int64":
                return f"{f}ll_rz({v})"
            out = f"{f}int_rz({v})"
            if dst == "int8":  # saturate to the int8 range as well
                return f"((signed char)max(-128, min(127, {out})))"
            return out
        return f"(({c_type(dst)}){v})"

    def _f(self, e: E.PrimExpr) -> str:
        """``e`` as float32 text when it is half (half math is done in float)."""
        text = self.expr(e)
        return f"__half2float({text})" if e.dtype == "float16" else text

    def _via_float(self, dtype: str, text: str) -> str:
        return f"__float2half_rn({text})" if dtype == "float16" else text

    def expr_Call(self, e: E.Call) -> str:
        op = e.op
        if op == "if_then_else":
            c, t, f = (self.expr(a) for a in e.args)
            return f"({c} ? {t} : {f})"
        if op == "abs" and not dtypes.is_float(e.dtype):
            return f"{'llabs' if e.dtype == 'int64' else 'abs'}({self.expr(e.args[0])})"
        if op == "sigmoid":
            x = self._f(e.args[0])
            if e.dtype == "float64":
                return f"(1.0 / (1.0 + exp((0.0 - {x}))))"
            exp = "__expf" if self.fast_math else "expf"
            return self._via_float(e.dtype, f"(1.0f / (1.0f + {exp}((0.0f - {x}))))")
        extra = cuda_intrin_extra.call_text(self, e, c_type)
        if extra is not None:
            return extra
        if op not in MATH:
            raise CodegenError(f"CUDA C has no translation of the intrinsic {op!r}")
        f32, fast, f64 = MATH[op]
        name = f64 if e.dtype == "float64" else (fast if self.fast_math else f32)
        args = ", ".join(self._f(a) for a in e.args)
        return self._via_float(e.dtype, f"{name}({args})")

    def expr_BufferLoad(self, e: N.BufferLoad) -> str:
        return self.load_text(e)

    REFUSED_KINDS = {
        "Reduce": "reductions are lowered to loops before code generation",
        "TensorLoad": "tensor reads are lowered to buffer reads before code generation",
        "Ramp": HAND_BUILT_VECTOR,
        "Broadcast": HAND_BUILT_VECTOR,
    }
