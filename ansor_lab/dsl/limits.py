"""Bounds on the size of what users and files hand us, checked without recursion.

Lowering, the simplifier and code generation walk expressions recursively, so an
expression nested deeper than Python's stack allows (``e = e + 1`` ten thousand times)
would end in a RecursionError far from its cause; ``te.compute`` refuses it up front.
"""

from __future__ import annotations

from ..errors import DSLError
from . import expr as E

#: the deepest expression a te.compute body may be (each level is one operation); code
#: generation needs a few Python frames per level
MAX_EXPR_DEPTH = 150


def expr_depth(e: E.PrimExpr, stop: int | None = None) -> int:
    """The nesting depth of ``e`` (a leaf is 1), in time linear in its distinct nodes.

    With ``stop``, returns a value over ``stop`` as soon as the depth is known to exceed it.
    """
    depth: dict[int, int] = {}
    stack: list[tuple[E.PrimExpr, bool]] = [(e, False)]
    path = 0  # nodes expanded and not finished: the ancestors of the node on top
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if ready:
            path -= 1
        elif key in depth:
            continue
        kids = E.children(node)
        if ready or not kids:
            depth[key] = 1 + max((depth[id(c)] for c in kids), default=0)
        else:
            stack.append((node, True))
            path += 1
            if stop is not None and path > stop:
                return path + 1
            stack.extend((c, False) for c in kids if id(c) not in depth)
    return depth[id(e)]


def check_expr_depth(e: E.PrimExpr, what: str) -> None:
    """DSLError if ``e`` nests deeper than MAX_EXPR_DEPTH."""
    d = expr_depth(e, stop=MAX_EXPR_DEPTH)
    if d > MAX_EXPR_DEPTH:
        raise DSLError(
            f"{what}: the expression nests more than {MAX_EXPR_DEPTH} operations deep; "
            "split it into several te.compute stages (or sum many terms with te.sum over a "
            "reduce axis)"
        )
