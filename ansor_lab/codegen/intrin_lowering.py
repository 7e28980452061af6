"""Applies the intrinsic lowering rules users registered (``tvm.ir.register_intrin_lowering``).

Runs first in ``pipeline.prepare``, once the target is known: every call that has a rule
for the target is replaced by what the rule returns (see ``dsl.intrin_rules``).
"""

from __future__ import annotations

from ..dsl import expr as E, intrin_rules
from ..ir import nodes as N
from ..ir.visitor import IRMutator


class _ApplyRules(IRMutator):
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def expr_Call(self, e: E.Call) -> E.PrimExpr:
        inner = E.map_children(e, self.visit_expr)
        return intrin_rules.lower_call(inner, self.kind)


def apply_lowering_rules(func: N.PrimFunc, kind: str) -> N.PrimFunc:
    """``func`` with the registered rules for target ``kind`` applied to its calls."""
    if not intrin_rules.has_rules():
        return func
    body = _ApplyRules(kind).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
