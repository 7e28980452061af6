"""The vector form of a prepared function: each SIMD loop as the vector statements it runs.

``vector_view`` rewrites every vectorized loop that the LLVM generator emits as SIMD
code (its ``"llvm.vectorize"`` plan is ``xN...``, see ``codegen.pipeline``) into one
vector statement per chunk (``access.vector_chunks``), with the loop variable
replaced by the lanes of that chunk:

- a contiguous access reads/writes ``A[i, T.Ramp(base, 1, lanes)]`` (``Ramp`` in each
  index that moves with the lanes, with its own stride; the flat stride is 1),
- a gather/scatter has a ``Ramp`` of another stride or a vector index
  (``A[(T.Ramp(0, 5, 32)) % 8, i]``); a lane-invariant store of a lane-dependent value
  (every lane writes one address) has a ``T.Broadcast`` index,
- a lane-invariant load stays a scalar ``A[i, k]``, and a scalar meeting a vector is
  ``T.Broadcast(x, lanes)``,
- a lane-dependent condition stays an ``if`` (or ``T.if_then_else``) whose condition is a
  vector: the lane mask; the accesses under it are masked (the generator reads a masked
  contiguous access whole when every lane's element provably exists),
- a let bound to a lane-dependent value binds a vector variable (``x: T.float32x16``).

Loops the generator keeps scalar stay loops with their reason, the nests it emits as a
transposed copy stay loops marked ``transposed copy LxL``, and unrolled loops keep their
``"llvm.unroll"`` mark. Vector dtypes are spelt ``float32x16``.

The code generator still receives ``prepare``'s loop form and derives the same vectors
from the loop with the same analysis (``codegen.access``); ``vector_accesses`` reads the
accesses back from this form, and the tests hold it to the generator's loop reports.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..dsl import expr as E
from ..ir import nodes as N
from ..ir.simplify import linear_form, simplify_expr
from ..ir.visitor import IRMutator
from . import access as A
from .access import Access, AccessWalker

#: The annotation key of a vectorized loop's plan (``codegen.pipeline.VECTORIZE_KEY``).
_VECTORIZE_KEY = "llvm.vectorize"


@dataclass(frozen=True)
class VectorLoop:
    """One vectorized loop of the function, rewritten: its variable's name, its lanes and
    one vector statement per chunk (the statements are the printed function's own)."""

    name: str
    lanes: int
    chunks: tuple  # of (lanes of the chunk, the chunk's statement)


def vector_view(func: N.PrimFunc) -> N.PrimFunc:
    """``func`` (``prepare``'s form for llvm) with its SIMD loops as vector statements."""
    return vector_loops(func)[0]


def vector_loops(func: N.PrimFunc) -> tuple[N.PrimFunc, list[VectorLoop]]:
    """``vector_view(func)`` and its rewritten loops in program order."""
    rewriter = _Rewriter()
    return func.with_body(rewriter.visit_stmt(func.body)), rewriter.loops


def is_simd(s: N.For) -> bool:
    """Is ``s`` a vectorized loop the generator emits as SIMD code (by its plan)?"""
    mark = s.annotation(_VECTORIZE_KEY)
    return s.kind == "vectorized" and isinstance(mark, str) and mark.startswith("x")


class _Rewriter(IRMutator):
    """Replaces each SIMD loop by its chunks; other loops are rebuilt around them."""

    def __init__(self) -> None:
        self.loops: list[VectorLoop] = []

    def stmt_For(self, s: N.For) -> N.Stmt:
        mark = s.annotation(_VECTORIZE_KEY)
        if isinstance(mark, str) and mark.startswith("transposed copy"):
            return s  # the whole nest is one copy (its vector loop carries the mark)
        if not is_simd(s):
            body = self.visit_stmt(s.body)
            return s if body is s.body else replace(s, body=body)
        lanes = A.const_int(s.extent)
        chunks = []
        for offset, n in A.planned_chunks(s):
            base = simplify_expr(E.Add(s.min, E.IntImm(offset, s.min.dtype), s.min.dtype))
            chunks.append((n, _Chunk(s.loop_var, base, n).stmt(s.body)))
        self.loops.append(VectorLoop(s.loop_var.name, lanes, tuple(chunks)))
        return N.seq(*(stmt for _, stmt in chunks))


#: Ramp / Broadcast reach code generation only where a user built them (tir.Ramp)
HAND_BUILT_VECTOR = (
    "a vector built by hand (tir.Ramp / tir.Broadcast) is not compiled; write the scalar "
    "loop and vectorize it: tir.For(v, 0, lanes, tir.ForKind.VECTORIZED, body) with scalar "
    "indices, or s[B].vectorize(v) / sch.vectorize(loop)"
)


def vector_dtype(dtype: str, lanes: int) -> str:
    """``float32`` over 16 lanes: ``float32x16``."""
    return f"{dtype}x{lanes}"


def lanes_of(e: E.PrimExpr) -> int:
    """The lanes of a vector expression of this form, 0 for a scalar."""
    if isinstance(e, (N.Ramp, N.Broadcast)):
        return e.lanes
    head, sep, tail = e.dtype.rpartition("x")
    return int(tail) if sep and head and tail.isdigit() else 0


def _broadcast(e: E.PrimExpr, lanes: int) -> E.PrimExpr:
    return e if lanes_of(e) else N.Broadcast(e, lanes, vector_dtype(e.dtype, lanes))


class _Chunk:
    """Rewrites one chunk of a vectorized loop's body: ``var`` is the lanes
    ``base .. base + lanes - 1``; lane-dependent lets become vector variables."""

    def __init__(self, var: E.Var, base: E.PrimExpr, lanes: int) -> None:
        self.var = var
        self.lanes = lanes
        self.ramp = N.Ramp(base, E.IntImm(1, var.dtype), lanes, vector_dtype(var.dtype, lanes))
        self.varying = {var}  # the loop's variables whose values differ between lanes
        self.vars: dict = {var: self.ramp}  # original variable -> its vector form

    def varies(self, e: E.PrimExpr) -> bool:
        return bool(E.free_vars(e) & self.varying)

    # -- accesses ----------------------------------------------------------------------
    def kind(self, buf: N.Buffer, indices: tuple) -> str:
        _, flat_vars, form = A.flat_facts(buf, indices)
        return A.classify(flat_vars, form, self.var, self.varying)

    def index(self, i: E.PrimExpr) -> E.PrimExpr:
        """One index of a vector access: a Ramp when it is linear in the lanes."""
        if not self.varies(i):
            return self.expr(i)
        form = linear_form(simplify_expr(i))
        if form is not None:
            terms, _ = form
            coeff = terms.get(self.var, 0)
            rest = [t for t in terms if t is not self.var]
            if coeff and not any(self.varies(t) for t in rest):
                lane0 = simplify_expr(E.substitute(i, {self.var: self.ramp.base}))
                stride = E.IntImm(coeff, i.dtype)
                return N.Ramp(lane0, stride, self.lanes, vector_dtype(i.dtype, self.lanes))
        return self.expr(i)

    def load(self, e: N.BufferLoad) -> E.PrimExpr:
        if self.kind(e.buffer, e.indices) == "scalar":
            return e
        indices = tuple(self.index(i) for i in e.indices)
        return N.BufferLoad(e.buffer, indices, vector_dtype(e.dtype, self.lanes))

    # -- expressions ---------------------------------------------------------------------
    def expr(self, e: E.PrimExpr) -> E.PrimExpr:
        """``e`` over the lanes: a vector expression when it depends on them."""
        if isinstance(e, E.Var):
            return self.vars.get(e, e)
        if not self.varies(e):
            return e
        if isinstance(e, N.BufferLoad):
            return self.load(e)
        if isinstance(e, (E.Add, E.Sub, E.Mul)) and not e.dtype.startswith(("float", "bool")):
            ramp = self.ramp_of(e)
            if ramp is not None:
                return ramp
        if isinstance(e, E.Call) and e.op == "if_then_else":
            # the condition stays scalar unless it is the lane mask (then both sides are
            # computed under it); the values meet as vectors
            cond, t, f = (self.expr(a) for a in e.args)
            t, f = _broadcast(t, self.lanes), _broadcast(f, self.lanes)
            return E.Call(e.op, (cond, t, f), vector_dtype(e.dtype, self.lanes))
        kids = {id(c): self.expr(c) for c in E.children(e)}
        if isinstance(e, E.Cast):
            new = kids[id(e.value)]
            return E.Cast(new, vector_dtype(e.dtype, lanes_of(new)))
        lanes = max(lanes_of(k) for k in kids.values())
        out = E.map_children(e, lambda c: _broadcast(kids[id(c)], lanes))
        return replace(out, dtype=vector_dtype(e.dtype, lanes))

    def ramp_of(self, e: E.PrimExpr) -> N.Ramp | None:
        """``e`` as a Ramp when it is linear in the loop variable alone (``j*16 + v``)."""
        form = linear_form(simplify_expr(e))
        if form is None:
            return None
        terms, _ = form
        coeff = terms.get(self.var, 0)
        if not coeff or any(self.varies(t) for t in terms if t is not self.var):
            return None
        lane0 = simplify_expr(E.substitute(e, {self.var: self.ramp.base}))
        return N.Ramp(
            lane0, E.IntImm(coeff, e.dtype), self.lanes, vector_dtype(e.dtype, self.lanes)
        )

    # -- statements -----------------------------------------------------------------------
    def stmt(self, s: N.Stmt) -> N.Stmt:
        """``s`` (a vectorized loop's body) over the lanes of this chunk."""
        if isinstance(s, N.BufferStore):
            return self.store(s)
        if isinstance(s, N.LetStmt):
            value = self.expr(s.value)
            if not lanes_of(value):
                return replace(s, value=value, body=self.stmt(s.body))
            var = E.Var(s.var.name, value.dtype)
            self.varying.add(s.var)
            self.vars[s.var] = var
            try:
                return N.LetStmt(var, value, self.stmt(s.body))
            finally:
                self.varying.discard(s.var)
                del self.vars[s.var]
        if isinstance(s, N.IfThenElse):
            other = None if s.else_case is None else self.stmt(s.else_case)
            return N.IfThenElse(self.expr(s.condition), self.stmt(s.then_case), other)
        if isinstance(s, N.SeqStmt):
            return N.SeqStmt(tuple(self.stmt(item) for item in s.seq))
        if isinstance(s, N.Block):
            return replace(s, body=self.stmt(s.body))
        if isinstance(s, N.Evaluate):
            return N.Evaluate(self.expr(s.value))
        raise AssertionError(f"a vectorized loop body holds a {type(s).__name__}")

    def store(self, s: N.BufferStore) -> N.BufferStore:
        value = self.expr(s.value)
        kind = self.kind(s.buffer, s.indices)
        if kind == "scalar" and not lanes_of(value):
            return s if value is s.value else replace(s, value=value)
        if kind == "scalar":  # one address that every lane writes: a scatter
            last = _broadcast(s.indices[-1], self.lanes)
            return N.BufferStore(s.buffer, value, s.indices[:-1] + (last,))
        indices = tuple(self.index(i) for i in s.indices)
        return N.BufferStore(s.buffer, _broadcast(value, self.lanes), indices)


# ---------------------------------------------------------------------------------------
# reading the form back


def vector_accesses(s: N.Stmt) -> list[Access]:
    """The accesses of a vector statement in the order the generator emits them: a
    vector index of flat stride 1 is contiguous, another vector index a gather/scatter, a
    scalar index scalar; masked under a vector condition."""
    reader = _Reader(None)
    reader.stmt(s, False)
    return reader.found


def access_kind(buf: N.Buffer, indices: tuple, load: bool = False) -> str:
    """How an access of the vector form is done, read from its indices (a load whose
    lanes are a few elements apart is a strided load)."""
    vectors = [(i, stride) for i, stride in zip(indices, buf.strides) if lanes_of(i)]
    if not vectors:
        return "scalar"
    flat = 0
    for i, stride in vectors:
        if not isinstance(i, N.Ramp) or not isinstance(i.stride, E.IntImm):
            return "gather"
        flat += i.stride.value * stride
    if flat == 1:
        return "contiguous"
    lanes = max(lanes_of(i) for i, _ in vectors)
    return "strided" if load and A.strided_load_ok(flat, buf.dtype, lanes) else "gather"


class _Reader(AccessWalker):
    """The generator's walk over the printed form: lanes come from the nodes (Ramp,
    Broadcast, vector dtypes), an access's kind from its indices alone."""

    def varies(self, e: E.PrimExpr) -> bool:
        return bool(lanes_of(e))

    def kind(self, buf: N.Buffer, indices: tuple) -> str:
        return access_kind(buf, indices)

    def load_kind(self, buf: N.Buffer, indices: tuple) -> str:
        return access_kind(buf, indices, load=True)

    def store_kind(self, s: N.BufferStore) -> str:
        return access_kind(s.buffer, s.indices)  # a scatter's index is a Broadcast
