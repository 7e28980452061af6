"""Expression emission: type-generic (a value that depends on the vector lanes is a
``<lanes x T>`` vector and what it meets is broadcast to match), with integer index
arithmetic emitted once per dominating region and reused."""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ..dsl import dtypes, expr as E
from ..dsl.visitor import EXPR
from ..errors import CodegenError
from . import failures
from .llvm_types import I32, INT_FOLD, ModuleContext, int_constant, llvm_type

_CMP = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}


class ExprEmitter:
    """Builder methods for expressions (``expr_<Node>``) and vector helpers."""

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
        return self.handler(EXPR, e)(e)

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

    def expr_Var(self, e: E.Var) -> ir.Value:
        if self.vec is not None and e is self.vec.var:
            lanes = self.vec.lanes
            vt = ir.VectorType(llvm_type(e.dtype), lanes)
            steps = ir.Constant(vt, list(range(lanes)))
            return self.b.add(self.splat(self.vec.base, lanes), steps)
        try:
            return self.vars[e]
        except KeyError:
            raise CodegenError(f"variable {e.name!r} is not bound") from None

    def expr_IntImm(self, e: E.IntImm) -> ir.Value:
        return ir.Constant(llvm_type(e.dtype), int(e.value))

    def expr_FloatImm(self, e: E.FloatImm) -> ir.Value:
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
            # saturating, NaN -> 0 (``dsl.expr``); a plain fptosi of an out-of-range
            # value is poison in LLVM (x86 gives INT_MIN, numpy something else)
            name = f"llvm.fptosi.sat.{_suffix(dst, lanes)}.{_suffix(src, lanes)}"
            return b.call(self.ctx.declare(name, dt, [st]), [v])
        return b.fpext(v, dt) if dtypes.bits(src) < dtypes.bits(dst) else b.fptrunc(v, dt)

    def expr_Cast(self, e: E.Cast) -> ir.Value:
        return self.cast(self.expr(e.value), e.value.dtype, e.dtype)

    def _ab(self, e) -> tuple[ir.Value, ir.Value]:
        a, b = self.match(self.expr(e.a), self.expr(e.b))
        return a, b

    def _int_flags(self) -> list[str]:
        # index arithmetic cannot overflow in a valid program; data arithmetic wraps
        return ["nsw"] if self.nsw else []

    def expr_Add(self, e):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            return self.b.fadd(a, b, flags=self.flags)
        return self._int_op("add", a, b)

    def expr_Sub(self, e):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            return self.b.fsub(a, b, flags=self.flags)
        return self._int_op("sub", a, b)

    def expr_Mul(self, e):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            return self.b.fmul(a, b, flags=self.flags)
        return self._int_op("mul", a, b)

    def _int_op(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        """An integer add/sub/mul, folded where an operand is a scalar constant that makes
        it one (the indices of an unrolled copy are constants: 0 + x, 2 * 16), so an
        unrolled body carries no arithmetic on constants."""
        ca, cb = int_constant(a), int_constant(b)
        if ca is not None and cb is not None:
            bits = a.type.width
            v = INT_FOLD[op](ca, cb) & ((1 << bits) - 1)
            return ir.Constant(a.type, v - (1 << bits) if v >> (bits - 1) else v)
        if cb == 0 and op in ("add", "sub") or cb == 1 and op == "mul":
            return a
        if ca == 0 and op == "add" or ca == 1 and op == "mul":
            return b
        return getattr(self.b, op)(a, b, flags=self._int_flags())

    def expr_Div(self, e):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            return self.b.fdiv(a, b, flags=self.div_flags)
        safe, minus_one = self._divisor(e, b)
        return self._negate_where(minus_one, a, lambda: self.b.sdiv(a, safe))

    def expr_Mod(self, e):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            return self.b.frem(a, b)
        safe, minus_one = self._divisor(e, b)
        if minus_one is True:
            return self.const(a.type, 0)
        return self.b.srem(a, safe)  # x % -1 is computed as x % 1: 0, as it should be

    def _divisor(self, e, b: ir.Value) -> tuple[ir.Value, object]:
        """A divisor that cannot trap, and where the true divisor is -1.

        ``sdiv``/``srem`` by 0 or of INT_MIN by -1 are undefined in LLVM and trap with
        SIGFPE on x86, killing the caller. A constant divisor is neither 0 (``dsl.expr``
        refuses it) nor, usefully, -1 (returned as ``True``: the caller negates). A
        run-time divisor is checked: 0 on a lane that is on returns ``DIVISION_BY_ZERO``
        from the kernel; lanes holding 0 or -1 then divide by 1, and the caller negates
        the dividend where the divisor was -1 (``minus_one``, an i1 value)."""
        if isinstance(e.b, E.IntImm):
            if e.b.value == 0:
                raise CodegenError(f"integer division by the constant 0 in {e}")
            return b, (True if e.b.value == -1 else None)
        bld = self.b
        is_zero = bld.icmp_signed("==", b, self.const(b.type, 0))
        self.fail_if(is_zero, failures.DIVISION_BY_ZERO)
        minus_one = bld.icmp_signed("==", b, self.const(b.type, -1))
        safe = bld.select(bld.or_(is_zero, minus_one), self.const(b.type, 1), b)
        return safe, minus_one

    def _negate_where(self, minus_one, a: ir.Value, quotient) -> ir.Value:
        """``-a`` (wrapping) where the divisor is -1, else ``quotient()``."""
        if minus_one is None:
            return quotient()
        neg = self.b.sub(self.const(a.type, 0), a)
        if minus_one is True:
            return neg
        return self.b.select(minus_one, neg, quotient())

    def _floor_fix(self, a, b):
        """(q, r, fix): truncated quotient/remainder and where floor semantics differ."""
        bld = self.b
        q, r = bld.sdiv(a, b), bld.srem(a, b)
        zero = self.const(a.type, 0)
        nonzero = bld.icmp_signed("!=", r, zero)
        signs = bld.icmp_signed("<", bld.xor(r, b), zero)
        return q, r, bld.and_(nonzero, signs)

    def expr_FloorDiv(self, e):
        a, b = self._ab(e)
        bld = self.b
        if dtypes.is_float(e.dtype):
            fn = self.intrinsic("llvm.floor", e.dtype, 1, self.lanes_of(a))
            return bld.call(fn, [bld.fdiv(a, b)])
        if isinstance(e.b, E.IntImm) and e.b.value > 0 and e.b.value & (e.b.value - 1) == 0:
            # floor division by a power of two is an arithmetic shift
            shift = e.b.value.bit_length() - 1
            return bld.ashr(a, self.const(a.type, shift))
        safe, minus_one = self._divisor(e, b)

        def floored():
            q, _, fix = self._floor_fix(a, safe)
            return bld.select(fix, bld.sub(q, self.const(a.type, 1)), q)

        return self._negate_where(minus_one, a, floored)

    def expr_FloorMod(self, e):
        a, b = self._ab(e)
        bld = self.b
        if dtypes.is_float(e.dtype):
            fn = self.intrinsic("llvm.floor", e.dtype, 1, self.lanes_of(a))
            q = bld.call(fn, [bld.fdiv(a, b)])
            return bld.fsub(a, bld.fmul(q, b))
        if isinstance(e.b, E.IntImm) and e.b.value > 0 and e.b.value & (e.b.value - 1) == 0:
            return bld.and_(a, self.const(a.type, e.b.value - 1))
        safe, minus_one = self._divisor(e, b)
        if minus_one is True:
            return self.const(a.type, 0)
        _, r, fix = self._floor_fix(a, safe)  # a divisor of -1 divided by 1: r == 0
        return bld.select(fix, bld.add(r, safe), r)

    def _minmax(self, e, is_min: bool):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            name = "llvm.minimum" if is_min else "llvm.maximum"
            fn = self.intrinsic(name, e.dtype, 2, self.lanes_of(a))
            # NaN propagates (numpy's np.maximum / np.max); the sign of a zero result
            # (max(-0, +0)) is left open ("nsz"): numpy itself returns its first argument
            # there, and the -0 < +0 fix-up tripled a max pool's instructions on x86
            return self.b.call(fn, [a, b], fastmath=("nsz",))
        cmp = self.b.icmp_signed("<" if is_min else ">", a, b)
        return self.b.select(cmp, a, b)

    def expr_Min(self, e):
        return self._minmax(e, True)

    def expr_Max(self, e):
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

    expr_EQ = expr_NE = expr_LT = expr_LE = expr_GT = expr_GE = _cmp

    def expr_And(self, e):
        a, b = self._ab(e)
        return self.b.and_(a, b)

    def expr_Or(self, e):
        a, b = self._ab(e)
        return self.b.or_(a, b)

    def expr_Not(self, e):
        a = self.expr(e.a)
        return self.b.xor(a, self.const(a.type, 1))

    def expr_Select(self, e):
        c = self.expr(e.condition)
        t, f = self.match(self.expr(e.true_value), self.expr(e.false_value))
        lanes = self.lanes_of(t)
        if lanes and not self.lanes_of(c):
            c = self.splat(c, lanes)
        elif self.lanes_of(c) and not lanes:
            t, f = self.splat(t, self.lanes_of(c)), self.splat(f, self.lanes_of(c))
        return self.b.select(c, t, f)

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


def _suffix(dtype: str, lanes: int) -> str:
    """LLVM's name of a (vector of) ``dtype`` in an overloaded intrinsic: i32, v8f32."""
    base = {"float16": "f16", "float32": "f32", "float64": "f64"}.get(dtype)
    base = base or f"i{dtypes.bits(dtype)}"
    return f"v{lanes}{base}" if lanes else base
