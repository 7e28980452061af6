"""Which vectorized loops of a CUDA kernel become float4/float2 (int4/int2) accesses.

A vectorized loop is one vector statement when its extent is 2 or 4 lanes, its body is
one store of float32 or int32, and the store is *contiguous and aligned*: the flat offset
is ``v + rest`` where ``v`` is the loop variable (coefficient 1) and every other term and
the constant are multiples of the lane count. The buffer's base is aligned too: global
buffers come from ``cudaMalloc`` (256-byte aligned), shared and local arrays are declared
``__align__(16)``. Reads in the stored value that are contiguous and aligned the same way
are loaded once as a vector; any other read is done lane by lane. Anything else (another
width, half, a branch in the body, an unaligned store) stays a scalar loop under
``#pragma unroll``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dsl import expr as E
from ..ir import nodes as N
from ..ir.simplify import linear_form, simplify_expr, substitute_stmt
from ..ir.visitor import IRMutator
from .access import flat_index

#: (dtype, lanes) -> CUDA vector type
VECTOR_TYPES = {
    ("float32", 4): "float4",
    ("float32", 2): "float2",
    ("int32", 4): "int4",
    ("int32", 2): "int2",
}
LANE_FIELDS = "xyzw"


@dataclass(frozen=True)
class VectorLoop:
    """A vectorized loop emitted as vector accesses: the store and the vector reads."""

    var: E.Var
    lanes: int
    vtype: str
    store: N.BufferStore
    loads: tuple  # (BufferLoad, placeholder Var) pairs, in first-use order
    value: E.PrimExpr  # the stored value, vector reads replaced by their placeholders


def divisible(e: E.PrimExpr, lanes: int) -> bool:
    """True when the integer ``e`` is provably a multiple of ``lanes``."""
    if isinstance(e, E.IntImm):
        return e.value % lanes == 0
    if isinstance(e, (E.Add, E.Sub)):
        return divisible(e.a, lanes) and divisible(e.b, lanes)
    if isinstance(e, E.Mul):
        return divisible(e.a, lanes) or divisible(e.b, lanes)
    if isinstance(e, E.FloorMod) and isinstance(e.b, E.IntImm):
        return e.b.value % lanes == 0 and divisible(e.a, lanes)
    if isinstance(e, E.Cast):
        return divisible(e.value, lanes)
    return False


def lane_form(e: E.PrimExpr, var: E.Var, lanes: int) -> tuple | None:
    """``(base, k)`` with ``e == base + k * var`` for every ``var`` in [0, lanes), ``base``
    free of ``var``; None when that cannot be shown.

    Beyond sums and constant products it sees through the index arithmetic of a fused
    and split loop: ``(a + v) // c == a // c`` and ``(a + v) % c == a % c + v`` when ``a``
    and ``c`` are multiples of the lane count."""
    if var not in E.free_vars(e):
        return e, 0
    if e is var:
        return E.IntImm(0, e.dtype), 1
    if isinstance(e, (E.Add, E.Sub)):
        fa, fb = lane_form(e.a, var, lanes), lane_form(e.b, var, lanes)
        if fa is None or fb is None:
            return None
        k = fa[1] + fb[1] if isinstance(e, E.Add) else fa[1] - fb[1]
        return type(e)(fa[0], fb[0], e.dtype), k
    if isinstance(e, E.Mul) and isinstance(e.b, E.IntImm):
        fa = lane_form(e.a, var, lanes)
        return None if fa is None else (E.Mul(fa[0], e.b, e.dtype), fa[1] * e.b.value)
    if isinstance(e, (E.FloorDiv, E.FloorMod)) and isinstance(e.b, E.IntImm):
        fa = lane_form(e.a, var, lanes)
        c = e.b.value
        if fa is None or fa[1] != 1 or c <= 0 or c % lanes or not divisible(fa[0], lanes):
            return None
        return type(e)(fa[0], e.b, e.dtype), (0 if isinstance(e, E.FloorDiv) else 1)
    return None


def aligned_contiguous(buf: N.Buffer, indices: tuple, var: E.Var, lanes: int) -> bool:
    """True when ``buf[indices]`` over ``var`` in [0, lanes) is one aligned vector."""
    form = lane_form(flat_index(buf, indices), var, lanes)
    if form is None or form[1] != 1:
        return False
    base = simplify_expr(form[0])
    if divisible(base, lanes):
        return True
    lin = linear_form(base)
    return lin is not None and lin[1] % lanes == 0 and all(c % lanes == 0 for c in lin[0].values())


class _VectorReads(IRMutator):
    def __init__(self, var: E.Var, lanes: int, dtype: str) -> None:
        self.var, self.lanes, self.dtype = var, lanes, dtype
        self.loads: list = []

    def _lane_index(self, i: E.PrimExpr) -> E.PrimExpr:
        """An index of a per-lane read, written as ``base (+ v)`` where that is shown: a
        read the same in every lane then prints the same in every lane."""
        form = lane_form(i, self.var, self.lanes)
        if form is None or form[1] not in (0, 1):
            return self.visit_expr(i)
        base = simplify_expr(form[0])
        return base if form[1] == 0 else E.Add(base, self.var, i.dtype)

    def expr_BufferLoad(self, e: N.BufferLoad) -> E.PrimExpr:
        if e.dtype != self.dtype or not aligned_contiguous(
            e.buffer, e.indices, self.var, self.lanes
        ):
            return N.BufferLoad(e.buffer, tuple(self._lane_index(i) for i in e.indices), e.dtype)
        for load, placeholder in self.loads:
            if load == e:
                return placeholder
        placeholder = E.Var(f"vec{len(self.loads)}", e.dtype)
        self.loads.append((e, placeholder))
        return placeholder


def plan_vector_loop(loop: N.For) -> VectorLoop | None:
    """The vector form of ``loop`` (a vectorized For), or None to emit it scalar."""
    if not (isinstance(loop.extent, E.IntImm) and isinstance(loop.min, E.IntImm)):
        return None
    lanes = loop.extent.value
    body = loop.body
    if not isinstance(body, N.BufferStore):
        return None
    vtype = VECTOR_TYPES.get((body.buffer.dtype, lanes))
    if vtype is None:
        return None
    var = loop.loop_var
    store = body
    if loop.min.value != 0:
        # v runs from min: write the store over a fresh 0-based variable
        fresh = E.Var(var.name, var.dtype)
        store = substitute_stmt(body, {var: E.Add(fresh, loop.min, var.dtype)})
        var = fresh
    if not aligned_contiguous(store.buffer, store.indices, var, lanes):
        return None
    reads = _VectorReads(var, lanes, store.buffer.dtype)
    value = reads.visit_expr(store.value)
    return VectorLoop(var, lanes, vtype, store, tuple(reads.loads), value)
