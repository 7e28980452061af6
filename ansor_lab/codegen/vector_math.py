"""Math functions in LLVM: intrinsics, libm calls, and a vector exp (Cody-Waite range
reduction and a polynomial) where LLVM would call libm once per lane."""

from __future__ import annotations

import math

from llvmlite import ir

from ..dsl import dtypes, expr as E
from ..errors import CodegenError
from . import failures
from .llvm_intrin_extra import ExtraMath
from .llvm_types import I32, llvm_type, vname
from .vector_special import VectorSpecial

_FLOAT_SUFFIX = {"float16": "f16", "float32": "f32", "float64": "f64"}
_LIBM = {"float32": "f", "float64": ""}
_INTRINSIC = {
    "exp": "llvm.exp",
    "log": "llvm.log",
    "sqrt": "llvm.sqrt",
    "floor": "llvm.floor",
    "ceil": "llvm.ceil",
    "round": "llvm.roundeven",
    "abs": "llvm.fabs",
    "pow": "llvm.pow",
}
#: vector exp: clamp range, Cody-Waite ln2 split, polynomial for (exp(r) - 1 - r) / r^2
_VEXP = {
    "float16": {},
    "float32": dict(
        bits=32,
        bias=127,
        mant=23,
        lo=-103.97207708399179,
        hi=88.72283905206835,
        lo_wide=-110.0,  # 2^-159 * (1 + r): 0 once rounded
        hi_wide=89.0,  # 2^128 * e^0.28: inf
        log2e=1.4426950408889634,
        ln2_hi=0.693359375,
        ln2_lo=-2.12194440e-4,
        poly=(
            1.9875691500e-4,
            1.3981999507e-3,
            8.3334519073e-3,
            4.1665795894e-2,
            1.6666665459e-1,
            5.0000001201e-1,
        ),
    ),
    "float64": dict(
        bits=64,
        bias=1023,
        mant=52,
        lo=-745.1332191019412,
        hi=709.782712893384,
        lo_wide=-760.0,
        hi_wide=710.0,
        log2e=1.4426950408889634,
        ln2_hi=6.93145751953125e-1,
        ln2_lo=1.42860682030941723212e-6,
        poly=tuple(1.0 / math.factorial(m) for m in range(13, 1, -1)),
    ),
}


