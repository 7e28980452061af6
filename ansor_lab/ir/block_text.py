"""What TVMScript prints of a TensorIR block: its parts, and the regions it reads and writes.

A ``Block`` with ``axes`` keeps what runs in its body (the lets binding its iteration
variables, the ``T.where`` test, the ``T.init()`` test); ``block_parts`` takes that body
apart again, and refuses (None) a body whose shape does not match its flags, so the
printer never shows a block that would parse back to something else. ``T.reads`` /
``T.writes`` are inferred from the accesses, as TVM does: a point per access, or a
range ``lo:hi`` on a dimension indexed by the block's own inner loops.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dsl import expr as E
from ..dsl.construct import logical_and
from ..dsl.printer import text as expr_text
from . import nodes as N
from .simplify import from_linear, linear_form


@dataclass(frozen=True)
class BlockParts:
    """A block's iteration variables, their bindings, predicate, init and body."""

    vars: tuple
    bindings: tuple
    where: E.PrimExpr | None
    init: N.Stmt | None
    body: N.Stmt


def init_condition(block_vars: tuple, axes: tuple) -> E.PrimExpr | None:
    """``T.init()``'s test: every reduce variable at its minimum (as the parser builds it)."""
    out = None
    for var, ax in zip(block_vars, axes):
        if ax.kind == "R":
            term = var == ax.min
            out = term if out is None else logical_and(out, term)
    return out


def block_parts(b: N.Block) -> BlockParts | None:
    """The parts of a described block, or None when its body does not have that shape."""
    if not b.axes:
        return None
    s = b.body
    block_vars, bindings = [], []
    for _ in b.axes:
        if not isinstance(s, N.LetStmt):
            return None
        block_vars.append(s.var)
        bindings.append(s.value)
        s = s.body
    where = None
    if b.has_where:
        if not isinstance(s, N.IfThenElse) or s.else_case is not None:
            return None
        where, s = s.condition, s.then_case
    init = None
    if b.has_init:
        if not (isinstance(s, N.SeqStmt) and len(s.seq) >= 2):
            return None
        test = s.seq[0]
        want = init_condition(tuple(block_vars), b.axes)
        if not isinstance(test, N.IfThenElse) or test.else_case is not None or want is None:
            return None
        if expr_text(test.condition) != expr_text(want):
            return None
        init, s = test.then_case, N.seq(*s.seq[1:])
    return BlockParts(tuple(block_vars), tuple(bindings), where, init, s)


# --------------------------------------------------------------------------------------
# T.reads / T.writes


def _dim_text(index: E.PrimExpr, inner: dict, extent: int) -> str:
    """A point, or ``lo:hi`` when ``index`` runs over loops inside the block."""
    used = E.free_vars(index) & inner.keys()
    if not used:
        return expr_text(index)
    form = linear_form(index)
    if form is None or any(inner.get(v) is None for v in used):
        return f"0:{extent}"
    terms, const = form
    rest = {t: c for t, c in terms.items() if t not in used}
    if any(v not in terms for v in used) or any(E.free_vars(t) & used for t in rest):
        return f"0:{extent}"  # an inner loop inside a term that is not linear
    span = 1
    for v in used:
        coeff, (lo, n) = terms[v], inner[v]
        const += coeff * lo if coeff > 0 else coeff * (lo + n - 1)
        span += abs(coeff) * (n - 1)
    start = from_linear(rest, const, index.dtype)
    if isinstance(start, E.IntImm):
        return f"{start.value}:{start.value + span}"
    return f"{expr_text(start)}:{expr_text(start)} + {span}"


class _Accesses:
    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.inner: dict = {}  # var bound inside the block -> (min, extent) or None

    def region(self, buf: N.Buffer, indices: tuple) -> str:
        if not indices:
            return f"{buf.name}[()]"
        dims = [_dim_text(i, self.inner, ext) for i, ext in zip(indices, buf.shape)]
        return f"{buf.name}[{', '.join(dims)}]"

    def expr(self, e: E.PrimExpr) -> None:
        for node in E.post_order(e):
            if isinstance(node, N.BufferLoad):
                r = self.region(node.buffer, node.indices)
                if r not in self.reads:
                    self.reads.append(r)

    def stmt(self, s: N.Stmt) -> None:
        if isinstance(s, N.SeqStmt):
            for x in s.seq:
                self.stmt(x)
        elif isinstance(s, N.For):
            lo, ext = s.min, s.extent
            known = isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm)
            self.inner[s.loop_var] = (lo.value, ext.value) if known else None
            self.stmt(s.body)
        elif isinstance(s, N.BufferStore):
            w = self.region(s.buffer, s.indices)
            if w not in self.writes:
                self.writes.append(w)
            self.expr(s.value)
            for i in s.indices:
                self.expr(i)
        elif isinstance(s, N.LetStmt):
            self.expr(s.value)
            self.inner[s.var] = None
            self.stmt(s.body)
        elif isinstance(s, N.IfThenElse):
            self.expr(s.condition)
            self.stmt(s.then_case)
            if s.else_case is not None:
                self.stmt(s.else_case)
        elif isinstance(s, N.Evaluate):
            self.expr(s.value)
        elif isinstance(s, (N.Allocate, N.Block)):
            self.stmt(s.body)


def reads_writes(parts: BlockParts) -> tuple[list[str], list[str]]:
    """The ``T.reads`` and ``T.writes`` regions of a block, as text.

    A block with ``T.init()`` does not list the element it accumulates into among its
    reads (TVM's convention: the init makes that read part of the reduction).
    """
    acc = _Accesses()
    if parts.init is not None:
        acc.stmt(parts.init)
    writes_of_init = list(acc.writes)
    acc.stmt(parts.body)
    if parts.init is not None:
        acc.reads = [r for r in acc.reads if r not in acc.writes]
    for w in writes_of_init:
        if w not in acc.writes:
            acc.writes.append(w)
    return acc.reads, acc.writes
