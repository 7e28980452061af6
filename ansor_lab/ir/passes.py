"""IR passes run before code generation."""

from __future__ import annotations

from ..dsl import expr as E
from . import nodes as N
from .visitor import IRMutator

AUTO_UNROLL = "pragma_auto_unroll_max_step"
UNROLL_EXPLICIT = "pragma_unroll_explicit"


def _steps(s: N.Stmt) -> int | None:
    """Statements executed by ``s`` if all its loops ran (None for a non-constant loop)."""
    if isinstance(s, N.For):
        if not isinstance(s.extent, E.IntImm):
            return None
        inner = _steps(s.body)
        return None if inner is None else s.extent.value * inner
    if isinstance(s, N.SeqStmt):
        total = 0
        for item in s.seq:
            n = _steps(item)
            if n is None:
                return None
            total += n
        return total
    if isinstance(s, (N.Block, N.Allocate, N.LetStmt)):
        return _steps(s.body)
    if isinstance(s, N.IfThenElse):
        a = _steps(s.then_case)
        b = _steps(s.else_case) if s.else_case is not None else 0
        return None if a is None or b is None else max(a, b)
    return 1


class _AutoUnroll(IRMutator):
    """TVM's auto-unroll: in a loop annotated ``pragma_auto_unroll_max_step = n`` (the
    loop itself included, as TVM's pragma scope encloses it), every serial loop with
    constant extent whose whole nest runs at most ``n`` statements is unrolled."""

    def __init__(self) -> None:
        self.budget = 0

    def stmt_For(self, s: N.For) -> N.Stmt:
        saved = self.budget
        budget = s.annotation(AUTO_UNROLL)
        if budget is not None:
            self.budget = int(budget)
        try:
            return self._decide(s)
        finally:
            self.budget = saved

    def _decide(self, s: N.For) -> N.Stmt:
        body = self.visit_stmt(s.body)
        kind = s.kind
        steps = _steps(N.For(s.loop_var, s.min, s.extent, s.kind, body))
        if kind == "serial" and self.budget > 0 and steps is not None and steps <= self.budget:
            kind = "unrolled"
        if body is s.body and kind == s.kind:
            return s
        return N.For(s.loop_var, s.min, s.extent, kind, body, s.thread_tag, s.annotations)


def unroll_by_pragma(func: N.PrimFunc) -> N.PrimFunc:
    """Apply ``pragma_auto_unroll_max_step`` annotations (explicit unrolling)."""
    has = False
    from .visitor import walk_stmts

    for s in walk_stmts(func.body):
        if isinstance(s, N.For) and s.annotation(AUTO_UNROLL) is not None:
            has = True
            break
    if not has:
        return func
    return func.with_body(_AutoUnroll().visit_stmt(func.body))
