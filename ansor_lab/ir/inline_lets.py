"""Substituting the integer lets of TVMScript programs into their uses."""

from __future__ import annotations

from ..dsl import dtypes, expr as E
from . import nodes as N
from .simplify import substitute_stmt
from .visitor import IRMutator, walk_stmts


class _InlineIndexLets(IRMutator):
    """Substitutes integer lets of pure index arithmetic into their bodies."""

    def stmt_LetStmt(self, s: N.LetStmt) -> N.Stmt:
        value = self.visit_expr(s.value)
        pure = not any(isinstance(x, N.BufferLoad) for x in E.post_order(value))
        if pure and not dtypes.is_float(s.var.dtype) and s.var.dtype != "bool":
            return self.visit_stmt(substitute_stmt(s.body, {s.var: value}))
        body = self.visit_stmt(s.body)
        return N.LetStmt(s.var, value, body)


def inline_index_lets(func: N.PrimFunc) -> N.PrimFunc:
    """``func`` with its integer index lets substituted (``v_l: T.int32 = l_0 * 8 + l_1``).

    TVMScript binds block variables and common subexpressions with lets; the code generator
    analyses accesses by their index expressions, so a vectorized loop reached through a
    let would look like a gather. TVM substitutes block bindings when it lowers, too.
    """
    if not any(isinstance(s, N.LetStmt) for s in walk_stmts(func.body)):
        return func
    return func.with_body(_InlineIndexLets().visit_stmt(func.body))
