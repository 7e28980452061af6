"""Accesses that are provably out of bounds: a build error, not a crash of the caller.

An access that runs on every iteration of the loops around it (no ``if`` and no lazy
``if_then_else`` on the way) and whose index, on some dimension, is a linear form of
those loops' variables (constant bounds) takes every value between the form's minimum and
maximum corner: when that range leaves ``[0, extent)`` some iteration reads or writes
outside the buffer. Such programs are refused with a ``LoweringError`` naming the buffer,
the index range and the shape. Anything not provable here (a guarded access, an index
through a ``let`` or a division) is left to ``build(..., instrument_bound_checkers=True)``,
which checks every access at run time.
"""

from __future__ import annotations

from ..dsl import expr as E
from ..errors import LoweringError
from . import nodes as N
from .simplify import linear_form


def check_bounds(func: N.PrimFunc) -> None:
    """Raise ``LoweringError`` for an access of ``func`` that is provably out of bounds."""
    _Checker(func.name).stmt(func.body, {}, False)


class _Checker:
    def __init__(self, name: str) -> None:
        self.name = name

    def stmt(self, s: N.Stmt, ranges: dict, guarded: bool) -> None:
        if isinstance(s, N.For):
            lo, ext = s.min, s.extent
            inner = dict(ranges)
            if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm):
                if ext.value < 1:
                    return  # never runs
                inner[s.loop_var] = (lo.value, lo.value + ext.value - 1)
            self.expr(s.min, ranges, guarded)
            self.expr(s.extent, ranges, guarded)
            self.stmt(s.body, inner, guarded)
        elif isinstance(s, N.BufferStore):
            self.expr(s.value, ranges, guarded)
            for idx in s.indices:
                self.expr(idx, ranges, guarded)
            if not guarded:
                self.access("write", s.buffer, s.indices, ranges)
        elif isinstance(s, N.IfThenElse):
            self.expr(s.condition, ranges, guarded)
            self.stmt(s.then_case, ranges, True)
            if s.else_case is not None:
                self.stmt(s.else_case, ranges, True)
        elif isinstance(s, N.LetStmt):
            self.expr(s.value, ranges, guarded)
            self.stmt(s.body, ranges, guarded)
        elif isinstance(s, N.SeqStmt):
            for item in s.seq:
                self.stmt(item, ranges, guarded)
        elif isinstance(s, N.Evaluate):
            self.expr(s.value, ranges, guarded)
        elif isinstance(s, (N.Allocate, N.Block)):
            self.stmt(s.body, ranges, guarded)

    def expr(self, e: E.PrimExpr, ranges: dict, guarded: bool) -> None:
        stack = [(e, guarded)]
        while stack:
            node, g = stack.pop()
            if isinstance(node, N.BufferLoad) and not g:
                self.access("read", node.buffer, node.indices, ranges)
            if isinstance(node, E.Call) and node.op == "if_then_else":
                stack.append((node.args[0], g))
                stack.extend((arg, True) for arg in node.args[1:])
                continue
            stack.extend((child, g) for child in E.children(node))

    def access(self, what: str, buf: N.Buffer, indices: tuple, ranges: dict) -> None:
        for dim, (idx, extent) in enumerate(zip(indices, buf.shape)):
            span = _exact_range(idx, ranges)
            if span is None or (0 <= span[0] and span[1] < extent):
                continue
            loops = ", ".join(
                f"{v.name} in [{ranges[v][0]}, {ranges[v][1]}]"
                for v in sorted(E.free_vars(idx), key=lambda v: v.name)
            )
            text = ", ".join(str(i) for i in indices)
            raise LoweringError(
                f"function {self.name!r}: out-of-bounds {what} of buffer {buf.name!r} "
                f"(shape {tuple(buf.shape)}) at {buf.name}[{text}]: index {dim} takes every "
                f"value in [{span[0]}, {span[1]}]"
                + (f" (for {loops})" if loops else "")
                + f", outside [0, {extent}); fix the index expression, or guard the access "
                "with te.if_then_else so that it is never evaluated out of range"
            )


def _exact_range(idx: E.PrimExpr, ranges: dict) -> tuple[int, int] | None:
    """(min, max) that ``idx`` attains over the loops' ranges, when it is a linear form of
    loop variables with constant bounds (each term independent: the corners are reached)."""
    return form_range(linear_form(idx), ranges)


def form_range(form: tuple | None, ranges: dict) -> tuple[int, int] | None:
    """(min, max) of a linear form (``linear_form``'s result) over ``ranges`` (var ->
    (min, max)); None when it is not linear or a term has no known range."""
    if form is None:
        return None
    terms, lo = form
    hi = lo
    for term, coeff in terms.items():
        r = ranges.get(term) if isinstance(term, E.Var) else None
        if r is None:
            return None
        a, b = coeff * r[0], coeff * r[1]
        lo, hi = lo + min(a, b), hi + max(a, b)
    return lo, hi
