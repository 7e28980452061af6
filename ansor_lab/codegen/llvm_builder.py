"""Emitting loop IR into LLVM IR (llvmlite): scalar code, SIMD loops, parallel loops.

One builder emits one LLVM function. Expression methods are type-generic: inside a
vectorized loop an expression that depends on the loop variable becomes a ``<lanes x T>``
vector and everything it meets is broadcast to match, so the same code serves scalar
and SIMD generation. Memory accesses inside a vectorized loop are analysed per access:
unit stride -> one vector load/store, invariant -> a scalar load broadcast, anything else
-> gather/scatter. Lane-dependent conditions become masks (masked loads and stores), so
guarded tails never touch memory outside the guard.

A parallel loop is outlined into its own function, run by libgomp's ``GOMP_parallel``
on a persistent thread pool; its free variables travel in a closure of i64 slots.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir

from ..dsl import dtypes
from ..dsl import expr as E
from ..errors import CodegenError
from ..ir import nodes as N
from ..ir.simplify import linear_form, simplify_expr
from ..ir.visitor import post_order_visit, walk_stmts
from . import transpose_copy

#: Buffers up to this size live on the stack; larger ones on an aligned heap.
STACK_LIMIT_BYTES = 16 * 1024
#: Loops marked "unrolled" with more trips than this stay loops (code size guard).
MAX_UNROLL = 512
#: Vectorized loops wider than this are emitted as scalar loops.
MAX_LANES = 256
#: A branch-free vectorized loop up to this width is one vector of its own width
MAX_WHOLE_LANES = 16
ALIGN = 64

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()

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
        log2e=1.4426950408889634,
        ln2_hi=6.93145751953125e-1,
        ln2_lo=1.42860682030941723212e-6,
        poly=tuple(1.0 / math.factorial(m) for m in range(13, 1, -1)),
    ),
}
_CMP = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}


def llvm_type(dtype: str) -> ir.Type:
    """The LLVM register type of a scalar dtype."""
    return {
        "bool": I1,
        "int8": I8,
        "int32": I32,
        "int64": I64,
        "float16": ir.HalfType(),
        "float32": ir.FloatType(),
        "float64": ir.DoubleType(),
    }[dtype]


def memory_type(dtype: str) -> ir.Type:
    """The LLVM type of a scalar dtype in memory (bool takes a byte, as in numpy)."""
    return I8 if dtype == "bool" else llvm_type(dtype)


@dataclass
class CodegenOptions:
    """Knobs of code generation."""

    num_threads: int = 1
    fast_math: bool = False  # all fast-math flags; by default only FMA contraction
    record_thread_ids: bool = False  # debug hook: remember which threads ran parallel code


@dataclass
class LoopReport:
    """What code generation did with one annotated loop."""

    name: str
    kind: str
    extent: int | None
    outcome: str
    detail: dict = field(default_factory=dict)

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.detail.items())
        ext = f" (extent {self.extent})" if self.extent is not None else ""
        return f"{self.name}{ext}: {self.kind} -> {self.outcome}" + (f" [{extra}]" if extra else "")


@dataclass
class _Vector:
    var: E.Var
    lanes: int
    base: ir.Value
    mask: ir.Value | None = None
    varying: set = field(default_factory=set)
    stats: dict = field(default_factory=dict)


class ModuleContext:
    """State shared by the builders of one LLVM module."""

    def __init__(self, module: ir.Module, options: CodegenOptions) -> None:
        self.module = module
        self.options = options
        self.reports: list[LoopReport] = []
        self.outlined = 0
        self.thread_ids: ir.GlobalVariable | None = None
        self.quiet = 0  # > 0 while emitting the 2nd, 3rd... copy of an unrolled body
        #: id(expr node) -> (node, its variables) for pure integer index arithmetic, or
        #: (node, None); the node is kept so that its id is not reused while we run
        self.index_vars: dict[int, tuple] = {}
        #: (id(buffer), id(indices)) -> (buffer, indices, flat index, its variables, linear form)
        self.flat_forms: dict[tuple[int, int], tuple] = {}
        #: (id(indices), id(vector var)) -> (indices, var, indices at lane 0)
        self.lane0: dict[tuple[int, int], tuple] = {}

    def report(self, r: LoopReport) -> None:
        """Record what happened to a loop (once, not once per unrolled copy)."""
        if not self.quiet:
            self.reports.append(r)

    def declare(self, name: str, ret: ir.Type, args: list) -> ir.Function:
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(ret, args), name=name)

    def thread_id_table(self) -> ir.GlobalVariable:
        if self.thread_ids is None:
            ty = ir.ArrayType(I32, 64)
            g = ir.GlobalVariable(self.module, ty, name="__ansor_thread_ids")
            g.initializer = ir.Constant(ty, None)
            g.type = PTR  # opaque, like allocas: element addresses come from a typed gep
            self.thread_ids = g
        return self.thread_ids


class FunctionBuilder:
    """Emits statements into one LLVM function."""

    def __init__(
        self, ctx: ModuleContext, fn: ir.Function, buffers: dict, vars: dict, on_error
    ) -> None:
        self.ctx = ctx
        self.fn = fn
        self.entry = fn.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(self.entry)
        self.b = ir.IRBuilder(fn.append_basic_block("body"))
        self.buffers = dict(buffers)
        self.vars = dict(vars)
        self.on_error = on_error  # called with a builder positioned in the failure block
        self.error_block: ir.Block | None = None
        self.vec: _Vector | None = None
        self.in_parallel = False
        #: loop variables with constant bounds: var -> (min, max), to prove accesses in bounds
        self.ranges: dict = {}
        #: buffers allocated by this function: private to the thread running it
        self.own: set = set()
        self.nsw = False
        self.flags = ("fast",) if ctx.options.fast_math else ("contract",)
        #: values of index arithmetic already emitted, one dict per region whose code
        #: dominates what follows it (see ``expr``); a loop body or an if branch is a new one
        self.memo: list[dict] = [{}]

    def finish(self, ret: ir.Value | None) -> None:
        """Close the body and link the entry block (allocas) to it."""
        if ret is None:
            self.b.ret_void()
        else:
            self.b.ret(ret)
        self.alloca_builder.branch(self.fn.blocks[1])

    # -- helpers ----------------------------------------------------------------------
    def fail_block(self) -> ir.Block:
        if self.error_block is None:
            self.error_block = self.fn.append_basic_block("fail")
            self.on_error(ir.IRBuilder(self.error_block))
        return self.error_block

    def lanes_of(self, v: ir.Value) -> int:
        return v.type.count if isinstance(v.type, ir.VectorType) else 0

    def ty(self, dtype: str, lanes: int = 0) -> ir.Type:
        t = llvm_type(dtype)
        return ir.VectorType(t, lanes) if lanes else t

    def const(self, ty: ir.Type, value) -> ir.Constant:
        if isinstance(ty, ir.VectorType):
            return ir.Constant(ty, [value] * ty.count)
        return ir.Constant(ty, value)

    def splat(self, v: ir.Value, lanes: int) -> ir.Value:
        if isinstance(v.type, ir.VectorType) or not lanes:
            return v
        vt = ir.VectorType(v.type, lanes)
        if isinstance(v, ir.Constant):
            return (
                ir.Constant(vt, [v.constant] * lanes)
                if v.constant is not None
                else self._splat_dynamic(v, vt)
            )
        return self._splat_dynamic(v, vt)

    def _splat_dynamic(self, v: ir.Value, vt: ir.VectorType) -> ir.Value:
        tmp = self.b.insert_element(ir.Constant(vt, ir.Undefined), v, ir.Constant(I32, 0))
        zeros = ir.Constant(ir.VectorType(I32, vt.count), [0] * vt.count)
        return self.b.shuffle_vector(tmp, ir.Constant(vt, ir.Undefined), zeros)

    def match(self, *vals: ir.Value) -> list[ir.Value]:
        lanes = max(self.lanes_of(v) for v in vals)
        return [self.splat(v, lanes) for v in vals]

    def intrinsic(self, name: str, dtype: str, n_args: int, lanes: int) -> ir.Function:
        t = self.ty(dtype, lanes)
        base = _FLOAT_SUFFIX.get(dtype) or f"i{dtypes.bits(dtype)}"
        suffix = f"v{lanes}{base}" if lanes else base
        return self.ctx.declare(f"{name}.{suffix}", t, [t] * n_args)

    def varying(self, e: E.PrimExpr) -> bool:
        """True inside a vectorized loop when ``e`` depends on the vector lanes."""
        if self.vec is None:
            return False
        return bool(E.free_vars(e) & self.vec.varying)

    # -- expressions ------------------------------------------------------------------
    def expr(self, e: E.PrimExpr) -> ir.Value:
        """The value of ``e`` at the current position.

        Integer index arithmetic is emitted once per region and reused: an unrolled body
        repeats the same index expressions (``i_0*128 + i_1*32`` in every copy) and
        building them again made code generation, not LLVM, the slowest part of a build
        (a matmul-exp-matmul kernel: 250,000 instructions). A value is reused only where
        it dominates: it was emitted on the straight-line part of the current region or an
        enclosing one (``region`` starts a new one for a loop body or an if branch), and
        the key holds what the variables are bound to now, so the copies of an unrolled
        loop, whose variable is a different constant in each, never share a value that
        depends on it."""
        key = self._memo_key(e)
        if key is None:
            return self._emit_expr(e)
        value = self._reusable(key)
        if value is None:
            value = self.memo[-1][key] = self._emit_expr(e)
        return value

    def _reusable(self, key: tuple) -> ir.Value | None:
        """The value made for ``key`` in this region or an enclosing one, if any."""
        for memo in reversed(self.memo):
            hit = memo.get(key)
            if hit is not None:
                return hit
        return None

    def _emit_expr(self, e: E.PrimExpr) -> ir.Value:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise CodegenError(f"the LLVM backend cannot generate {type(e).__name__}: {e}")
        return method(e)

    def _memo_key(self, e: E.PrimExpr) -> tuple | None:
        """A key for reusing ``e``'s value, or None for anything but index arithmetic."""
        if isinstance(e, E.Var):
            if self.vec is None or e is not self.vec.var:
                return None  # a bound variable costs nothing to emit
            return (id(e), self.vec.base, self.vec.lanes)
        variables = _index_vars(self.ctx, e)
        if variables is None:
            return None
        return (id(e), self.nsw) + tuple(self._binding(v) for v in variables)

    def _binding(self, v: E.Var):
        if self.vec is not None and v is self.vec.var:
            return (self.vec.base, self.vec.lanes)
        return self.vars.get(v)

    def region(self) -> _Region:
        """``with self.region():`` around code that does not dominate what follows it."""
        return _Region(self.memo)

    def e_Var(self, e: E.Var) -> ir.Value:
        if self.vec is not None and e is self.vec.var:
            lanes = self.vec.lanes
            vt = ir.VectorType(llvm_type(e.dtype), lanes)
            steps = ir.Constant(vt, list(range(lanes)))
            return self.b.add(self.splat(self.vec.base, lanes), steps)
        try:
            return self.vars[e]
        except KeyError:
            raise CodegenError(f"variable {e.name!r} is not bound") from None

    def e_IntImm(self, e: E.IntImm) -> ir.Value:
        return ir.Constant(llvm_type(e.dtype), int(e.value))

    def e_FloatImm(self, e: E.FloatImm) -> ir.Value:
        # Round once, with numpy, to the constant's own precision: that is what the
        # reference evaluator does, it maps overflow to inf (llvmlite's struct packing
        # would raise), and half constants need no fptrunc constexpr (LLVM rejects those).
        with np.errstate(over="ignore"):
            value = float(dtypes.to_numpy(e.dtype).type(e.value))
        return ir.Constant(llvm_type(e.dtype), value)

    def cast(self, v: ir.Value, src: str, dst: str) -> ir.Value:
        b = self.b
        if src == dst:
            return v
        lanes = self.lanes_of(v)
        st, dt = self.ty(src, lanes), self.ty(dst, lanes)
        if dst == "bool":
            if dtypes.is_float(src):
                return b.fcmp_unordered("!=", v, self.const(st, 0.0))
            return b.icmp_signed("!=", v, self.const(st, 0))
        if src == "bool":
            return b.uitofp(v, dt) if dtypes.is_float(dst) else b.zext(v, dt)
        if dtypes.is_int(src) and dtypes.is_int(dst):
            return b.sext(v, dt) if dtypes.bits(src) < dtypes.bits(dst) else b.trunc(v, dt)
        if dtypes.is_int(src):
            return b.sitofp(v, dt)
        if dtypes.is_int(dst):
            return b.fptosi(v, dt)
        return b.fpext(v, dt) if dtypes.bits(src) < dtypes.bits(dst) else b.fptrunc(v, dt)

    def e_Cast(self, e: E.Cast) -> ir.Value:
        return self.cast(self.expr(e.value), e.value.dtype, e.dtype)

    def _ab(self, e) -> tuple[ir.Value, ir.Value]:
        a, b = self.match(self.expr(e.a), self.expr(e.b))
        return a, b

    def _int_flags(self) -> list[str]:
        # index arithmetic cannot overflow in a valid program; data arithmetic wraps
        return ["nsw"] if self.nsw else []

    def e_Add(self, e):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            return self.b.fadd(a, b, flags=self.flags)
        return self._int_op("add", a, b)

    def e_Sub(self, e):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            return self.b.fsub(a, b, flags=self.flags)
        return self._int_op("sub", a, b)

    def e_Mul(self, e):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            return self.b.fmul(a, b, flags=self.flags)
        return self._int_op("mul", a, b)

    def _int_op(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        """An integer add/sub/mul, folded where an operand is a scalar constant that makes
        it one (the indices of an unrolled copy are constants: 0 + x, 2 * 16), so an
        unrolled body carries no arithmetic on constants."""
        ca, cb = _int_constant(a), _int_constant(b)
        if ca is not None and cb is not None:
            bits = a.type.width
            v = _INT_FOLD[op](ca, cb) & ((1 << bits) - 1)
            return ir.Constant(a.type, v - (1 << bits) if v >> (bits - 1) else v)
        if cb == 0 and op in ("add", "sub") or cb == 1 and op == "mul":
            return a
        if ca == 0 and op == "add" or ca == 1 and op == "mul":
            return b
        return getattr(self.b, op)(a, b, flags=self._int_flags())

    def e_Div(self, e):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            return self.b.fdiv(a, b, flags=self.flags)
        return self.b.sdiv(a, b)

    def e_Mod(self, e):
        a, b = self._ab(e)
        return self.b.frem(a, b) if dtypes.is_float(e.dtype) else self.b.srem(a, b)

    def _floor_fix(self, a, b):
        """(q, r, fix): truncated quotient/remainder and where floor semantics differ."""
        bld = self.b
        q, r = bld.sdiv(a, b), bld.srem(a, b)
        zero = self.const(a.type, 0)
        nonzero = bld.icmp_signed("!=", r, zero)
        signs = bld.icmp_signed("<", bld.xor(r, b), zero)
        return q, r, bld.and_(nonzero, signs)

    def e_FloorDiv(self, e):
        a, b = self._ab(e)
        bld = self.b
        if dtypes.is_float(e.dtype):
            fn = self.intrinsic("llvm.floor", e.dtype, 1, self.lanes_of(a))
            return bld.call(fn, [bld.fdiv(a, b)])
        if isinstance(e.b, E.IntImm) and e.b.value > 0 and e.b.value & (e.b.value - 1) == 0:
            # floor division by a power of two is an arithmetic shift
            shift = e.b.value.bit_length() - 1
            return bld.ashr(a, self.const(a.type, shift))
        q, _, fix = self._floor_fix(a, b)
        return bld.select(fix, bld.sub(q, self.const(a.type, 1)), q)

    def e_FloorMod(self, e):
        a, b = self._ab(e)
        bld = self.b
        if dtypes.is_float(e.dtype):
            fn = self.intrinsic("llvm.floor", e.dtype, 1, self.lanes_of(a))
            q = bld.call(fn, [bld.fdiv(a, b)])
            return bld.fsub(a, bld.fmul(q, b))
        if isinstance(e.b, E.IntImm) and e.b.value > 0 and e.b.value & (e.b.value - 1) == 0:
            return bld.and_(a, self.const(a.type, e.b.value - 1))
        _, r, fix = self._floor_fix(a, b)
        return bld.select(fix, bld.add(r, b), r)

    def _minmax(self, e, is_min: bool):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            name = "llvm.minimum" if is_min else "llvm.maximum"
            return self.b.call(self.intrinsic(name, e.dtype, 2, self.lanes_of(a)), [a, b])
        cmp = self.b.icmp_signed("<" if is_min else ">", a, b)
        return self.b.select(cmp, a, b)

    def e_Min(self, e):
        return self._minmax(e, True)

    def e_Max(self, e):
        return self._minmax(e, False)

    def _cmp(self, e):
        a, b = self._ab(e)
        op = _CMP[type(e)]
        dt = e.a.dtype
        if dtypes.is_float(dt):
            if op == "!=":
                return self.b.fcmp_unordered(op, a, b)
            return self.b.fcmp_ordered(op, a, b)
        if dt == "bool":
            return self.b.icmp_unsigned(op, a, b)
        return self.b.icmp_signed(op, a, b)

    e_EQ = e_NE = e_LT = e_LE = e_GT = e_GE = _cmp

    def e_And(self, e):
        a, b = self._ab(e)
        return self.b.and_(a, b)

    def e_Or(self, e):
        a, b = self._ab(e)
        return self.b.or_(a, b)

    def e_Not(self, e):
        a = self.expr(e.a)
        return self.b.xor(a, self.const(a.type, 1))

    def e_Select(self, e):
        c = self.expr(e.condition)
        t, f = self.match(self.expr(e.true_value), self.expr(e.false_value))
        lanes = self.lanes_of(t)
        if lanes and not self.lanes_of(c):
            c = self.splat(c, lanes)
        elif self.lanes_of(c) and not lanes:
            t, f = self.splat(t, self.lanes_of(c)), self.splat(f, self.lanes_of(c))
        return self.b.select(c, t, f)

    def e_Call(self, e: E.Call) -> ir.Value:
        if e.op == "if_then_else":
            return self._if_then_else(e)
        args = self.match(*[self.expr(a) for a in e.args])
        dt = e.dtype
        lanes = self.lanes_of(args[0])
        bld = self.b
        if e.op == "abs" and not dtypes.is_float(dt):
            zero = self.const(args[0].type, 0)
            neg = bld.sub(zero, args[0])
            return bld.select(bld.icmp_signed("<", args[0], zero), neg, args[0])
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
            out = ir.Constant(args[0].type, ir.Undefined)
            for k in range(lanes):  # libm has no vector forms: one call per lane
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
        xc = b.select(b.fcmp_ordered("<", x, k(c["lo"])), k(c["lo"]), x)
        xc = b.select(b.fcmp_ordered(">", xc, k(c["hi"])), k(c["hi"]), xc)
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
        # 2^n as two factors, each a valid normal number even when n is -150 or 128
        ni = b.fptosi(n, it)
        half = b.ashr(ni, self.const(it, 1))
        rest = b.sub(ni, half)
        bias, mant = self.const(it, c["bias"]), self.const(it, c["mant"])
        s1 = b.bitcast(b.shl(b.add(half, bias), mant), ft)
        s2 = b.bitcast(b.shl(b.add(rest, bias), mant), ft)
        y = b.fmul(b.fmul(y, s1), s2)
        y = b.select(b.fcmp_ordered(">", x, k(c["hi"])), k(float("inf")), y)
        y = b.select(b.fcmp_ordered("<", x, k(c["lo"])), k(0.0), y)
        return b.select(isnan, x, y)

    def _libm(self, name: str, dt: str, x: ir.Value) -> ir.Value:
        work = "float32" if dt == "float16" else dt  # libm has no half functions
        if dt == "float16":
            x = self.b.fpext(x, ir.FloatType())
        fn = self.ctx.declare(name + _LIBM[work], llvm_type(work), [llvm_type(work)])
        out = self.b.call(fn, [x])
        return self.b.fptrunc(out, ir.HalfType()) if dt == "float16" else out

    def _if_then_else(self, e: E.Call) -> ir.Value:
        cond_e, t_e, f_e = e.args
        if self.varying(cond_e):
            # lane-dependent: both branches under complementary masks, then a blend
            cond = self.expr(cond_e)
            saved = self.vec.mask
            self.vec.mask = cond if saved is None else self.b.and_(saved, cond)
            t = self.expr(t_e)
            notc = self.b.xor(cond, self.const(cond.type, 1))
            self.vec.mask = notc if saved is None else self.b.and_(saved, notc)
            f = self.expr(f_e)
            self.vec.mask = saved
            t, f = self.splat(t, self.vec.lanes), self.splat(f, self.vec.lanes)
            return self.b.select(cond, t, f)
        cond = self.expr(cond_e)
        lanes = self.vec.lanes if (self.varying(t_e) or self.varying(f_e)) else 0
        bld = self.b
        then_bb = self.fn.append_basic_block("ite.then")
        else_bb = self.fn.append_basic_block("ite.else")
        end_bb = self.fn.append_basic_block("ite.end")
        bld.cbranch(cond, then_bb, else_bb)
        bld.position_at_end(then_bb)
        with self.region():
            t = self.splat(self.expr(t_e), lanes)
        then_end = bld.block
        bld.branch(end_bb)
        bld.position_at_end(else_bb)
        with self.region():
            f = self.splat(self.expr(f_e), lanes)
        else_end = bld.block
        bld.branch(end_bb)
        bld.position_at_end(end_bb)
        phi = bld.phi(t.type)
        phi.add_incoming(t, then_end)
        phi.add_incoming(f, else_end)
        return phi

    # -- memory -----------------------------------------------------------------------
    def flat_index(self, buf: N.Buffer, indices: tuple) -> E.PrimExpr:
        terms = None
        for idx, stride in zip(indices, buf.strides):
            t = idx if stride == 1 else E.Mul(idx, E.IntImm(stride), idx.dtype)
            if t.dtype != "int32":
                t = E.Cast(t, "int64") if t.dtype != "int64" else t
            terms = t if terms is None else E.Add(terms, _match_int(t, terms), _wider(t, terms))
        return terms if terms is not None else E.IntImm(0)

    def address(self, buf: N.Buffer, indices: tuple, extra: ir.Value | None = None) -> ir.Value:
        """Scalar address of an element; the offset is computed in i64 so LLVM can widen
        induction variables and fold the arithmetic into addressing modes."""
        offset = extra
        saved, self.nsw = self.nsw, True
        try:
            for idx, stride in zip(indices, buf.strides):
                term = self._offset_term(idx, stride)
                offset = term if offset is None else self._int_op("add", offset, term)
        finally:
            self.nsw = saved
        if offset is None:
            offset = ir.Constant(I64, 0)
        return self.b.gep(self.base_pointer(buf), [offset], source_etype=memory_type(buf.dtype))

    def _offset_term(self, idx: E.PrimExpr, stride: int) -> ir.Value:
        """``idx * stride`` in i64 (nsw), reused like ``expr`` reuses index arithmetic."""
        inner = self._memo_key(idx)
        key = None if inner is None else ("term", stride) + inner
        hit = None if key is None else self._reusable(key)
        if hit is not None:
            return hit
        v = self._as_i64(self.expr(idx))
        term = v if stride == 1 else self._int_op("mul", v, ir.Constant(I64, stride))
        if key is not None:
            self.memo[-1][key] = term
        return term

    def base_pointer(self, buf: N.Buffer) -> ir.Value:
        ptr = self.buffers.get(buf)
        if ptr is None:
            raise CodegenError(f"buffer {buf.name!r} is not allocated here")
        return ptr

    def access(self, buf: N.Buffer, indices: tuple):
        """How an access is done: ("scalar", addr) | ("contiguous", addr) | ("gather", ptrs)."""
        if self.vec is None:
            return "scalar", self.address(buf, indices)
        flat, flat_vars, form = self._flat_facts(buf, indices)
        if not flat_vars & self.vec.varying:
            return "scalar", self.address(buf, indices)
        vec = self.vec
        if form is not None:
            terms, _ = form
            coeff = terms.get(vec.var, 0)
            rest_varying = any(
                t is not vec.var and bool(E.free_vars(t) & vec.varying) for t in terms
            )
            if coeff == 1 and not rest_varying:
                base_idx = self._lane0_indices(indices, vec.var)
                return "contiguous", self.address(buf, base_idx, self._as_i64(vec.base))
        idx = self.expr(flat)
        lanes = vec.lanes
        idx64 = self.b.sext(idx, ir.VectorType(I64, lanes)) if idx.type.element != I64 else idx
        size = dtypes.itemsize(buf.dtype)
        base = self.b.ptrtoint(self.base_pointer(buf), I64)
        offs = self.b.mul(idx64, self.const(idx64.type, size))
        addrs = self.b.add(self.splat(base, lanes), offs)
        return "gather", self.b.inttoptr(addrs, ir.VectorType(PTR, lanes))

    def _flat_facts(self, buf: N.Buffer, indices: tuple) -> tuple:
        """(flat index, its variables, its linear form) of an access, worked out once per
        access node: the copies of an unrolled body share them."""
        key = (id(buf), id(indices))
        facts = self.ctx.flat_forms.get(key)
        if facts is None:
            flat = self.flat_index(buf, indices)
            facts = (
                buf,
                indices,
                flat,
                frozenset(E.free_vars(flat)),
                linear_form(simplify_expr(flat)),
            )
            self.ctx.flat_forms[key] = facts
        return facts[2:]

    def _lane0_indices(self, indices: tuple, var: E.Var) -> tuple:
        """``indices`` with the vector variable at 0, made once per access node (the same
        node objects each time, so their arithmetic is reused across unrolled copies)."""
        key = (id(indices), id(var))
        hit = self.ctx.lane0.get(key)
        if hit is None:
            zero = {var: E.IntImm(0, var.dtype)}
            hit = (indices, var, tuple(E.substitute(i, zero) for i in indices))
            self.ctx.lane0[key] = hit
        return hit[2]

    def in_bounds(self, buf: N.Buffer, indices: tuple) -> bool:
        """True when every lane's element of this access provably lies inside ``buf``
        (from the constant bounds of the loops around it), whatever the guards say."""
        form = self._flat_facts(buf, indices)[2]
        if form is None:
            return False
        terms, lo = form
        hi = lo
        for term, coeff in terms.items():
            r = self.ranges.get(term) if isinstance(term, E.Var) else None
            if r is None:
                return False
            a, b = coeff * r[0], coeff * r[1]
            lo, hi = lo + min(a, b), hi + max(a, b)
        return 0 <= lo and hi < buf.size

    def _as_i64(self, v: ir.Value) -> ir.Value:
        if v.type == I64:
            return v
        c = _int_constant(v)
        return ir.Constant(I64, c) if c is not None else self.b.sext(v, I64)

    def _count(self, key: str) -> None:
        if self.vec is not None:
            self.vec.stats[key] = self.vec.stats.get(key, 0) + 1

    def e_BufferLoad(self, e: N.BufferLoad) -> ir.Value:
        saved, self.nsw = self.nsw, False
        try:
            return self._load(e)
        finally:
            self.nsw = saved

    def _load(self, e: N.BufferLoad) -> ir.Value:
        buf = e.buffer
        mt = memory_type(buf.dtype)
        align = dtypes.itemsize(buf.dtype)
        how, addr = self.access(buf, e.indices)
        if how == "scalar":
            self._count("scalar_loads")
            if (
                self.vec is not None
                and self.vec.mask is not None
                and not self.in_bounds(buf, e.indices)
            ):
                # a lane-invariant load under a lane-dependent guard is valid only when some
                # lane is on (a row past the end of a non-divisible tile, say); otherwise
                # read element 0 instead, which always exists, and is never used
                addr = self.b.select(self._any_lane(), addr, self.base_pointer(buf))
            v = self.b.load(addr, typ=mt, align=align)
        else:
            lanes = self.vec.lanes
            vt = ir.VectorType(mt, lanes)
            mask = self.vec.mask
            passthru = ir.Constant(vt, None)
            if how == "contiguous" and mask is None:
                self._count("vector_loads")
                v = self.b.load(addr, typ=vt, align=align)
            elif how == "contiguous" and self.in_bounds(buf, e.indices):
                # the guard only hides lanes whose elements exist: read them all (cheaper,
                # and a plain load of a local tile lets LLVM keep it in registers)
                self._count("vector_loads")
                v = self.b.load(addr, typ=vt, align=align)
            elif how == "contiguous":
                self._count("masked_loads")
                fn = self.ctx.declare(
                    f"llvm.masked.load.{_vname(vt)}.p0",
                    vt,
                    [PTR, I32, ir.VectorType(I1, lanes), vt],
                )
                v = self.b.call(fn, [addr, ir.Constant(I32, align), mask, passthru])
            else:
                self._count("gathers")
                m = mask if mask is not None else self.const(ir.VectorType(I1, lanes), 1)
                fn = self.ctx.declare(
                    f"llvm.masked.gather.{_vname(vt)}.v{lanes}p0",
                    vt,
                    [ir.VectorType(PTR, lanes), I32, ir.VectorType(I1, lanes), vt],
                )
                v = self.b.call(fn, [addr, ir.Constant(I32, align), m, passthru])
        if buf.dtype == "bool":
            return self.b.icmp_unsigned("!=", v, self.const(v.type, 0))
        return v

    def s_BufferStore(self, s: N.BufferStore) -> None:
        buf = s.buffer
        value = self.expr(s.value)
        align = dtypes.itemsize(buf.dtype)
        how, addr = self.access(buf, s.indices)
        if how == "scalar" and not self.lanes_of(value):
            if self.vec is not None and self.vec.mask is not None:
                # a lane-invariant store under a lane-dependent guard: store if any lane is on
                self._store_if_any(value, addr, buf, align)
                return
            self._count("scalar_stores")
            self.b.store(self._to_memory(value, buf), addr, align=align)
            return
        lanes = self.vec.lanes
        value = self._to_memory(self.splat(value, lanes), buf)
        vt = value.type
        mask = self.vec.mask
        if how == "contiguous" and mask is None:
            self._count("vector_stores")
            self.b.store(value, addr, align=align)
        elif how == "contiguous" and buf in self.own and self.in_bounds(buf, s.indices):
            # a buffer private to this thread, every lane's element exists: blend the new
            # lanes into the old vector and store it whole (SROA can then promote a
            # register tile, and AVX-512 folds the blend into masked arithmetic)
            self._count("blend_stores")
            old = self.b.load(addr, typ=vt, align=align)
            self.b.store(self.b.select(mask, value, old), addr, align=align)
        elif how == "contiguous":
            self._count("masked_stores")
            fn = self.ctx.declare(
                f"llvm.masked.store.{_vname(vt)}.p0",
                ir.VoidType(),
                [vt, PTR, I32, ir.VectorType(I1, lanes)],
            )
            self.b.call(fn, [value, addr, ir.Constant(I32, align), mask])
        else:
            self._count("scatters")
            if how == "scalar":  # every lane writes one address: the last lane wins
                ptr = self.b.ptrtoint(addr, I64)
                addr = self.b.inttoptr(self.splat(ptr, lanes), ir.VectorType(PTR, lanes))
            m = mask if mask is not None else self.const(ir.VectorType(I1, lanes), 1)
            fn = self.ctx.declare(
                f"llvm.masked.scatter.{_vname(vt)}.v{lanes}p0",
                ir.VoidType(),
                [vt, ir.VectorType(PTR, lanes), I32, ir.VectorType(I1, lanes)],
            )
            self.b.call(fn, [value, addr, ir.Constant(I32, align), m])

    def _any_lane(self) -> ir.Value:
        """i1: is any lane of the current mask on?"""
        lanes = self.vec.lanes
        bits = self.b.bitcast(self.vec.mask, ir.IntType(lanes))
        return self.b.icmp_unsigned("!=", bits, ir.Constant(ir.IntType(lanes), 0))

    def _store_if_any(self, value, addr, buf, align) -> None:
        anyon = self._any_lane()
        with self.b.if_then(anyon):
            self.b.store(self._to_memory(value, buf), addr, align=align)

    def _to_memory(self, value: ir.Value, buf: N.Buffer) -> ir.Value:
        if buf.dtype == "bool":
            lanes = self.lanes_of(value)
            return self.b.zext(value, ir.VectorType(I8, lanes) if lanes else I8)
        return value

    # -- statements -------------------------------------------------------------------
    def stmt(self, s: N.Stmt) -> None:
        method = getattr(self, "s_" + type(s).__name__, None)
        if method is None:
            raise CodegenError(f"the LLVM backend cannot generate {type(s).__name__}")
        method(s)

    def s_SeqStmt(self, s: N.SeqStmt) -> None:
        for item in s.seq:
            self.stmt(item)

    def s_Block(self, s: N.Block) -> None:
        self.stmt(s.body)

    def s_Evaluate(self, s: N.Evaluate) -> None:
        self.expr(s.value)

    def s_LetStmt(self, s: N.LetStmt) -> None:
        value = self.expr(s.value)
        self.vars[s.var] = value
        if self.vec is not None and self.lanes_of(value):
            self.vec.varying.add(s.var)
        self.stmt(s.body)
        del self.vars[s.var]
        if self.vec is not None:
            self.vec.varying.discard(s.var)

    def s_IfThenElse(self, s: N.IfThenElse) -> None:
        if self.varying(s.condition):
            cond = self.expr(s.condition)
            saved = self.vec.mask
            self.vec.mask = cond if saved is None else self.b.and_(saved, cond)
            self.stmt(s.then_case)
            if s.else_case is not None:
                notc = self.b.xor(cond, self.const(cond.type, 1))
                self.vec.mask = notc if saved is None else self.b.and_(saved, notc)
                self.stmt(s.else_case)
            self.vec.mask = saved
            return
        cond = self.expr(s.condition)
        bld = self.b
        then_bb = self.fn.append_basic_block("if.then")
        end_bb = self.fn.append_basic_block("if.end")
        else_bb = self.fn.append_basic_block("if.else") if s.else_case is not None else end_bb
        bld.cbranch(cond, then_bb, else_bb)
        bld.position_at_end(then_bb)
        with self.region():
            self.stmt(s.then_case)
        bld.branch(end_bb)
        if s.else_case is not None:
            bld.position_at_end(else_bb)
            with self.region():
                self.stmt(s.else_case)
            bld.branch(end_bb)
        bld.position_at_end(end_bb)

    def s_Allocate(self, s: N.Allocate) -> None:
        buf = s.buffer
        etype = memory_type(buf.dtype)
        heap = buf.nbytes > STACK_LIMIT_BYTES
        if not heap:
            # allocas live in the entry block so loops do not grow the stack
            ptr = self.alloca_builder.alloca(etype, size=buf.size, name=buf.name)
            ptr.align = ALIGN
            ptr.type = PTR  # an opaque pointer, like the arguments (vector accesses use it)
        else:
            size = -(-buf.nbytes // ALIGN) * ALIGN
            alloc = self.ctx.declare("aligned_alloc", PTR, [I64, I64])
            ptr = self.b.call(
                alloc, [ir.Constant(I64, ALIGN), ir.Constant(I64, size)], name=buf.name
            )
            ok = self.fn.append_basic_block(f"alloc.{buf.name}.ok")
            isnull = self.b.icmp_unsigned("==", ptr, ir.Constant(PTR, None))
            self.b.cbranch(isnull, self.fail_block(), ok)
            self.b.position_at_end(ok)
        self.buffers[buf] = ptr
        self.own.add(buf)
        self.stmt(s.body)
        del self.buffers[buf]
        self.own.discard(buf)
        if heap:
            self.b.call(self.ctx.declare("free", ir.VoidType(), [PTR]), [ptr])

    def s_For(self, s: N.For) -> None:
        if s.kind == "thread_binding":
            raise CodegenError(
                f"loop {s.loop_var.name!r} is bound to {s.thread_tag}; the LLVM (CPU) backend "
                "has no GPU threads: build with target='cuda' or remove the bind"
            )
        extent = _const(s.extent)
        if s.kind in ("serial", "unrolled") and self.vec is None:
            copy = transpose_copy.match(s, self.flat_index)
            if copy is not None:  # a layout-changing copy: rows in, shuffles, columns out
                transpose_copy.emit(self, copy, memory_type)
                self.ctx.report(
                    LoopReport(
                        copy.vector.loop_var.name,
                        "vectorized",
                        copy.lanes,
                        f"transposed copy {copy.lanes}x{copy.lanes}",
                        {
                            "collapsed": "*".join(
                                lp.loop_var.name for lp in reversed(copy.collapsed)
                            ),
                            "blocks": copy.extent // copy.lanes,
                        },
                    )
                )
                return
        if s.kind == "vectorized" and self.vec is None:
            reason = _not_vectorizable(s, extent)
            if reason is None:
                self.vector_loop(s, extent)
                return
            self.ctx.report(
                LoopReport(s.loop_var.name, "vectorized", extent, f"scalar loop ({reason})")
            )
        if s.kind == "parallel" and not self.in_parallel and self.vec is None:
            if self.ctx.options.num_threads > 1 or self.ctx.options.record_thread_ids:
                self.parallel_loop(s)
                return
            self.ctx.report(LoopReport(s.loop_var.name, "parallel", extent, "serial (one thread)"))
        if (
            s.kind == "unrolled"
            and extent is not None
            and _const(s.min) is not None
            and extent <= MAX_UNROLL
        ):
            self.ctx.report(LoopReport(s.loop_var.name, "unrolled", extent, "unrolled"))
            vt = llvm_type(s.loop_var.dtype)
            quieted = False
            try:
                for k in range(extent):
                    if k == 1:
                        self.ctx.quiet += 1
                        quieted = True
                    self.vars[s.loop_var] = ir.Constant(vt, _const(s.min) + k)
                    self.ranges[s.loop_var] = (_const(s.min) + k, _const(s.min) + k)
                    self.stmt(s.body)
            finally:
                if quieted:
                    self.ctx.quiet -= 1
            self.vars.pop(s.loop_var, None)
            self.ranges.pop(s.loop_var, None)
            return
        if self.vec is not None:
            raise CodegenError("internal: a loop inside a vectorized loop body")
        self.serial_loop(s)

    def serial_loop(self, s: N.For, lo: ir.Value | None = None, hi: ir.Value | None = None):
        bld = self.b
        vt = llvm_type(s.loop_var.dtype)
        if lo is None:
            lo = self.expr(s.min)
            hi = self._int_op("add", lo, self.expr(s.extent))
        pre = bld.block
        head = self.fn.append_basic_block(f"for.{s.loop_var.name}")
        body = self.fn.append_basic_block(f"for.{s.loop_var.name}.body")
        end = self.fn.append_basic_block(f"for.{s.loop_var.name}.end")
        bld.branch(head)
        bld.position_at_end(head)
        phi = bld.phi(vt, name=s.loop_var.name)
        phi.add_incoming(lo, pre)
        bld.cbranch(bld.icmp_signed("<", phi, hi), body, end)
        bld.position_at_end(body)
        self.vars[s.loop_var] = phi
        bounds = _bounds(s)
        if bounds is not None:
            self.ranges[s.loop_var] = bounds
        with self.region():
            self.stmt(s.body)
        nxt = bld.add(phi, ir.Constant(vt, 1), flags=["nsw"])
        phi.add_incoming(nxt, bld.block)
        bld.branch(head)
        bld.position_at_end(end)
        del self.vars[s.loop_var]
        self.ranges.pop(s.loop_var, None)

    def vector_loop(self, s: N.For, lanes: int) -> None:
        """Emit the body once per power-of-two chunk of the lanes (48 = 32 + 16; the loop
        report then counts accesses over all chunks). The lanes are independent, so this is
        the same program; but a mask of a width like <48 x i1> that lives across blocks (a
        loop-invariant guard of a non-divisible tile) makes LLVM's x86 backend scalarize
        every select and masked access that uses it (25x slower).

        A short loop without any guard or branch is one vector of its own width instead
        (``_vector_chunks``): a <7 x float> row of a 7x7 feature map stays in one
        register, where three chunks (4 + 2 + 1) made a convolution 2.5x slower."""
        base = self.expr(s.min)
        total: dict = {}
        chunks = _vector_chunks(lanes, s.body)
        for offset, n in chunks:
            start = base if offset == 0 else self.b.add(base, ir.Constant(base.type, offset))
            self.vec = _Vector(s.loop_var, n, start, None, {s.loop_var})
            lo = _const(s.min)
            if lo is not None:
                self.ranges[s.loop_var] = (lo + offset, lo + offset + n - 1)
            try:
                self.stmt(s.body)
            finally:
                stats, self.vec = self.vec.stats, None
                self.ranges.pop(s.loop_var, None)
            for key, count in stats.items():  # summed over chunks
                total[key] = total.get(key, 0) + count
        detail = dict(sorted(total.items()))
        if len(chunks) > 1:
            detail["chunks"] = "+".join(str(n) for _, n in chunks)
        self.ctx.report(LoopReport(s.loop_var.name, "vectorized", lanes, f"SIMD x{lanes}", detail))

    # -- parallel loops ---------------------------------------------------------------
    def parallel_loop(self, s: N.For) -> None:
        """Outline the loop body and run its iterations on libgomp's thread pool."""
        ctx = self.ctx
        free_vars, used_buffers = _free_values(s, self.buffers)
        slots = (
            [("err", None), ("next", None)]
            + [("var", v) for v in free_vars]
            + [("buf", b) for b in used_buffers]
        )
        closure = self.alloca_builder.alloca(I64, size=len(slots), name="closure")
        closure.type = PTR
        for k, (kind, item) in enumerate(slots):
            if kind in ("err", "next"):
                value = ir.Constant(I64, 0)
            elif kind == "var":
                value = _to_slot(self.b, self.vars[item])
            else:
                value = self.b.ptrtoint(self.buffers[item], I64)
            slot = self.b.gep(closure, [ir.Constant(I32, k)], source_etype=I64)
            self.b.store(value, slot)
        ctx.outlined += 1
        name = f"{self.fn.name}__par{ctx.outlined}"
        outlined = ir.Function(ctx.module, ir.FunctionType(ir.VoidType(), [PTR]), name=name)
        outlined.attributes.add("nounwind")
        self._emit_outlined(outlined, s, slots)
        gomp = ctx.declare("GOMP_parallel", ir.VoidType(), [PTR, PTR, I32, I32])
        self.b.call(
            gomp,
            [outlined, closure, ir.Constant(I32, ctx.options.num_threads), ir.Constant(I32, 0)],
        )
        err_slot = self.b.gep(closure, [ir.Constant(I32, 0)], source_etype=I64)
        failed = self.b.icmp_signed("!=", self.b.load(err_slot, typ=I64), ir.Constant(I64, 0))
        ok = self.fn.append_basic_block("par.ok")
        self.b.cbranch(failed, self.fail_block(), ok)
        self.b.position_at_end(ok)
        ctx.report(
            LoopReport(
                s.loop_var.name,
                "parallel",
                _const(s.extent),
                f"{ctx.options.num_threads} threads (libgomp)",
            )
        )

    def _emit_outlined(self, fn: ir.Function, s: N.For, slots: list) -> None:
        """The outlined function unpacks the closure and calls ``<fn>_body``, which runs
        this thread's share of the loop. The body takes the buffers as ``noalias``
        arguments: pointers read back from the closure would carry no aliasing facts, and
        LLVM could then keep no accumulator in a register across a loop (every store to
        the output might change an input).

        Iterations are handed out dynamically, in chunks of about extent / (8 x threads)
        taken from a shared counter (one atomic add per chunk): on a machine shared with
        other jobs a thread that is descheduled no longer holds up its fixed half of the
        loop while the other thread idles at the barrier."""
        ctx = self.ctx
        bufs = [item for kind, item in slots if kind == "buf"]
        vars_ = [item for kind, item in slots if kind == "var"]
        var_types = [llvm_type(v.dtype) for v in vars_]
        body_ty = ir.FunctionType(I32, [PTR, I32] + [PTR] * len(bufs) + var_types)
        body = ir.Function(ctx.module, body_ty, name=fn.name + "_body")
        body.attributes.add("nounwind")
        buf_args = body.args[2 : 2 + len(bufs)]
        for a, b in zip(buf_args, bufs):
            a.name = b.name
            a.add_attribute("noalias")
        var_args = body.args[2 + len(bufs) :]
        for a, v in zip(var_args, vars_):
            a.name = v.name
        fb = FunctionBuilder(
            ctx,
            body,
            dict(zip(bufs, buf_args)),
            dict(zip(vars_, var_args)),
            lambda b: b.ret(ir.Constant(I32, -1)),
        )
        fb.in_parallel = True
        fb.ranges = dict(self.ranges)
        bld = fb.b
        lo = fb._as_i64(fb.expr(s.min))
        ext = fb._as_i64(fb.expr(s.extent))
        n64 = bld.sext(body.args[1], I64)
        per = bld.sdiv(ext, bld.mul(n64, ir.Constant(I64, 8)))
        one = ir.Constant(I64, 1)
        chunk = bld.select(bld.icmp_signed("<", per, one), one, per)
        grab = body.append_basic_block("par.grab")
        work = body.append_basic_block("par.work")
        done = body.append_basic_block("par.done")
        bld.branch(grab)
        bld.position_at_end(grab)
        k = bld.atomic_rmw("add", body.args[0], chunk, "monotonic")
        bld.cbranch(bld.icmp_signed("<", k, ext), work, done)
        bld.position_at_end(work)
        end = bld.add(k, chunk)
        end = bld.select(bld.icmp_signed(">", end, ext), ext, end)
        start, stop = bld.add(lo, k), bld.add(lo, end)
        vt = llvm_type(s.loop_var.dtype)
        if vt != I64:
            start, stop = bld.trunc(start, vt), bld.trunc(stop, vt)
        fb.serial_loop(s, start, stop)
        bld.branch(grab)
        bld.position_at_end(done)
        fb.finish(ir.Constant(I32, 0))

        arg = fn.args[0]
        bld = ir.IRBuilder(fn.append_basic_block("entry"))
        values = []
        for k, (kind, item) in enumerate(slots):
            if kind in ("err", "next"):
                continue
            slot = bld.gep(arg, [ir.Constant(I32, k)], source_etype=I64)
            raw = bld.load(slot, typ=I64)
            if kind == "var":
                values.append(_from_slot(bld, raw, llvm_type(item.dtype)))
            else:
                values.append(bld.inttoptr(raw, PTR))
        tid = bld.call(ctx.declare("omp_get_thread_num", I32, []), [])
        nth = bld.call(ctx.declare("omp_get_num_threads", I32, []), [])
        if ctx.options.record_thread_ids:
            table = ctx.thread_id_table()
            idx = bld.and_(tid, ir.Constant(I32, 63))
            cell = bld.gep(table, [idx], source_etype=I32)
            bld.store(ir.Constant(I32, 1), cell)
        bufv = values[len(vars_) :]
        varv = values[: len(vars_)]
        counter = bld.gep(arg, [ir.Constant(I32, 1)], source_etype=I64)
        rc = bld.call(body, [counter, nth] + bufv + varv)
        with bld.if_then(bld.icmp_signed("!=", rc, ir.Constant(I32, 0))):
            slot = bld.gep(arg, [ir.Constant(I32, 0)], source_etype=I64)
            bld.store(ir.Constant(I64, 1), slot)
        bld.ret_void()


def _to_slot(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """A scalar as the i64 of a closure slot (floats by their bits)."""
    t = v.type
    if isinstance(t, (ir.HalfType, ir.FloatType, ir.DoubleType)):
        bits = {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(t)]
        v = b.bitcast(v, ir.IntType(bits))
        return v if bits == 64 else b.zext(v, I64)
    if t == I64:
        return v
    return b.zext(v, I64) if t == I1 else b.sext(v, I64)


def _from_slot(b: ir.IRBuilder, raw: ir.Value, t: ir.Type) -> ir.Value:
    """The inverse of ``_to_slot``."""
    if isinstance(t, (ir.HalfType, ir.FloatType, ir.DoubleType)):
        bits = {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(t)]
        v = raw if bits == 64 else b.trunc(raw, ir.IntType(bits))
        return b.bitcast(v, t)
    return raw if t == I64 else b.trunc(raw, t)


def _vname(vt: ir.VectorType) -> str:
    el = vt.element
    if isinstance(el, ir.IntType):
        return f"v{vt.count}i{el.width}"
    name = {ir.HalfType: "f16", ir.FloatType: "f32", ir.DoubleType: "f64"}[type(el)]
    return f"v{vt.count}{name}"


#: what ``_int_op`` computes when both operands are constants (before wrapping)
_INT_FOLD = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}


def _int_constant(v: ir.Value) -> int | None:
    """The value of a scalar integer constant, else None."""
    if (
        isinstance(v, ir.Constant)
        and isinstance(v.type, ir.IntType)
        and isinstance(v.constant, int)
        and not isinstance(v.constant, bool)
    ):
        return v.constant
    return None


class _Region:
    """A new innermost dict of reusable values for the span of a ``with`` block."""

    def __init__(self, memo: list[dict]) -> None:
        self.memo = memo

    def __enter__(self) -> None:
        self.memo.append({})

    def __exit__(self, *exc) -> None:
        self.memo.pop()


#: expression kinds whose value is integer arithmetic of variables and constants only
_INDEX_OPS = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod, E.Div, E.Mod, E.Min, E.Max)


def _index_vars(ctx: ModuleContext, e: E.PrimExpr) -> tuple | None:
    """The variables of ``e`` (a tuple in a fixed order) when ``e`` is integer arithmetic
    of variables and constants (no memory, no calls, no conditions), else None."""
    hit = ctx.index_vars.get(id(e))
    if hit is not None:
        return hit[1]
    variables: tuple | None = None
    if isinstance(e, _INDEX_OPS + (E.Cast,)) and dtypes.is_int(e.dtype):
        children = (e.value,) if isinstance(e, E.Cast) else (e.a, e.b)
        found: dict = {}
        for c in children:
            if isinstance(c, E.Var):
                found[c] = None
            elif isinstance(c, E.IntImm):
                pass
            else:
                sub = _index_vars(ctx, c)
                if sub is None:
                    found = None
                    break
                found.update(dict.fromkeys(sub))
        if found is not None:
            variables = tuple(found)
    ctx.index_vars[id(e)] = (e, variables)
    return variables


def _const(e: E.PrimExpr) -> int | None:
    return int(e.value) if isinstance(e, E.IntImm) else None


def _vector_chunks(lanes: int, body: N.Stmt) -> list[tuple[int, int]]:
    """(offset, width) pieces of a vectorized loop: one piece of the loop's own width
    when the body has no guard and no branch (LLVM's x86 backend widens a <7 x float> to
    one register), else powers of two (see ``vector_loop``)."""
    if lanes <= MAX_WHOLE_LANES and not _has_branch(body):
        return [(0, lanes)]
    return _pow2_chunks(lanes)


def _has_branch(body: N.Stmt) -> bool:
    """Does ``body`` contain a condition (an if, an if_then_else, a select)?"""
    found = []

    def visit(node) -> None:
        if isinstance(node, (N.IfThenElse, E.Select)) or (
            isinstance(node, E.Call) and node.op == "if_then_else"
        ):
            found.append(node)

    post_order_visit(body, visit)
    return bool(found)


def _pow2_chunks(lanes: int) -> list[tuple[int, int]]:
    """(offset, width) pieces of ``lanes``, powers of two, widest first: 56 -> 32, 16, 8."""
    out, offset = [], 0
    while offset < lanes:
        n = 1 << ((lanes - offset).bit_length() - 1)
        out.append((offset, n))
        offset += n
    return out


def _bounds(s: N.For) -> tuple[int, int] | None:
    """(first, last) value of a loop's variable when its bounds are constants."""
    lo, ext = _const(s.min), _const(s.extent)
    return None if lo is None or ext is None or ext < 1 else (lo, lo + ext - 1)


def _wider(a: E.PrimExpr, b: E.PrimExpr) -> str:
    return "int64" if "int64" in (a.dtype, b.dtype) else "int32"


def _match_int(t: E.PrimExpr, other: E.PrimExpr) -> E.PrimExpr:
    if _wider(t, other) == "int64" and t.dtype != "int64":
        return E.Cast(t, "int64")
    return t


def _not_vectorizable(s: N.For, extent: int | None) -> str | None:
    """Why a vectorized loop must stay scalar, or None when SIMD code can be made."""
    if extent is None:
        return "extent is not a constant"
    if extent < 2 or extent > MAX_LANES:
        return f"extent {extent} outside 2..{MAX_LANES}"
    for node in walk_stmts(s.body):
        if isinstance(node, (N.For, N.Allocate)):
            return "its body contains a loop or an allocation"
    return None


def _free_values(s: N.For, buffers: dict) -> tuple[list, list]:
    """Variables defined outside ``s`` that it uses, and the outer buffers it touches."""
    used_vars: dict = {}
    used_bufs: dict = {}
    bound: set = set()
    inner_bufs: set = set()

    def visit(node) -> None:
        if isinstance(node, E.Var):
            used_vars[node] = None
        elif isinstance(node, (N.BufferLoad, N.BufferStore)):
            used_bufs[node.buffer] = None
        elif isinstance(node, N.For):
            bound.add(node.loop_var)
        elif isinstance(node, N.LetStmt):
            bound.add(node.var)
        elif isinstance(node, N.Allocate):
            inner_bufs.add(node.buffer)

    post_order_visit(s, visit)
    bound.add(s.loop_var)
    free = [v for v in used_vars if v not in bound]
    bufs = [b for b in used_bufs if b not in inner_bufs and b in buffers]
    return free, bufs