class VectorMath(VectorSpecial, ExtraMath):
    """Builder methods for calls: ``expr_Call``, the vector exp, erf, tanh and libm."""

    def intrinsic(self, name: str, dtype: str, n_args: int, lanes: int) -> ir.Function:
        t = self.ty(dtype, lanes)
        base = _FLOAT_SUFFIX.get(dtype) or f"i{dtypes.bits(dtype)}"
        suffix = f"v{lanes}{base}" if lanes else base
        return self.ctx.declare(f"{name}.{suffix}", t, [t] * n_args)

    def expr_Call(self, e: E.Call) -> ir.Value:
        if e.op == "if_then_else":
            return self._if_then_else(e)
        if e.op == failures.FAIL_OP:  # stop here (the program wrote why; see failures)
            self.fail_if(ir.Constant(ir.IntType(1), 1), failures.REPORTED)
            return ir.Constant(ir.IntType(32), 0)
        args = self.match(*[self.expr(a) for a in e.args])
        dt = e.dtype
        lanes = self.lanes_of(args[0])
        bld = self.b
        if e.op == "abs" and not dtypes.is_float(dt):
            zero = self.const(args[0].type, 0)
            neg = bld.sub(zero, args[0])
            return bld.select(bld.icmp_signed("<", args[0], zero), neg, args[0])
        extra = self.extra_call(e.op, args, dt, lanes)
        if extra is not None:
            return extra
        if e.op == "exp":
            return self._exp(args[0], dt, lanes)
        if e.op in _INTRINSIC:
            return bld.call(self.intrinsic(_INTRINSIC[e.op], dt, len(args), lanes), args)
        one = self.const(args[0].type, 1.0)
        if e.op == "rsqrt":
            sq = bld.call(self.intrinsic("llvm.sqrt", dt, 1, lanes), args)
            return bld.fdiv(one, sq, flags=self.flags)
        if e.op == "sigmoid":
            ex = self._exp(bld.fneg(args[0]), dt, lanes)
            return bld.fdiv(one, bld.fadd(one, ex, flags=self.flags), flags=self.flags)
        if e.op in ("tanh", "erf"):
            if not lanes:
                return self._libm(e.op, dt, args[0])
            if dt in ("float32", "float16"):  # polynomials on every lane at once
                x = args[0] if dt == "float32" else bld.fpext(args[0], self.ty("float32", lanes))
                fn = self._vector_erf if e.op == "erf" else self._vector_tanh
                y = fn(x, lanes)
                return y if dt == "float32" else bld.fptrunc(y, args[0].type)
            out = ir.Constant(args[0].type, ir.Undefined)
            for k in range(lanes):  # float64: libm per lane (it has no vector forms)
                x = bld.extract_element(args[0], ir.Constant(I32, k))
                out = bld.insert_element(out, self._libm(e.op, dt, x), ir.Constant(I32, k))
            return out
        raise CodegenError(f"the LLVM backend has no intrinsic {e.op!r}")

    def _exp(self, x: ir.Value, dt: str, lanes: int) -> ir.Value:
        """exp. Scalars call libm (``llvm.exp``); on vectors LLVM would also make one libm
        call per lane (90x slower than numpy on a vectorized exp), so vectors get Cody-Waite
        range reduction and a polynomial instead: exp(x) = 2^n * exp(r), |r| <= ln2/2,
        within 3 ulp of numpy for float32 (Cephes' expf polynomial) and 1 ulp for float64,
        with the same inf, 0, NaN and denormal results."""
        if not lanes or dt not in _VEXP:
            return self.b.call(self.intrinsic("llvm.exp", dt, 1, lanes), [x])
        if dt == "float16":  # through float32
            wide = self.b.fpext(x, self.ty("float32", lanes))
            return self.b.fptrunc(self._exp(wide, "float32", lanes), x.type)
        c = _VEXP[dt]
        b = self.b
        ft = x.type
        it = ir.VectorType(ir.IntType(c["bits"]), lanes)
        flags = ("contract",)  # never reassociate the reduction: it is exact by design

        def k(v):
            return self.const(ft, v)

        isnan = b.fcmp_unordered("uno", x, x)
        # with ldexp the range is clamped wider, so that the scaling itself overflows to
        # inf or underflows to 0 (no compare-and-select for those afterwards)
        lo, hi = (
            (c["lo_wide"], c["hi_wide"])
            if getattr(self.ctx, "scalef", False)
            else (
                c["lo"],
                c["hi"],
            )
        )
        xc = b.select(b.fcmp_ordered("<", x, k(lo)), k(lo), x)
        xc = b.select(b.fcmp_ordered(">", xc, k(hi)), k(hi), xc)
        xc = b.select(isnan, k(0.0), xc)
        floor = self.intrinsic("llvm.floor", dt, 1, lanes)
        n = b.call(floor, [b.fadd(b.fmul(xc, k(c["log2e"]), flags=flags), k(0.5), flags=flags)])
        r = b.fsub(xc, b.fmul(n, k(c["ln2_hi"]), flags=flags), flags=flags)
        r = b.fsub(r, b.fmul(n, k(c["ln2_lo"]), flags=flags), flags=flags)
        p = k(c["poly"][0])
        for coeff in c["poly"][1:]:
            p = b.fadd(b.fmul(p, r, flags=flags), k(coeff), flags=flags)
        y = b.fadd(b.fmul(p, b.fmul(r, r, flags=flags), flags=flags), r, flags=flags)
        y = b.fadd(y, k(1.0), flags=flags)
        ni = b.fptosi(n, it)
        if getattr(self.ctx, "scalef", False):  # AVX-512: ldexp is one vscalefps
            return self._exp_ldexp(x, xc, y, ni, isnan, c)
        # 2^n as two factors, each a valid normal number even when n is -150 or 128
        half = b.ashr(ni, self.const(it, 1))
        rest = b.sub(ni, half)
        bias, mant = self.const(it, c["bias"]), self.const(it, c["mant"])
        s1 = b.bitcast(b.shl(b.add(half, bias), mant), ft)
        s2 = b.bitcast(b.shl(b.add(rest, bias), mant), ft)
        y = b.fmul(b.fmul(y, s1), s2)
        y = b.select(b.fcmp_ordered(">", x, k(c["hi"])), k(float("inf")), y)
        y = b.select(b.fcmp_ordered("<", x, k(c["lo"])), k(0.0), y)
        return b.select(isnan, x, y)

    def _exp_ldexp(self, x, xc, y, ni, isnan, c) -> ir.Value:
        """``y * 2^ni`` by ``llvm.ldexp`` (on AVX-512 one ``vscalefps``: rounded once,
        denormal results included); ``xc`` was clamped to [lo_wide, hi_wide], where the
        scaling gives 0 and inf by itself; NaN lanes return ``x``."""
        b = self.b
        name = f"llvm.ldexp.{vname(y.type)}.{vname(ni.type)}"
        fn = self.ctx.declare(name, y.type, [y.type, ni.type])
        return b.select(isnan, x, b.call(fn, [y, ni]))

    def _libm(self, name: str, dt: str, x: ir.Value) -> ir.Value:
        work = "float32" if dt == "float16" else dt  # libm has no half functions
        if dt == "float16":
            x = self.b.fpext(x, ir.FloatType())
        fn = self.ctx.declare(name + _LIBM[work], llvm_type(work), [llvm_type(work)])
        out = self.b.call(fn, [x])
        return self.b.fptrunc(out, ir.HalfType()) if dt == "float16" else out
