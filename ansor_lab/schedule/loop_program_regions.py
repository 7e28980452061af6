"""Which part of a buffer the blocks under a loop read or write, per iteration of it.

As TVM's compute_at does: every access of the buffer under the loop is written in terms
of loop variables (block bindings substituted), the loops inside the target loop are
relaxed to their ranges (interval arithmetic: ``+ - *`` by constants, ``//`` and ``%`` by
positive constants, min/max), the loops outside it stay symbolic, and the accesses are
united per dimension. A region is a (min expression, static extent) per dimension; an
extent that depends on the outer loops is refused with the reason.
"""

from __future__ import annotations

from ..dsl import expr as E
from ..errors import ScheduleError
from ..ir import nodes as N
from ..ir.simplify import simplify_expr


class NotStatic(ScheduleError):
    """A region whose extent is not a constant."""


def accesses(stmt: N.Stmt, buf: N.Buffer, write: bool) -> list[tuple[tuple, dict]]:
    """Every access of ``buf`` under ``stmt``: (indices in loop variables, the loops
    under ``stmt`` around it as {var: (min, extent)})."""
    out: list = []

    def exprs(e: E.PrimExpr, env: dict, inner: dict) -> None:
        if write:
            return
        for x in E.post_order(e):
            if isinstance(x, N.BufferLoad) and x.buffer is buf:
                out.append((tuple(E.substitute(i, env) for i in x.indices), dict(inner)))

    def go(s: N.Stmt, env: dict, inner: dict) -> None:
        if isinstance(s, N.For):
            exprs(s.min, env, inner)
            exprs(s.extent, env, inner)
            lo, ext = E.substitute(s.min, env), E.substitute(s.extent, env)
            go(s.body, env, {**inner, s.loop_var: (lo, ext)})
        elif isinstance(s, N.LetStmt):
            exprs(s.value, env, inner)
            go(s.body, {**env, s.var: E.substitute(s.value, env)}, inner)
        elif isinstance(s, N.BufferStore):
            exprs(s.value, env, inner)
            for i in s.indices:
                exprs(i, env, inner)
            if write and s.buffer is buf:
                out.append((tuple(E.substitute(i, env) for i in s.indices), dict(inner)))
        elif isinstance(s, N.IfThenElse):
            exprs(s.condition, env, inner)
            go(s.then_case, env, inner)
            if s.else_case is not None:
                go(s.else_case, env, inner)
        elif isinstance(s, N.SeqStmt):
            for x in s.seq:
                go(x, env, inner)
        elif isinstance(s, (N.Block, N.Allocate)):
            go(s.body, env, inner)
        elif isinstance(s, N.Evaluate):
            exprs(s.value, env, inner)

    go(stmt, {}, {})
    return out


def _uses(e: E.PrimExpr, names: dict) -> bool:
    return any(isinstance(x, E.Var) and x in names for x in E.post_order(e))


def interval(e: E.PrimExpr, relax: dict) -> tuple[E.PrimExpr, E.PrimExpr]:
    """(lowest, highest) value of ``e`` when the variables of ``relax`` ({var: (min,
    extent)}) take every value of their ranges; the others stay as they are."""
    if not _uses(e, relax):
        return e, e
    if isinstance(e, E.Var):
        lo, ext = relax[e]
        lo_lo, _ = interval(lo, relax)
        _, lo_hi = interval(lo, relax)
        return lo_lo, lo_hi + ext - 1
    if isinstance(e, E.Add):
        (a, b), (c, d) = interval(e.a, relax), interval(e.b, relax)
        return a + c, b + d
    if isinstance(e, E.Sub):
        (a, b), (c, d) = interval(e.a, relax), interval(e.b, relax)
        return a - d, b - c
    if isinstance(e, E.Mul) and isinstance(e.a, E.IntImm):
        e = E.Mul(e.b, e.a, e.dtype)
    if isinstance(e, E.Mul) and isinstance(e.b, E.IntImm):
        a, b = interval(e.a, relax)
        c = e.b.value
        return (a * c, b * c) if c >= 0 else (b * c, a * c)
    if isinstance(e, E.FloorDiv) and isinstance(e.b, E.IntImm) and e.b.value > 0:
        a, b = interval(e.a, relax)
        return a // e.b.value, b // e.b.value
    if isinstance(e, E.FloorMod) and isinstance(e.b, E.IntImm) and e.b.value > 0:
        return E.const(0), E.const(e.b.value - 1)
    if isinstance(e, (E.Min, E.Max)):
        (a, b), (c, d) = interval(e.a, relax), interval(e.b, relax)
        op = type(e)
        return op(a, c, e.dtype), op(b, d, e.dtype)
    raise NotStatic(f"the index {e} is not one whose range can be bounded (use + - * // %)")


def _const(e: E.PrimExpr, bounds: dict) -> int | None:
    e = simplify_expr(e, bounds)
    return e.value if isinstance(e, E.IntImm) else None


def region(accs: list, bounds: dict, what: str) -> list[tuple[E.PrimExpr, int]]:
    """The union of the accesses as (min, extent) per dimension; ``bounds`` gives the
    symbolic (outer) loop variables' ranges for simplification."""
    dims: list | None = None
    for indices, inner in accs:
        box = []
        for idx in indices:
            lo, hi = interval(idx, inner)
            lo = simplify_expr(lo, bounds)
            hi = simplify_expr(hi, bounds)
            box.append((lo, hi))
        if dims is None:
            dims = box
            continue
        merged = []
        for (a, b), (c, d) in zip(dims, box):
            da, db = _const(c - a, bounds), _const(d - b, bounds)
            if da is None or db is None:
                raise NotStatic(
                    f"{what}: two accesses' regions differ by a non-constant ({a} vs {c}); "
                    "the region's extent must be static"
                )
            merged.append((a if da >= 0 else c, b if db <= 0 else d))
        dims = merged
    out = []
    for lo, hi in dims or []:
        ext = _const(hi - lo + 1, bounds)
        if ext is None:
            raise NotStatic(
                f"{what}: the region [{lo}, {hi}] has an extent that depends on the outer "
                "loops; the extents must be static"
            )
        out.append((lo, max(ext, 1)))
    return out


def covers(outer: list, inner: list, bounds: dict) -> bool:
    """Whether region ``outer`` provably holds region ``inner``."""
    for (a, n), (b, m) in zip(outer, inner):
        d = _const(b - a, bounds)
        if d is None or d < 0 or d + m > n:
            return False
    return True


def region_equal(a: E.PrimExpr, b: E.PrimExpr, bounds: dict) -> bool:
    """Whether two region minima are provably the same."""
    return _const(a - b, bounds) == 0
