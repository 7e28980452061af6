"""Loop partitioning: the iterations where a guard is decided get loops of their own.

A guard that depends on a loop variable (an inlined padding's ``if_then_else``, the
``if`` of a split that does not divide its loop) is decided for every iteration but a
few at the ends: ``1 <= 2 * h + kh`` fails only for ``h = 0``. Such a loop is split where
a guard's verdict changes, and each piece is simplified under its own range, so the
middle piece runs without the guard (TVM's ``LoopPartition``). Before::

    for h in range(56):
        for kh in range(3):
            ... if_then_else(1 <= h * 2 + kh, x[h * 2 + kh - 1], -inf) ...

after::

    for kh in range(3):                       # h = 0: the one-trip loop folded away
        ... if_then_else(1 <= kh, x[kh - 1], -inf) ...
    for h in range(1, 56):
        for kh in range(3):
            ... x[h * 2 + kh - 1] ...

Only inequalities between linear forms of loop variables with constant ranges decide a
piece (an equality, such as a reduction's ``k == 0`` initialisation, is left to LLVM: a
copy of a whole micro-kernel for one iteration costs more than the test). A serial loop
is split into at most ``MAX_PIECES`` pieces, at most ``MAX_DEPTH`` loops deep on one path
(the copies multiply); an unrolled loop is split at any depth (its iterations are copies
already). A piece that allocates declares the buffer again: the pieces run one after the
other, so each has storage of its own (a vector tile's accumulator, cache_write "local").
A parallel loop is never split: its split belongs to its threads.

A loop (serial, unrolled or vectorized) whose whole body is an ``if`` without ``else``
loses the iterations at its ends where the guard is decided false, so the tail of a split
that does not divide its loop is a narrower vector, not a masked one. Before::

    for w1 in T.vectorized(16):
        if w1 + 48 < 56:
            out[w1 + 48] = ...

after::

    for w1 in T.vectorized(8):
        out[w1 + 48] = ...
"""

from __future__ import annotations

from ..dsl import dtypes, expr as E
from . import nodes as N
from .bound_check import form_range
from .simplify import linear_form, simplify_stmt, substitute_stmt
from .visitor import IRMutator, post_order_visit, walk_stmts

#: Most pieces one loop is split into (before, middle, after).
MAX_PIECES = 3
#: Most partitioned loops nested on one path (each level copies the body it splits).
#: Three: a padded matmul tile (127 x 509 x 251, every extent prime) guards its columns
#: on three tile loops under the rows' one; with two levels, the column tiles of the edge
#: kept their accumulators in masked loads and stores: 8.1 ms where the whole program
#: runs unmasked in 0.86 ms (AVX2, one thread).
MAX_DEPTH = 3
#: Longest loop whose iterations are examined one by one.
MAX_EXTENT = 4096

_CMP = (E.LT, E.LE, E.GT, E.GE)


def partition_guarded_loops(func: N.PrimFunc) -> N.PrimFunc:
    """``func`` with its guarded serial loops split where their guards are decided."""
    if not guard_comparisons(func.body):  # one walk: most programs the tuner builds
        return func
    part = _Partitioner()
    body = part.visit_stmt(func.body)
    if not part.changed:
        return func
    return func.with_body(simplify_stmt(body))


def _const(e: E.PrimExpr) -> int | None:
    return e.value if isinstance(e, E.IntImm) else None


def _loop_ranges(body: N.Stmt) -> dict:
    """Inclusive ranges of the loops inside ``body`` with constant bounds."""
    ranges: dict = {}
    for s in walk_stmts(body):
        if isinstance(s, N.For):
            lo, ext = _const(s.min), _const(s.extent)
            if lo is not None and ext is not None and ext > 0:
                old = ranges.get(s.loop_var)  # a variable two loops bind: both ranges
                r = (lo, lo + ext - 1)
                ranges[s.loop_var] = r if old is None else (min(old[0], r[0]), max(old[1], r[1]))
    return ranges


def guard_comparisons(body: N.Stmt) -> list[E.PrimExpr]:
    """The integer comparisons that condition statements and values inside ``body``."""
    conds: list[E.PrimExpr] = []

    def visit(node) -> None:
        if isinstance(node, N.IfThenElse):
            conds.append(node.condition)
        elif isinstance(node, E.Call) and node.op == "if_then_else":
            conds.append(node.args[0])
        elif isinstance(node, E.Select):
            conds.append(node.condition)

    post_order_visit(body, visit)
    return [c for cond in conds for c in _conjuncts(cond)]


def _verdicts(cmp: E.PrimExpr, var: E.Var, ranges: dict) -> tuple | None:
    """``(k, lo, hi, kind)``: ``cmp`` is ``k * var + r <kind> 0`` with ``r`` in
    ``[lo, hi]`` over the other loops; None when ``var`` is not in it or a term has no
    known range."""
    form = linear_form(E.Sub(cmp.a, cmp.b, cmp.a.dtype))
    if form is None:
        return None
    terms, const = form
    k = terms.get(var, 0)
    if not k:
        return None
    rest = form_range(({t: c for t, c in terms.items() if t is not var}, const), ranges)
    return None if rest is None else (k, *rest, type(cmp))


def _verdict(rule: tuple, v: int) -> bool | None:
    """The comparison's truth at ``var = v`` whatever the other loops do, if decided."""
    k, lo, hi, kind = rule
    lo, hi = k * v + lo, k * v + hi
    if kind is E.LT:
        return True if hi < 0 else False if lo >= 0 else None
    if kind is E.LE:
        return True if hi <= 0 else False if lo > 0 else None
    if kind is E.GT:
        return True if lo > 0 else False if hi <= 0 else None
    return True if lo >= 0 else False if hi < 0 else None  # GE


