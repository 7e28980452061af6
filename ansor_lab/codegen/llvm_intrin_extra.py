"""LLVM code for the intrinsics of ``dsl.intrin_extra`` and the float functions that
``dsl.intrin.FLOAT_UNARY`` gained after its first ten (sin, cos, log2, trunc...).

Float functions are LLVM intrinsics where LLVM has one (it calls libm for those the CPU
lacks, lane by lane on vectors) and libm calls otherwise; half precision is computed in
float32 and rounded once, as numpy does. Shifts test their amount: out of range, C and
LLVM leave the result undefined, numpy (our reference) gives 0 (or the sign for ``>>``).
"""

from __future__ import annotations

from llvmlite import ir

from .llvm_types import I32, llvm_type

#: float intrinsic -> the LLVM intrinsic computing it
LLVM_FLOAT = {
    "exp2": "llvm.exp2",
    "exp10": "llvm.exp10",
    "log2": "llvm.log2",
    "log10": "llvm.log10",
    "sin": "llvm.sin",
    "cos": "llvm.cos",
    "tan": "llvm.tan",
    "sinh": "llvm.sinh",
    "cosh": "llvm.cosh",
    "asin": "llvm.asin",
    "acos": "llvm.acos",
    "atan": "llvm.atan",
    "trunc": "llvm.trunc",
    "nearbyint": "llvm.nearbyint",
    "atan2": "llvm.atan2",
    "copysign": "llvm.copysign",
}
#: float intrinsic -> the C math function computing it (float32 name: + "f")
LIBM_FLOAT = {
    "log1p": "log1p",
    "asinh": "asinh",
    "acosh": "acosh",
    "atanh": "atanh",
    "hypot": "hypot",
    "nextafter": "nextafter",
}
#: every C math function generated code may call (LLVM lowers its intrinsics to these)
LIBM_NAMES = frozenset(
    {"exp", "log", "sqrt", "tanh", "erf", "pow", "exp2", "exp10", "log2", "log10", "fmod"}
    | {name.removeprefix("llvm.") for name in LLVM_FLOAT.values()}
    | set(LIBM_FLOAT.values())
)
_INT_BINARY = {"bitwise_and": "and_", "bitwise_or": "or_", "bitwise_xor": "xor"}


class ExtraMath:
    """Builder methods (mixed into the expression builder): ``extra_call``."""

    def extra_call(self, op: str, args: list, dt: str, lanes: int) -> ir.Value | None:
        """The value of intrinsic ``op`` on ``args``, or None when ``op`` is not one of
        this module's (``dt`` is the result's dtype; ``lanes`` 0 for scalars)."""
        if op in ("isnan", "isinf", "isfinite"):
            return self._classify(op, args[0])
        if op in LLVM_FLOAT or op in LIBM_FLOAT or op == "fmod":
            return self._float_math(op, args, dt, lanes)
        if op in _INT_BINARY:
            return getattr(self.b, _INT_BINARY[op])(args[0], args[1])
        if op == "bitwise_not":
            return self.b.xor(args[0], self.const(args[0].type, -1))
        if op in ("shift_left", "shift_right"):
            return self._shift(op == "shift_left", args[0], args[1])
        if op == "popcount":
            return self.b.call(self.intrinsic("llvm.ctpop", dt, 1, lanes), args)
        if op == "clz":
            return self._clz(args[0], lanes)
        return None

    def _float_math(self, op: str, args: list, dt: str, lanes: int) -> ir.Value:
        bld = self.b
        if dt == "float16":  # in float32, rounded once
            wide = [bld.fpext(a, self.ty("float32", lanes)) for a in args]
            return bld.fptrunc(self._float_math(op, wide, "float32", lanes), args[0].type)
        if op == "fmod":
            return bld.frem(args[0], args[1])  # C's fmod (LLVM scalarizes it on vectors)
        if op in LLVM_FLOAT:
            return bld.call(self.intrinsic(LLVM_FLOAT[op], dt, len(args), lanes), args)
        name = LIBM_FLOAT[op] + ("f" if dt == "float32" else "")
        fn = self.ctx.declare(name, llvm_type(dt), [llvm_type(dt)] * len(args))
        if not lanes:
            return bld.call(fn, args)
        out = ir.Constant(args[0].type, ir.Undefined)
        for k in range(lanes):  # libm has no vector forms: lane by lane
            lane = ir.Constant(I32, k)
            value = bld.call(fn, [bld.extract_element(a, lane) for a in args])
            out = bld.insert_element(out, value, lane)
        return out

    def _classify(self, op: str, x: ir.Value) -> ir.Value:
        bld = self.b
        if op == "isnan":
            return bld.fcmp_unordered("uno", x, x)
        dt = {ir.HalfType: "float16", ir.FloatType: "float32", ir.DoubleType: "float64"}
        scalar = x.type.element if isinstance(x.type, ir.VectorType) else x.type
        lanes = x.type.count if isinstance(x.type, ir.VectorType) else 0
        fabs = bld.call(self.intrinsic("llvm.fabs", dt[type(scalar)], 1, lanes), [x])
        inf = self.const(x.type, float("inf"))
        # ordered compares: false for NaN, which is neither infinite nor finite
        return bld.fcmp_ordered("==" if op == "isinf" else "<", fabs, inf)

    def _shift(self, left: bool, x: ir.Value, amount: ir.Value) -> ir.Value:
        bld = self.b
        width = x.type.element.width if isinstance(x.type, ir.VectorType) else x.type.width
        # unsigned compare: a negative amount is out of range too
        inside = bld.icmp_unsigned("<", amount, self.const(amount.type, width))
        if left:
            shifted = bld.shl(x, bld.select(inside, amount, self.const(amount.type, 0)))
            return bld.select(inside, shifted, self.const(x.type, 0))
        # out of range, >> gives the sign: the shift by width - 1
        return bld.ashr(x, bld.select(inside, amount, self.const(amount.type, width - 1)))

    def _clz(self, x: ir.Value, lanes: int) -> ir.Value:
        bld = self.b
        width = x.type.element.width if isinstance(x.type, ir.VectorType) else x.type.width
        i1 = ir.IntType(1)
        suffix = f"v{lanes}i{width}" if lanes else f"i{width}"
        fn = self.ctx.declare(f"llvm.ctlz.{suffix}", x.type, [x.type, i1])
        count = bld.call(fn, [x, ir.Constant(i1, 0)])  # 0 -> the width, not poison
        out = self.ty("int32", lanes)
        if width == 32:
            return count
        return bld.trunc(count, out) if width > 32 else bld.zext(count, out)
