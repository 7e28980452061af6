"""Horizontal sums of partial results: one vector load and a tree of shuffles.

A reduction split onto vector lanes (the search's ``vector_rfactor``, TVM's rfactor onto a
vectorized loop) ends with the horizontal step: ``L`` partial results summed into one,

    for k in T.serial(32, annotations={"pragma_horizontal_reduce": "tree"}):
        S[i] = S[i] + S_rf[i, k]

Emitted as written, that is a chain of 32 dependent scalar adds (4 cycles each): in a
softmax fused by rows it ran once per row and took 128 cycles of a row's ~900. The
annotation (recorded by the schedule next to ``ansor.fp_reassociation``, which already
states that the reduction is reassociated) lets the code generator read the ``L`` partial
results as one vector and combine them pairwise: log2 L rounds, each adding the upper
half of the vector to its lower half, then the result into ``S``.

``match`` recognises the loop; ``emit`` writes it. Anything else (a guard, a non-constant
or non-power-of-two extent, a strided read, bounds checking on) is left to the ordinary
loop, which computes the same sum in the serial order.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ..dsl import dtypes, expr as E
from ..ir import nodes as N
from ..ir.simplify import linear_form, simplify_expr

#: The loop annotation that allows the tree order (set by the search's vector rfactor).
HORIZONTAL = "pragma_horizontal_reduce"
#: The loop annotation of a block of partial results whose reduction is reassociated (the
#: search states it with ``ansor.fp_reassociation``): inside it the sign of a zero result
#: is left open (LLVM's ``nsz``: a max or min without the -0 < +0 fix-up, which on x86
#: tripled the dependent chain of a row maximum). Nothing else is reordered.
REASSOCIATE = "pragma_fp_reassociate"
#: The loop annotation that lets divisions inside it multiply by the divisor's reciprocal
#: (``x / s`` as ``x * (1 / s)``: within an ulp; set where a row is divided by its sum).
RECIPROCAL = "pragma_fp_reciprocal"
#: Most partial results read as one vector (four AVX-512 registers of fp32).
MAX_LANES = 64


@dataclass(frozen=True)
class HorizontalReduce:
    """``for k in range(lanes): dst[.] = dst[.] <op> src[base + k]`` (op: add, max, min)."""

    loop: N.For
    store: N.BufferStore
    source: N.BufferLoad
    op: str  # "add", "max" or "min"
    lanes: int


_OPS = {E.Add: "add", E.Max: "max", E.Min: "min"}


def match(s: N.For, flat_index, checking: bool = False) -> HorizontalReduce | None:
    """The horizontal reduction that is loop ``s``, or None (see the module docstring).

    ``flat_index(buffer, indices)`` gives an access's element offset as an expression;
    with ``checking`` (bounds instrumentation) nothing matches: the loop checks each read.
    """
    if checking or not s.annotation(HORIZONTAL) or s.kind not in ("serial", "unrolled"):
        return None
    lanes = s.extent.value if isinstance(s.extent, E.IntImm) else None
    if (
        lanes is None
        or not isinstance(s.min, E.IntImm)
        or s.min.value != 0
        or lanes < 2
        or lanes > MAX_LANES
        or lanes & (lanes - 1)
    ):
        return None
    store = s.body
    if not isinstance(store, N.BufferStore) or not dtypes.is_float(store.buffer.dtype):
        return None
    op = _OPS.get(type(store.value))
    if op is None:
        return None
    acc, src = store.value.a, store.value.b
    if _is_self(src, store):
        acc, src = src, acc
    if not _is_self(acc, store) or not isinstance(src, N.BufferLoad):
        return None
    k = s.loop_var
    if src.buffer is store.buffer or src.dtype != store.buffer.dtype:
        return None
    if any(k in E.free_vars(i) for i in store.indices):
        return None
    form = linear_form(simplify_expr(flat_index(src.buffer, src.indices)))
    if form is None:
        return None
    terms = form[0]
    if terms.get(k, 0) != 1 or any(t is not k and k in E.free_vars(t) for t in terms):
        return None
    return HorizontalReduce(s, store, src, op, lanes)


def _is_self(e: E.PrimExpr, store: N.BufferStore) -> bool:
    return (
        isinstance(e, N.BufferLoad)
        and e.buffer is store.buffer
        and tuple(map(str, e.indices)) == tuple(map(str, store.indices))
    )


def emit(fb, m: HorizontalReduce, memory_type) -> None:
    """Emit ``m`` with builder ``fb`` (a ``FunctionBuilder``): one vector load of the
    partial results, log2 L halving rounds, and the result combined into the target."""
    b = fb.b
    dt = m.store.buffer.dtype
    zero = {m.loop.loop_var: E.IntImm(0, m.loop.loop_var.dtype)}
    base = fb.address(m.source.buffer, tuple(E.substitute(i, zero) for i in m.source.indices))
    mt = memory_type(dt)
    align = dtypes.itemsize(dt)
    v = b.load(base, typ=ir.VectorType(mt, m.lanes), align=align)
    n = m.lanes
    while n > 1:  # the upper half of the vector into its lower half
        half = n // 2
        masks = ir.VectorType(ir.IntType(32), half)
        lo = b.shuffle_vector(v, v, ir.Constant(masks, list(range(half))))
        hi = b.shuffle_vector(v, v, ir.Constant(masks, list(range(half, n))))
        v = _combine(fb, m.op, dt, lo, hi)
        n = half
    total = b.extract_element(v, ir.Constant(ir.IntType(32), 0))
    target = fb.address(m.store.buffer, m.store.indices)
    cur = b.load(target, typ=mt, align=align)
    b.store(_combine(fb, m.op, dt, cur, total), target, align=align)


def _combine(fb, op: str, dt: str, a: ir.Value, b: ir.Value) -> ir.Value:
    """``a <op> b`` as the code generator writes that operation (NaN-propagating max/min)."""
    if op == "add":
        return fb.b.fadd(a, b, flags=fb.flags)
    lanes = fb.lanes_of(a)
    name = "llvm.minimum" if op == "min" else "llvm.maximum"
    # reassociated by the schedule's statement: a zero's sign is left open, as in the lanes
    return fb.b.call(fb.intrinsic(name, dt, 2, lanes), [a, b], fastmath=("nsz",))