def _pieces(loop: N.For, outer: dict) -> list[tuple[int, int]] | None:
    """Inclusive ranges of the pieces ``loop`` splits into, or None to leave it."""
    found = _rules(loop, guard_comparisons(loop.body), outer, 2)
    if found is None:
        return None
    lo, ext, rules = found
    pieces: list[list] = []
    for v in range(lo, lo + ext):
        sig = tuple(_verdict(r, v) for r in rules)
        if pieces and pieces[-1][2] == sig:
            pieces[-1][1] = v
        else:
            pieces.append([v, v, sig])
    if not 2 <= len(pieces) <= MAX_PIECES:
        return None
    return [(a, b) for a, b, _ in pieces]


def _rules(loop: N.For, comparisons: list, outer: dict, min_extent: int) -> tuple | None:
    """``(first, extent, rules)``: ``loop``'s constant bounds and the ``_verdicts`` of the
    ``comparisons`` that involve its variable; None when there are none to decide or the
    bounds are not constants in ``[min_extent, MAX_EXTENT]``."""
    lo, ext = _const(loop.min), _const(loop.extent)
    if lo is None or ext is None or not min_extent <= ext <= MAX_EXTENT:
        return None
    ranges = {**outer, **_loop_ranges(loop.body)}
    rules = [r for g in comparisons if (r := _verdicts(g, loop.loop_var, ranges))]
    return (lo, ext, rules) if rules else None


class _Partitioner(IRMutator):
    def __init__(self) -> None:
        self.outer: dict = {}
        self.depth = 0
        self.changed = False

    def stmt_For(self, s: N.For) -> N.Stmt:
        narrowed = _narrowed(s, self.outer)
        if narrowed is not None:
            self.changed = True
            if narrowed is _EMPTY:
                return N.NOP
            s = narrowed
        pieces = None
        if (s.kind == "serial" and self.depth < MAX_DEPTH) or s.kind == "unrolled":
            pieces = _pieces(s, self.outer)
        lo, ext = _const(s.min), _const(s.extent)
        if pieces is None:
            rng = (lo, lo + ext - 1) if lo is not None and ext is not None else None
            return self._within(s, rng, 0)
        self.changed = True
        out = []
        deeper = int(s.kind == "serial")  # an unrolled loop's pieces copy nothing more
        for a, b in pieces:
            piece = N.For(s.loop_var, E.IntImm(a, s.min.dtype), E.IntImm(b - a + 1, s.extent.dtype),
                          s.kind, s.body, s.thread_tag, s.annotations)  # fmt: skip
            out.append(self._within(piece, (a, b), deeper))
        return N.seq(*out)

    def _within(self, s: N.For, rng: tuple | None, deeper: int) -> N.For:
        """``s`` with its body partitioned, its variable known to lie in ``rng``."""
        saved = self.outer.get(s.loop_var)
        if rng is not None:
            self.outer[s.loop_var] = rng
        self.depth += deeper
        try:
            body = self.visit_stmt(s.body)
        finally:
            self.depth -= deeper
            if saved is None:
                self.outer.pop(s.loop_var, None)
            else:
                self.outer[s.loop_var] = saved
        return (
            s
            if body is s.body
            else N.For(s.loop_var, s.min, s.extent, s.kind, body, s.thread_tag, s.annotations)
        )


#: ``_narrowed``'s answer for a loop whose guard is false on every iteration
_EMPTY = object()


def _narrowed(loop: N.For, outer: dict):
    """``loop`` without the iterations at its ends where the ``if`` that is its whole
    body is decided false (``_EMPTY``: false on all), or None to leave it.

    The loop keeps its variable and starts at its first live iteration; a vectorized
    loop is rebased to start at 0 (its variable stands for ``var + first``), as the
    vector generator reads the lanes from 0."""
    body = loop.body
    if loop.kind not in ("serial", "unrolled", "vectorized") or not isinstance(body, N.IfThenElse):
        return None
    if body.else_case is not None:
        return None
    found = _rules(loop, _conjuncts(body.condition), outer, 1)
    if found is None:
        return None
    lo, ext, rules = found
    # each rule is linear in the variable, so it refuses a prefix or a suffix: the live
    # iterations are one run
    live = [v for v in range(lo, lo + ext) if all(_verdict(r, v) is not False for r in rules)]
    if not live:
        return _EMPTY
    first, last = live[0], live[-1]
    if (first, last) == (lo, lo + ext - 1):
        return None  # nothing to drop
    count = E.IntImm(last - first + 1, loop.extent.dtype)
    if loop.kind != "vectorized" or first == 0:
        return N.For(loop.loop_var, E.IntImm(first, loop.min.dtype), count, loop.kind, body,
                     loop.thread_tag, loop.annotations)  # fmt: skip
    var = loop.loop_var
    shifted = substitute_stmt(body, {var: E.Add(var, E.IntImm(first, var.dtype), var.dtype)})
    return N.For(var, E.IntImm(0, loop.min.dtype), count, loop.kind, shifted, loop.thread_tag,
                 loop.annotations)  # fmt: skip


def _conjuncts(cond: E.PrimExpr) -> list[E.PrimExpr]:
    """The integer comparisons ``cond`` is the conjunction of (others are left out)."""
    out, stack = [], [cond]
    while stack:
        c = stack.pop()
        if isinstance(c, E.And):
            stack += [c.a, c.b]
        elif isinstance(c, _CMP) and dtypes.is_int(c.a.dtype) and dtypes.is_int(c.b.dtype):
            out.append(c)
    return out
