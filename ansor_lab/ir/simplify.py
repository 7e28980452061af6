"""Arithmetic simplification: constant folding, linear canonical form, div/mod by bounds.

Integer expressions built from ``+ - *`` by constants are kept as a linear form
(``sum(coeff * term) + const``) and printed with the largest coefficients first, so tiled
indices read as ``i_0 * 64 + i_1 * 16 + j``. ``//`` and ``%`` by a positive constant are
resolved when the bounds of the loop variables prove the remainder stays in range.
Float arithmetic is only constant-folded (in the expression's own precision), never
reassociated, so results stay bit-identical.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..dsl import dtypes, expr as E
from . import nodes as N
from .linear import _is_index, from_linear, linear_form
from .passes import push_scoped_pragmas
from .visitor import EXPR, IRMutator

INF = math.inf

# --------------------------------------------------------------------------------------
# Bounds


class Analyzer:
    """Integer bounds of expressions, from the bounds of the variables they use."""

    def __init__(self, var_bounds: Mapping[E.Var, tuple] | None = None) -> None:
        self.var_bounds: dict[E.Var, tuple] = dict(var_bounds or {})

    def bind(self, var: E.Var, lo: float, hi: float) -> None:
        """Declare ``lo <= var <= hi``."""
        self.var_bounds[var] = (lo, hi)

    def bound(self, e: E.PrimExpr) -> tuple:
        """Inclusive (lo, hi) of an integer expression; ±inf when unknown.

        ``+ - *`` are bounded as exact (unbounded) integers, so a result outside the
        dtype's range means the computation may wrap; every other node bounds what it is
        given by :meth:`actual`, so a wrapped operand makes it unknown, never wrong.
        """
        if isinstance(e, E.IntImm):
            return (e.value, e.value)
        if isinstance(e, E.Var):
            return self.var_bounds.get(e, (-INF, INF))
        if not dtypes.is_int(e.dtype):
            return (-INF, INF)
        if isinstance(e, E.Add):
            (a, b), (c, d) = self.bound(e.a), self.bound(e.b)
            return (a + c, b + d)
        if isinstance(e, E.Sub):
            (a, b), (c, d) = self.bound(e.a), self.bound(e.b)
            return (a - d, b - c)
        if isinstance(e, E.Mul):
            (a, b), (c, d) = self.bound(e.a), self.bound(e.b)
            prods = [_mul(x, y) for x in (a, b) for y in (c, d)]
            return (min(prods), max(prods))
        if isinstance(e, (E.FloorDiv, E.Div)) and isinstance(e.b, E.IntImm) and e.b.value > 0:
            a, b = self.actual(e.a)
            c = e.b.value
            if isinstance(e, E.Div):
                return (_tdiv(a, c), _tdiv(b, c))
            return (_fdiv(a, c), _fdiv(b, c))
        if isinstance(e, (E.FloorMod,)) and isinstance(e.b, E.IntImm) and e.b.value > 0:
            a, b = self.actual(e.a)
            c = e.b.value
            if a >= 0 and b < c:
                return (a, b)
            return (0, c - 1)
        if isinstance(e, E.Mod) and isinstance(e.b, E.IntImm) and e.b.value > 0:
            a, b = self.actual(e.a)
            c = e.b.value
            if a >= 0:
                return (a, b) if b < c else (0, c - 1)
            if b <= 0 and a > -c:
                return (a, b)
            return (-(c - 1), 0) if b <= 0 else (-(c - 1), c - 1)
        if isinstance(e, E.Min):
            (a, b), (c, d) = self.actual(e.a), self.actual(e.b)
            return (min(a, c), min(b, d))
        if isinstance(e, E.Max):
            (a, b), (c, d) = self.actual(e.a), self.actual(e.b)
            return (max(a, c), max(b, d))
        if isinstance(e, E.Cast):
            if dtypes.is_int(e.value.dtype) or dtypes.is_bool(e.value.dtype):
                lo, hi = self.actual(e.value) if dtypes.is_int(e.value.dtype) else (0, 1)
                tlo, thi = dtypes.int_range(e.dtype)
                if lo >= tlo and hi <= thi:
                    return (lo, hi)
            return (-INF, INF)
        if isinstance(e, E.Select) or (isinstance(e, E.Call) and e.op == "if_then_else"):
            t, f = (e.true_value, e.false_value) if isinstance(e, E.Select) else e.args[1:]
            (a, b), (c, d) = self.actual(t), self.actual(f)
            return (min(a, c), max(b, d))
        return (-INF, INF)

    def fits(self, e: E.PrimExpr) -> bool:
        """True when integer ``e`` is proven to be computed without wrapping around."""
        lo, hi = self.bound(e)
        tlo, thi = dtypes.int_range(e.dtype)
        return tlo <= lo and hi <= thi

    def actual(self, e: E.PrimExpr) -> tuple:
        """Bounds of the value ``e`` really takes: unknown when it may have wrapped."""
        if not dtypes.is_int(e.dtype):
            return self.bound(e)
        lo, hi = self.bound(e)
        tlo, thi = dtypes.int_range(e.dtype)
        if lo < tlo or hi > thi:
            return (-INF, INF)
        return (lo, hi)

    def can_prove(self, cond: E.PrimExpr) -> bool:
        """True when ``cond`` holds for every value of the bound variables."""
        return _const_bool(self.simplify(cond)) is True

    def simplify(self, e: E.PrimExpr) -> E.PrimExpr:
        """Simplify ``e`` under the known bounds."""
        return _ExprSimplifier(self).visit_expr(e)


def _mul(x: float, y: float) -> float:
    if x == 0 or y == 0:
        return 0
    return x * y


def _fdiv(x: float, c: int) -> float:
    return x if x in (INF, -INF) else x // c


def _tdiv(x: float, c: int) -> float:
    """x / c rounded toward zero (c > 0)."""
    if x in (INF, -INF):
        return x
    return x // c if x >= 0 else -(-x // c)


# --------------------------------------------------------------------------------------
# Constant folding helpers


def _const_bool(e: E.PrimExpr):
    if isinstance(e, E.IntImm) and e.dtype == "bool":
        return bool(e.value)
    return None


def _bool(value: bool) -> E.IntImm:
    return E.IntImm(int(bool(value)), "bool")


def _fold_float(e: E.BinaryOp, a: float, b: float) -> E.PrimExpr | None:
    dt = np.dtype(e.dtype)
    x, y = dt.type(a), dt.type(b)
    with np.errstate(all="ignore"):
        if isinstance(e, E.Add):
            r = x + y
        elif isinstance(e, E.Sub):
            r = x - y
        elif isinstance(e, E.Mul):
            r = x * y
        elif isinstance(e, E.Div):
            if y == 0:
                return None
            r = x / y
        elif isinstance(e, E.Min):
            r = np.minimum(x, y)  # NaN-propagating in either position, like the backends
        elif isinstance(e, E.Max):
            r = np.maximum(x, y)
        else:
            return None
    return E.FloatImm(float(dt.type(r)), e.dtype)


def _fold_int(e: E.BinaryOp, a: int, b: int) -> E.PrimExpr | None:
    if isinstance(e, E.Add):
        r = a + b
    elif isinstance(e, E.Sub):
        r = a - b
    elif isinstance(e, E.Mul):
        r = a * b
    elif isinstance(e, (E.Div, E.Mod, E.FloorDiv, E.FloorMod)):
        if b == 0:
            return None
        if isinstance(e, E.FloorDiv):
            r = a // b
        elif isinstance(e, E.FloorMod):
            r = a % b
        else:
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            r = q if isinstance(e, E.Div) else a - b * q
    elif isinstance(e, E.Min):
        r = min(a, b)
    elif isinstance(e, E.Max):
        r = max(a, b)
    else:
        return None
    lo, hi = dtypes.int_range(e.dtype)
    if not lo <= r <= hi:
        return None  # leave overflow to run time, as C would
    return E.IntImm(r, e.dtype)


_CMP_FN = {
    E.EQ: lambda a, b: a == b,
    E.NE: lambda a, b: a != b,
    E.LT: lambda a, b: a < b,
    E.LE: lambda a, b: a <= b,
    E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b,
}


# --------------------------------------------------------------------------------------
# The expression simplifier


class _ExprSimplifier(IRMutator):
    """Simplifies bottom-up: ``expr_X`` receives a node whose children are simplified."""

    # leaves stay as they are; the others only have their children simplified
    GENERIC_KINDS = frozenset(
        {"Var", "IntImm", "FloatImm", "TensorLoad", "Reduce", "BufferLoad", "Ramp", "Broadcast"}
    )

    def __init__(self, analyzer: Analyzer) -> None:
        self.an = analyzer

    def visit_expr(self, e: E.PrimExpr) -> E.PrimExpr:
        if isinstance(e, (E.Var, E.IntImm, E.FloatImm)):
            return e
        if isinstance(e, (E.Div, E.Mod, E.FloorDiv, E.FloorMod)) and _is_index(e):
            b = self.visit_expr(e.b)  # a divisor always 0 (y - y) stays: it fails at run time
            zero = isinstance(b, E.IntImm) and b.value == 0
            e = type(e)(self.visit_expr(e.a), e.b if zero else b, e.dtype)
        else:
            e = E.map_children(e, self.visit_expr)
        rule = self.handler(EXPR, e)
        return rule(e) if rule is not None else e

    # -- arithmetic ------------------------------------------------------------------
    def _fold(self, e: E.BinaryOp) -> E.PrimExpr | None:
        a, b = e.a, e.b
        if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
            return _fold_int(e, a.value, b.value)
        if isinstance(a, E.FloatImm) and isinstance(b, E.FloatImm):
            return _fold_float(e, a.value, b.value)
        return None

    def _linear(self, e: E.BinaryOp) -> E.PrimExpr:
        folded = self._fold(e)
        if folded is not None:
            return folded
        if not _is_index(e):
            return e
        terms, const = linear_form(e)
        return from_linear(terms, const, e.dtype)

    expr_Add = _linear
    expr_Sub = _linear
    expr_Mul = _linear

    def _divmod(self, e: E.BinaryOp) -> E.PrimExpr:
        folded = self._fold(e)
        if folded is not None:
            return folded
        if not _is_index(e) or not isinstance(e.b, E.IntImm) or e.b.value <= 0:
            return e
        c = e.b.value
        if c == 1:
            return e.a if isinstance(e, (E.FloorDiv, E.Div)) else E.IntImm(0, e.dtype)
        if not self.an.fits(e.a):
            # the identities below hold for exact integers, not for a dividend that wraps
            return e
        terms, const = linear_form(e.a)
        # split a = c * quotient + rest, with every coefficient of rest below c
        q_terms, r_terms = {}, {}
        for t, k in terms.items():
            if k % c == 0:
                q_terms[t] = k // c
            else:
                r_terms[t] = k
        q_const, r_const = divmod(const, c)
        rest = from_linear(r_terms, r_const, e.dtype)
        lo, hi = self.an.bound(rest)
        trunc = isinstance(e, (E.Div, E.Mod))
        if trunc:
            # truncated division equals floor division when the dividend is non-negative
            a_lo, _ = self.an.bound(e.a)
            if a_lo < 0:
                return e
        quotient = from_linear(q_terms, q_const, e.dtype)
        if 0 <= lo and hi < c:
            return quotient if isinstance(e, (E.FloorDiv, E.Div)) else rest
        if not self.an.fits(rest):
            return e  # rest alone could wrap although the whole dividend does not
        if isinstance(e, (E.FloorDiv, E.Div)):
            if not r_terms and not q_terms:
                return E.IntImm(q_const, e.dtype)
            if q_terms or q_const:
                inner = E.FloorDiv(rest, e.b, e.dtype)
                return self.visit_expr(E.Add(quotient, inner, e.dtype))
            return E.FloorDiv(rest, e.b, e.dtype)
        return E.FloorMod(rest, e.b, e.dtype)

    expr_FloorDiv = _divmod
    expr_FloorMod = _divmod
    expr_Div = _divmod
    expr_Mod = _divmod

    def _minmax(self, e: E.BinaryOp) -> E.PrimExpr:
        folded = self._fold(e)
        if folded is not None:
            return folded
        if E.structural_equal(e.a, e.b):
            return e.a
        if not _is_index(e):
            return e
        (a_lo, a_hi), (b_lo, b_hi) = self.an.actual(e.a), self.an.actual(e.b)
        if isinstance(e, E.Min):
            if a_hi <= b_lo:
                return e.a
            if b_hi <= a_lo:
                return e.b
        else:
            if a_lo >= b_hi:
                return e.a
            if b_lo >= a_hi:
                return e.b
        return e

    expr_Min = _minmax
    expr_Max = _minmax

    # -- comparisons and logic ------------------------------------------------------
    def _cmp(self, e: E.CmpOp) -> E.PrimExpr:
        a, b = e.a, e.b
        if isinstance(a, (E.IntImm, E.FloatImm)) and isinstance(b, (E.IntImm, E.FloatImm)):
            return _bool(_CMP_FN[type(e)](E.const_value(a), E.const_value(b)))
        if not _is_index(a):
            return e
        if E.structural_equal(a, b):
            return _bool(type(e) in (E.EQ, E.LE, E.GE))
        if not (self.an.fits(a) and self.an.fits(b)):
            return e  # a - b says nothing about operands that may have wrapped
        diff = self.visit_expr(E.Sub(a, b, a.dtype))
        lo, hi = self.an.bound(diff)
        t = type(e)
        verdict = None
        if t is E.LT:
            verdict = True if hi < 0 else False if lo >= 0 else None
        elif t is E.LE:
            verdict = True if hi <= 0 else False if lo > 0 else None
        elif t is E.GT:
            verdict = True if lo > 0 else False if hi <= 0 else None
        elif t is E.GE:
            verdict = True if lo >= 0 else False if hi < 0 else None
        elif t is E.EQ:
            verdict = True if lo == hi == 0 else False if lo > 0 or hi < 0 else None
        elif t is E.NE:
            verdict = False if lo == hi == 0 else True if lo > 0 or hi < 0 else None
        if verdict is not None:
            return _bool(verdict)
        return e

    expr_EQ = expr_NE = expr_LT = expr_LE = expr_GT = expr_GE = _cmp

    def expr_And(self, e: E.And) -> E.PrimExpr:
        a, b = _const_bool(e.a), _const_bool(e.b)
        if a is False or b is False:
            return _bool(False)
        if a is True:
            return e.b
        if b is True:
            return e.a
        return e

    def expr_Or(self, e: E.Or) -> E.PrimExpr:
        a, b = _const_bool(e.a), _const_bool(e.b)
        if a is True or b is True:
            return _bool(True)
        if a is False:
            return e.b
        if b is False:
            return e.a
        return e

    def expr_Not(self, e: E.Not) -> E.PrimExpr:
        a = _const_bool(e.a)
        if a is not None:
            return _bool(not a)
        return e

    def expr_Select(self, e: E.Select) -> E.PrimExpr:
        c = _const_bool(e.condition)
        if c is not None:
            return e.true_value if c else e.false_value
        return e

    def expr_Call(self, e: E.Call) -> E.PrimExpr:
        if e.op == "if_then_else":
            c = _const_bool(e.args[0])
            if c is not None:
                return e.args[1] if c else e.args[2]
        return e

    def expr_Cast(self, e: E.Cast) -> E.PrimExpr:
        v = e.value
        if isinstance(v, (E.IntImm, E.FloatImm)) and not dtypes.is_bool(e.dtype):
            # round to the source dtype first: a float32 constant is converted as the
            # float32 value the program computes with, not as the number it was written as
            source = E.const_value(v)
            if dtypes.is_float(e.dtype):
                with np.errstate(over="ignore"):
                    return E.FloatImm(float(np.dtype(e.dtype).type(source)), e.dtype)
            if isinstance(v, E.IntImm) or math.isfinite(source):
                value = int(source)
                lo, hi = dtypes.int_range(e.dtype)
                if lo <= value <= hi:
                    return E.IntImm(value, e.dtype)
        if isinstance(v, E.IntImm) and dtypes.is_bool(e.dtype):
            return _bool(v.value != 0)
        if v.dtype == e.dtype:
            return v
        return e


def simplify_expr(e: E.PrimExpr, var_bounds: Mapping[E.Var, tuple] | None = None) -> E.PrimExpr:
    """Simplify one expression, given inclusive bounds of some variables."""
    return Analyzer(var_bounds).simplify(e)


# --------------------------------------------------------------------------------------
# Statements


class _StmtSimplifier(IRMutator):
    # the other statements only have their expressions and bodies simplified
    GENERIC_KINDS = frozenset({"SeqStmt", "BufferStore", "Allocate", "Evaluate", "Block"})

    def __init__(self) -> None:
        self.an = Analyzer()
        self.exprs = _ExprSimplifier(self.an)

    def visit_expr(self, e: E.PrimExpr) -> E.PrimExpr:
        return self.exprs.visit_expr(e)

    def stmt_For(self, s: N.For) -> N.Stmt:
        lo = self.visit_expr(s.min)
        ext = self.visit_expr(s.extent)
        if isinstance(ext, E.IntImm) and ext.value == 1 and s.kind != "thread_binding":
            # a loop of one iteration is its body with the variable fixed (and its scoped
            # pragmas, such as an unroll budget, handed to the loops inside)
            body = push_scoped_pragmas(_substitute_stmt(s.body, {s.loop_var: lo}), s.annotations)
            return self.visit_stmt(body)
        if isinstance(ext, E.IntImm) and ext.value <= 0:
            return N.NOP
        l_lo, l_hi = self.an.bound(lo)
        _, e_hi = self.an.bound(ext)
        saved = self.an.var_bounds.get(s.loop_var)
        self.an.bind(s.loop_var, l_lo, l_hi + e_hi - 1)
        body = self.visit_stmt(s.body)
        if saved is None:
            del self.an.var_bounds[s.loop_var]
        else:
            self.an.var_bounds[s.loop_var] = saved
        if body is s.body and lo is s.min and ext is s.extent:
            return s
        return N.For(s.loop_var, lo, ext, s.kind, body, s.thread_tag, s.annotations)

    def stmt_IfThenElse(self, s: N.IfThenElse) -> N.Stmt:
        cond = self.visit_expr(s.condition)
        c = _const_bool(cond)
        if c is True:
            return self.visit_stmt(s.then_case)
        if c is False:
            return self.visit_stmt(s.else_case) if s.else_case is not None else N.NOP
        then = self.visit_stmt(s.then_case)
        other = self.visit_stmt(s.else_case) if s.else_case is not None else None
        return N.IfThenElse(cond, then, other)

    def stmt_LetStmt(self, s: N.LetStmt) -> N.Stmt:
        value = self.visit_expr(s.value)
        if isinstance(value, (E.IntImm, E.FloatImm, E.Var)):
            return self.visit_stmt(_substitute_stmt(s.body, {s.var: value}))
        if _is_index(value):
            self.an.bind(s.var, *self.an.bound(value))
        return N.LetStmt(s.var, value, self.visit_stmt(s.body))


class _Substituter(IRMutator):
    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping

    def visit_expr(self, e: E.PrimExpr) -> E.PrimExpr:
        return E.substitute(e, self.mapping)


def _substitute_stmt(s: N.Stmt, mapping: dict) -> N.Stmt:
    return _Substituter(mapping).visit_stmt(s)


def substitute_stmt(s: N.Stmt, mapping: dict) -> N.Stmt:
    """Replace variables by expressions throughout a statement."""
    return _substitute_stmt(s, mapping)


def simplify_stmt(s: N.Stmt) -> N.Stmt:
    """Simplify every expression in ``s`` using loop bounds; drop one-trip loops and dead ifs."""
    return _StmtSimplifier().visit_stmt(s)


def simplify(node):
    """Simplify an expression, statement or PrimFunc."""
    if isinstance(node, N.PrimFunc):
        return node.with_body(simplify_stmt(node.body))
    if isinstance(node, N.Stmt):
        return simplify_stmt(node)
    return simplify_expr(node)
