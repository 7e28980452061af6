"""IR passes run before code generation."""

from __future__ import annotations

import dataclasses

from ..dsl import expr as E
from ..dsl.dag import EXPENSIVE_CALLS
from ..dsl.dtypes import itemsize
from . import nodes as N
from .visitor import IRMutator, walk_stmts

AUTO_UNROLL = "pragma_auto_unroll_max_step"
UNROLL_EXPLICIT = "pragma_unroll_explicit"
#: The DAG analysis's expensive calls that the backend expands into many instructions
#: (sqrt and rsqrt are one instruction each).
EXPANDED_CALLS = EXPENSIVE_CALLS - {"sqrt", "rsqrt"}
#: Pragmas that hold for the whole loop nest under the annotated loop (TVM's pragma scope)
SCOPED_PRAGMAS = (AUTO_UNROLL, UNROLL_EXPLICIT)


def push_scoped_pragmas(s: N.Stmt, annotations: tuple) -> N.Stmt:
    """Hand the scoped pragmas of a vanishing loop (extent 1) to the loops under it.

    Ansor puts the unroll budget on a stage's outermost loop; a batch loop of extent 1
    is dropped when the program is simplified, and its budget must not go with it.
    A loop's own setting wins over the inherited one.
    """
    items = tuple((k, v) for k, v in annotations if k in SCOPED_PRAGMAS)
    if not items:
        return s
    if isinstance(s, N.For):
        own = dict(s.annotations)
        merged = tuple(sorted({**dict(items), **own}.items()))
        return N.For(s.loop_var, s.min, s.extent, s.kind, s.body, s.thread_tag, merged)
    if isinstance(s, N.SeqStmt):
        return N.SeqStmt(tuple(push_scoped_pragmas(x, items) for x in s.seq))
    if isinstance(s, N.Allocate):
        return N.Allocate(s.buffer, push_scoped_pragmas(s.body, items))
    if isinstance(s, N.Block):
        return dataclasses.replace(s, body=push_scoped_pragmas(s.body, items))
    if isinstance(s, N.LetStmt):
        return N.LetStmt(s.var, s.value, push_scoped_pragmas(s.body, items))
    if isinstance(s, N.IfThenElse):
        other = push_scoped_pragmas(s.else_case, items) if s.else_case is not None else None
        return N.IfThenElse(s.condition, push_scoped_pragmas(s.then_case, items), other)
    return s


#: Steps one call of an expensive math function (exp, tanh, ...) counts for in the
#: unroll budget. TVM counts every statement as one step; here exp expands inline into a
#: polynomial of ~30 vector instructions (tanh and erf into a libm call per lane), so a
#: loop of them unrolled is mostly code: 256 vector exps, unrolled under a 512-step
#: budget, were 10,000 of a chain candidate's 18,500 LLVM instructions and tripled its
#: build time, for nothing at run time (the loop overhead is noise next to an exp).
EXPENSIVE_CALL_STEPS = 8


def _stmt_steps(s: N.Stmt) -> int:
    """Unroll steps of one statement: 1, plus ``EXPENSIVE_CALL_STEPS`` per expensive call."""
    if not isinstance(s, N.BufferStore):
        return 1
    calls = sum(
        1 for e in E.post_order(s.value) if isinstance(e, E.Call) and e.op in EXPANDED_CALLS
    )
    return 1 + EXPENSIVE_CALL_STEPS * calls


def widest_store_bytes(s: N.Stmt) -> int:
    """The widest element a statement under ``s`` stores (4 when it stores nothing)."""
    sizes = [itemsize(x.buffer.dtype) for x in walk_stmts(s) if isinstance(x, N.BufferStore)]
    return max(sizes, default=4)


