"""One small visitor/mutator base for every IR pass.

A pass subclasses :class:`IRMutator` and defines ``stmt_<NodeName>`` or
``expr_<NodeName>`` for the nodes it rewrites; every other node kind named in
``GENERIC_KINDS`` is rebuilt from its mutated children (and kept as the same object when
nothing changed). The dispatch convention itself is ``dsl.visitor``'s, re-exported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from ..dsl import expr as E
from ..dsl.visitor import (
    EXPR,
    FAMILIES,
    STMT,
    Visitor,
    concrete_subclasses,
    unhandled_kinds,
)
from ..errors import IRError
from . import nodes as N

__all__ = [
    "EXPR",
    "FAMILIES",
    "STMT",
    "IRMutator",
    "Visitor",
    "concrete_subclasses",
    "expr_kinds",
    "post_order_visit",
    "stmt_exprs",
    "stmt_fields",
    "stmt_kinds",
    "unhandled_kinds",
    "walk_stmts",
]

_STMT_FIELDS: dict[type, tuple[str, ...]] = {}


def stmt_fields(s: N.Stmt) -> tuple[str, ...]:
    """Field names of a statement node."""
    cls = type(s)
    names = _STMT_FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls))
        _STMT_FIELDS[cls] = names
    return names


def expr_kinds() -> list[type]:
    """Every concrete expression node class (the DSL's and the IR's)."""
    return concrete_subclasses(E.PrimExpr)


def stmt_kinds() -> list[type]:
    """Every concrete statement node class."""
    return concrete_subclasses(N.Stmt)


class IRMutator(Visitor):
    """Rebuilds statements and expressions bottom-up; override per node kind."""

    # every node kind of today is a frozen dataclass whose children are fields, so the
    # generic rebuild is right for it; a new kind must be added here on purpose (one that
    # binds a variable or a buffer may need a scope-aware handler instead)
    # fmt: off
    GENERIC_KINDS = frozenset(
        {
            # expressions of the DSL
            "Var", "IntImm", "FloatImm", "Cast", "Add", "Sub", "Mul", "Div", "Mod",
            "FloorDiv", "FloorMod", "Min", "Max", "EQ", "NE", "LT", "LE", "GT", "GE",
            "And", "Or", "Not", "Select", "Call", "TensorLoad", "Reduce",
            # expressions of the IR
            "BufferLoad", "Ramp", "Broadcast",
            # statements
            "For", "BufferStore", "Allocate", "IfThenElse", "LetStmt", "SeqStmt",
            "Evaluate", "Block",
        }
    )
    # fmt: on
    error_class = IRError

    def visit_expr(self, e: E.PrimExpr) -> E.PrimExpr:
        """Mutate one expression."""
        method = self.handler(EXPR, e)
        if method is not None:
            return method(e)
        return E.map_children(e, self.visit_expr)

    def visit_stmt(self, s: N.Stmt) -> N.Stmt:
        """Mutate one statement."""
        method = self.handler(STMT, s)
        if method is not None:
            return method(s)
        return self.default_stmt(s)

    def _value(self, v):
        if isinstance(v, N.Stmt):
            return self.visit_stmt(v)
        if isinstance(v, E.PrimExpr):
            return self.visit_expr(v)
        if isinstance(v, tuple) and v and isinstance(v[0], (N.Stmt, E.PrimExpr)):
            return tuple(self._value(x) for x in v)
        return v

    def default_stmt(self, s: N.Stmt) -> N.Stmt:
        """Rebuild ``s`` from mutated children."""
        changes = {}
        for name in stmt_fields(s):
            old = getattr(s, name)
            new = self._value(old)
            if new is not old and not (
                isinstance(old, tuple) and all(a is b for a, b in zip(old, new))
            ):
                changes[name] = new
        if not changes:
            return s
        if isinstance(s, N.SeqStmt):
            return N.seq(*changes["seq"])
        return dataclasses.replace(s, **changes)


def child_stmts(node: N.Stmt) -> list[N.Stmt]:
    """The statements held directly by ``node``, in order."""
    kids = []
    for name in stmt_fields(node):
        v = getattr(node, name)
        if isinstance(v, N.Stmt):
            kids.append(v)
        elif isinstance(v, tuple):
            kids.extend(x for x in v if isinstance(x, N.Stmt))
    return kids


def walk_stmts(s: N.Stmt) -> Iterator[N.Stmt]:
    """Every statement under ``s`` (``s`` included), parents before children."""
    stack = [s]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(child_stmts(node)))


def stmt_exprs(s: N.Stmt) -> Iterator[E.PrimExpr]:
    """The expressions held directly by one statement (not by nested statements)."""
    for name in stmt_fields(s):
        v = getattr(s, name)
        if isinstance(v, E.PrimExpr):
            yield v
        elif isinstance(v, tuple):
            yield from (x for x in v if isinstance(x, E.PrimExpr))


def post_order_visit(s: N.Stmt, fn: Callable[[object], None]) -> None:
    """Call ``fn`` on every statement and every sub-expression under ``s``."""
    for node in walk_stmts(s):
        fn(node)
        for e in stmt_exprs(node):
            for sub in E.post_order(e):
                fn(sub)
