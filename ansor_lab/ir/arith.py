"""TVM's ``tvm.arith.Analyzer`` over our simplifier: simplify, can_prove, bind,
const_int_bound and modular_set.

Variables get integer bounds (``bind(x, te.Range(0, 16))``: min 0, extent 16; a
``tir.SizeVar`` is known to be >= 0) or are replaced by an expression (``bind(x, y + 1)``);
the answers come from ``ir.simplify.Analyzer``, which reasons with bounds and linear forms.
Integer sets and constraint scopes are out of scope.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

from ..dsl import dtypes, expr as E
from ..dsl.construct import as_expr
from ..dsl.symbolic import is_size_var
from ..dsl.traversal import substitute
from ..errors import DSLError, OutOfScopeError
from .linear import linear_form
from .simplify import INF, Analyzer as _BoundsAnalyzer


@dataclass(frozen=True)
class ConstIntBound:
    """``min_value <= x <= max_value``; ``POS_INF`` / ``NEG_INF`` mark an open side."""

    min_value: int
    max_value: int

    POS_INF = (1 << 63) - 1
    NEG_INF = -POS_INF


@dataclass(frozen=True)
class ModularSet:
    """``x = coeff * k + base`` for some integer k (``coeff`` 0: x is the constant base)."""

    coeff: int
    base: int


class ProofStrength(enum.IntEnum):
    """How hard ``can_prove`` tries (TVM's); every strength uses the same reasoning here."""

    DEFAULT = 0
    SYMBOLIC_BOUND = 1


def _clip(x: float) -> int:
    if x == INF:
        return ConstIntBound.POS_INF
    if x == -INF:
        return ConstIntBound.NEG_INF
    return int(x)


class Analyzer:
    """Integer arithmetic analysis of expressions (TVM's ``tvm.arith.Analyzer``)."""

    def __init__(self) -> None:
        self._bounds = _BoundsAnalyzer()
        self._subst: dict = {}

    def _prep(self, expr: Any) -> E.PrimExpr:
        e = substitute(as_expr(expr), self._subst)
        for v in E.post_order(e):  # tir.SizeVar / te.size_var: known to be >= 0
            if isinstance(v, E.Var) and v not in self._bounds.var_bounds and is_size_var(v):
                self._bounds.bind(v, 0, dtypes.int_range(v.dtype)[1])
        return e

    def bind(self, var: Any, expr: Any, allow_override: bool = False) -> None:
        """Bind ``var`` to a Range (its bounds) or to an expression (it is replaced)."""
        var = as_expr(var)
        if not isinstance(var, E.Var):
            raise DSLError(f"Analyzer.bind: {var!r} is not a variable")
        if hasattr(expr, "extent") and hasattr(expr, "min"):  # a Range
            lo, extent = as_expr(expr.min), as_expr(expr.extent)
            if not isinstance(lo, E.IntImm) or not isinstance(extent, E.IntImm):
                raise OutOfScopeError(
                    f"Analyzer.bind({var.name}, {expr}): only ranges of constant bounds are "
                    "tracked; bind a te.Range(min, extent) of ints"
                )
            self._bounds.bind(var, lo.value, lo.value + extent.value - 1)
            return
        value = self._prep(expr)
        if isinstance(value, E.IntImm):
            self._bounds.bind(var, value.value, value.value)
        self._subst[var] = value

    def update(self, var: Any, info: Any, override: bool = False) -> None:
        """Set ``var``'s bounds from a ConstIntBound."""
        if not isinstance(info, ConstIntBound):
            raise OutOfScopeError(
                "Analyzer.update takes a tvm.arith.ConstIntBound here; modular and other "
                "facts are not tracked"
            )
        lo = -INF if info.min_value <= ConstIntBound.NEG_INF else info.min_value
        hi = INF if info.max_value >= ConstIntBound.POS_INF else info.max_value
        self._bounds.bind(as_expr(var), lo, hi)

    def simplify(self, expr: Any, steps: int = 2) -> E.PrimExpr:
        """``expr`` simplified under what is known of its variables."""
        return self._bounds.simplify(self._prep(expr))

    rewrite_simplify = simplify
    canonical_simplify = simplify

    def can_prove(self, cond: Any, strength: Any = None) -> bool:
        """True when ``cond`` holds for every value the variables may take."""
        return self._bounds.can_prove(self._prep(cond))

    def can_prove_equal(self, lhs: Any, rhs: Any) -> bool:
        """True when ``lhs == rhs`` for every value the variables may take."""
        return self.can_prove(as_expr(lhs) == as_expr(rhs))

    def const_int_bound(self, expr: Any) -> ConstIntBound:
        """The constant bounds of an integer expression."""
        e = self.simplify(expr)
        lo, hi = self._bounds.actual(e)
        return ConstIntBound(_clip(lo), _clip(hi))

    def modular_set(self, expr: Any) -> ModularSet:
        """``expr`` as ``coeff * k + base`` from its linear form (``ModularSet(1, 0)`` when
        nothing is known)."""
        e = self.simplify(expr)
        form = linear_form(e)
        if form is None:
            return ModularSet(1, 0)
        terms, const = form
        coeff = 0
        for c in terms.values():
            coeff = math.gcd(coeff, abs(int(c)))
        return ModularSet(coeff, const % coeff if coeff else const)

    def int_set(self, expr: Any, dom_map: Any = None) -> Any:
        """Not provided: integer sets."""
        raise OutOfScopeError(
            "Analyzer.int_set is out of scope: use const_int_bound(expr) for the constant "
            "bounds of an expression"
        )

    def constraint_scope(self, constraint: Any) -> Any:
        """Not provided: constraint scopes."""
        raise OutOfScopeError(
            "Analyzer.constraint_scope is out of scope: bind each variable's range "
            "instead (analyzer.bind(x, te.Range(0, n)))"
        )