def _steps(s: N.Stmt, vector_bytes: int = 0) -> int | None:
    """Statements executed by ``s`` if all its loops ran (None for a non-constant loop),
    an expensive math call counting ``EXPENSIVE_CALL_STEPS`` more.

    A vectorized loop is one step per register it fills (``vector_bytes`` wide; one step
    when that is 0, as in TVM, where VectorizeLoop runs before UnrollLoop). Counting its
    lanes would keep a 16 x 32-lane register tile from being unrolled under a 64-step
    budget; counting it as one step let a 512-step budget unroll 512 copies of a 64-float
    row (4,096 AVX2 loads and stores): most of a chain candidate's machine code.
    """
    if isinstance(s, N.For):
        if not isinstance(s.extent, E.IntImm):
            return None
        inner = _steps(s.body, vector_bytes)
        if s.kind == "vectorized":
            if inner is None or vector_bytes <= 0:
                return inner
            return inner * -(-s.extent.value * widest_store_bytes(s.body) // vector_bytes)
        return None if inner is None else s.extent.value * inner
    if isinstance(s, N.SeqStmt):
        total = 0
        for item in s.seq:
            n = _steps(item, vector_bytes)
            if n is None:
                return None
            total += n
        return total
    if isinstance(s, (N.Block, N.Allocate, N.LetStmt)):
        return _steps(s.body, vector_bytes)
    if isinstance(s, N.IfThenElse):
        a = _steps(s.then_case, vector_bytes)
        b = _steps(s.else_case, vector_bytes) if s.else_case is not None else 0
        return None if a is None or b is None else max(a, b)
    return _stmt_steps(s)


class _AutoUnroll(IRMutator):
    """TVM's auto-unroll: in a loop annotated ``pragma_auto_unroll_max_step = n`` (the
    loop itself included, as TVM's pragma scope encloses it), every serial loop with
    constant extent whose whole nest runs at most ``n`` statements is unrolled (see
    ``_steps`` for how statements are counted)."""

    def __init__(self, vector_bytes: int = 0) -> None:
        self.budget = 0
        self.vector_bytes = vector_bytes

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
        steps = _steps(N.For(s.loop_var, s.min, s.extent, s.kind, body), self.vector_bytes)
        if kind == "serial" and self.budget > 0 and steps is not None and steps <= self.budget:
            kind = "unrolled"
        if body is s.body and kind == s.kind:
            return s
        return N.For(s.loop_var, s.min, s.extent, kind, body, s.thread_tag, s.annotations)


def unroll_by_pragma(func: N.PrimFunc, vector_bytes: int = 0) -> N.PrimFunc:
    """Apply ``pragma_auto_unroll_max_step`` annotations (explicit unrolling); with the
    target's ``vector_bytes``, a vectorized loop counts one step per register it fills."""
    has = False
    for s in walk_stmts(func.body):
        if isinstance(s, N.For) and s.annotation(AUTO_UNROLL) is not None:
            has = True
            break
    if not has:
        return func
    return func.with_body(_AutoUnroll(vector_bytes).visit_stmt(func.body))


class _Relabel(IRMutator):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_expr(self, e: E.PrimExpr) -> E.PrimExpr:
        return e  # only loops change: expressions are kept as they are (and not walked)

    def stmt_For(self, s: N.For) -> N.Stmt:
        body = self.visit_stmt(s.body)
        kind = self.new if s.kind == self.old else s.kind
        if body is s.body and kind == s.kind:
            return s
        return dataclasses.replace(s, kind=kind, body=body)


def relabel_loops(func: N.PrimFunc, old: str, new: str) -> N.PrimFunc:
    """``func`` with every loop of kind ``old`` made a loop of kind ``new`` (serial,
    unrolled and vectorized loops mean the same computation: only the code differs).

    Before (``relabel_loops(f, "vectorized", "serial")``)::

        for i_1 in T.vectorized(8):
            C[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] + T.float32(1.0)

    After::

        for i_1 in range(8):
            C[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] + T.float32(1.0)
    """
    body = _Relabel(old, new).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)
