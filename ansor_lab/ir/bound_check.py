"""Accesses that are provably out of bounds: a build error, not a crash of the caller.

An access that runs on every iteration of the loops around it (no ``if`` and no lazy
``if_then_else`` on the way) and whose index, on some dimension, is a linear form of
those loops' variables (constant bounds) takes every value between the form's minimum and
maximum corner: when that range leaves ``[0, extent)`` some iteration reads or writes
outside the buffer. Such programs are refused with a ``LoweringError`` naming the buffer,
the index range and the shape. A ``let`` (a TensorIR block's ``vi = T.axis.spatial(10,
i)``) is read through its value. Anything not provable here (a guarded access, an index
through a division, a modulo, a select or a value read from memory) is left to run time:
the code generator checks every access whose index is not linear and whose ``interval``
does not fit its dimension (``build(..., instrument_bound_checkers=True)`` checks all).
"""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.traversal import substitute
from ..errors import LoweringError
from . import nodes as N
from .simplify import linear_form


def check_bounds(func: N.PrimFunc) -> None:
    """Raise ``LoweringError`` for an access of ``func`` that is provably out of bounds."""
    _Checker(func.name).stmt(func.body, {}, False)


class _Checker:
    def __init__(self, name: str) -> None:
        self.name = name
        #: let variable -> its value in loop variables (block axes read through bindings)
        self.lets: dict = {}

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
            self.lets[s.var] = substitute(s.value, self.lets)
            self.stmt(s.body, ranges, guarded)
            del self.lets[s.var]
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
            idx = substitute(idx, self.lets) if self.lets else idx
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


def interval(e: E.PrimExpr, ranges: dict) -> tuple[int, int] | None:
    """Bounds (lo, hi) that the integer expression ``e`` stays within over ``ranges`` (var
    -> (min, max)), or None when they are not known (a value read from memory, a variable
    without a range). Unlike ``form_range`` the bounds need not be reached: a modulo by 9
    is within [0, 8], a select within the union of its two values."""
    if isinstance(e, E.IntImm):
        return int(e.value), int(e.value)
    if isinstance(e, E.Var):
        return ranges.get(e)
    if isinstance(e, E.Cast):
        return interval(e.value, ranges) if e.dtype.startswith(("int", "uint")) else None
    if isinstance(e, (E.Select, E.Call)):
        if isinstance(e, E.Call) and e.op != "if_then_else":
            return None
        options = (e.true_value, e.false_value) if isinstance(e, E.Select) else e.args[1:]
        spans = [interval(v, ranges) for v in options]
        if any(sp is None for sp in spans):
            return None
        return min(sp[0] for sp in spans), max(sp[1] for sp in spans)
    if not isinstance(e, E.BinaryOp):
        return None
    a, b = interval(e.a, ranges), interval(e.b, ranges)
    if a is None or b is None:
        return None
    if isinstance(e, (E.Add, E.Sub, E.Mul, E.Min, E.Max)):
        if isinstance(e, E.Add):
            return a[0] + b[0], a[1] + b[1]
        if isinstance(e, E.Sub):
            return a[0] - b[1], a[1] - b[0]
        if isinstance(e, E.Min):
            return min(a[0], b[0]), min(a[1], b[1])
        if isinstance(e, E.Max):
            return max(a[0], b[0]), max(a[1], b[1])
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if b[0] != b[1] or b[0] == 0:
        return None  # a division by a value that varies (or by zero: an error anyway)
    c = b[0]
    if isinstance(e, E.FloorDiv):
        return min(a[0] // c, a[1] // c), max(a[0] // c, a[1] // c)
    if isinstance(e, E.Div):  # truncated
        q = [int(a[0] / c), int(a[1] / c)]
        return min(q), max(q)
    if isinstance(e, E.FloorMod):
        if c > 0 and 0 <= a[0] and a[1] < c:
            return a
        return (0, c - 1) if c > 0 else (c + 1, 0)
    if isinstance(e, E.Mod):  # the sign of the dividend
        m = abs(c) - 1
        if 0 <= a[0] and a[1] <= m:
            return a
        return (0 if a[0] >= 0 else -m), (0 if a[1] <= 0 else m)
    return None
