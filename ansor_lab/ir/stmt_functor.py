"""``tvm.tir.stmt_functor``: visit and rewrite the loop IR from Python, as TVM's
"Writing a Customized Pass" tutorial does.

* ``post_order_visit(stmt, f)``: ``f(node)`` on every statement and expression under
  ``stmt``, children before their parent;
* ``ir_transform(stmt, preorder, postorder, only_enable=None)``: rebuild ``stmt``; for each
  node whose type key (``"tir.For"``, ``"tir.BufferStore"``, ``"tir.Add"``...) is in
  ``only_enable`` (every node when None), ``preorder(node)`` may return a replacement
  (its children are then not visited), else the children are rewritten and
  ``postorder(new_node)`` may return one; None keeps the node;
* ``substitute(node, {var: expr})``: variables replaced in a statement or expression.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..dsl import expr as E
from ..dsl.traversal import substitute as substitute_expr
from . import nodes as N
from .simplify import substitute_stmt
from .visitor import IRMutator, stmt_exprs, stmt_fields


def type_key(node: object) -> str:
    """TVM's type key of an IR node: ``"tir.For"``, ``"tir.Add"``..."""
    return f"tir.{type(node).__name__}"


def post_order_visit(stmt: Any, fvisit: Callable[[Any], None]) -> None:
    """Call ``fvisit`` on every node under ``stmt`` (``stmt`` included), children first."""
    if isinstance(stmt, E.PrimExpr):
        for sub in E.post_order(stmt):
            fvisit(sub)
        return
    for name in stmt_fields(stmt):
        value = getattr(stmt, name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, N.Stmt):
                post_order_visit(item, fvisit)
    for e in stmt_exprs(stmt):
        for sub in E.post_order(e):
            fvisit(sub)
    fvisit(stmt)


class _Transform(IRMutator):
    def __init__(self, preorder: Callable | None, postorder: Callable | None, only: Any) -> None:
        self.preorder, self.postorder = preorder, postorder
        self.only = None if only is None else {str(k) for k in only}

    def _enabled(self, node: object) -> bool:
        return self.only is None or type_key(node) in self.only

    def _around(self, node: Any, rebuild: Callable[[Any], Any]) -> Any:
        enabled = self._enabled(node)
        if enabled and self.preorder is not None:
            out = self.preorder(node)
            if out is not None:
                return out
        new = rebuild(node)
        if enabled and self.postorder is not None:
            out = self.postorder(new)
            if out is not None:
                return out
        return new

    def visit_stmt(self, s: N.Stmt) -> N.Stmt:
        return self._around(s, super().visit_stmt)

    def visit_expr(self, e: E.PrimExpr) -> E.PrimExpr:
        return self._around(e, super().visit_expr)


def ir_transform(
    stmt: N.Stmt,
    preorder: Callable | None,
    postorder: Callable | None,
    only_enable: Any = None,
) -> N.Stmt:
    """``stmt`` rewritten by the callbacks (see the module docstring).

    Before (``postorder`` splitting each loop of extent 128 by 8, inner vectorized)::

        for i in range(128):
            c[i] = a[i] + b[i]

    After::

        for i_outer in range(16):
            for i_inner in T.vectorized(8):
                c[i_outer * 8 + i_inner] = a[i_outer * 8 + i_inner] + b[i_outer * 8 + i_inner]
    """
    return _Transform(preorder, postorder, only_enable).visit_stmt(stmt)


def substitute(node: Any, vmap: Mapping) -> Any:
    """``node`` (a statement or an expression) with the variables of ``vmap`` replaced."""
    mapping = {k: E.as_expr(v) for k, v in dict(vmap).items()}
    if isinstance(node, E.PrimExpr):
        return substitute_expr(node, mapping)
    return substitute_stmt(node, mapping)
