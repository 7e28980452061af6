"""Cross-thread reduction: a reduction loop bound to threadIdx, lowered as TVM does.

``s[C].bind(ki, te.thread_axis("threadIdx.x"))`` on a reduction loop (directly, or on
the reduction left after ``rfactor``, with the rfactor stage computed at that loop)
makes the threads of the loop share one reduction. Each thread reduces its part into a
local register, writes it to a shared buffer of the block, and the block combines the
partial results in a tree (``s`` = P/2, P/4 ... 1: thread f adds slot ``f + s`` into slot
``f``) with a barrier between steps (``ir.storage_sync`` places them); thread 0 stores
the result (TVM's ``tvm_thread_allreduce`` with its store predicate, written out as a
shared-memory tree instead of warp shuffles)::

    for f in T.thread_binding(P, thread="threadIdx.x"):
        C_red_local[0] = 0
        for ko in range(K // P):                 # the serial reduction loops
            C_red_local[0] = C_red_local[0] + A[i, ko * P + f]
        C_red_shared[f] = C_red_local[0]
        T.tvm_storage_sync("shared")
        if f < P // 2: C_red_shared[f] = C_red_shared[f] + C_red_shared[f + P // 2]
        ...
        if f == 0: C[i] = C_red_shared[0]

The thread-bound reduction loops are emitted outside the serial ones whatever their
order (the result is the same sum, grouped per thread).
"""

from __future__ import annotations

import math

from ..dsl import expr as E
from ..dsl.intrin import reduce_identity
from ..errors import GPUScheduleError
from ..ir import gpu, nodes as N
from .loop_kinds import REDUCE, ThreadBinding
from .state import Stage

#: Block annotation naming the loops (variables) of a cross-thread reduction
CROSS_THREAD_KEY = "cross_thread_reduction"


def thread_reduce_leaves(stage: Stage) -> list[str]:
    """The reduction loops of ``stage`` bound to threadIdx."""
    return [
        lp
        for lp in stage.leaves
        if stage.iters[lp].kind == REDUCE
        and isinstance(stage.annotations.get(lp), ThreadBinding)
        and gpu.is_thread_tag(stage.annotations[lp].tag)
    ]


def _combine(combiner: str, a: E.PrimExpr, b: E.PrimExpr, dtype: str) -> E.PrimExpr:
    if combiner == "sum":
        return E.Add(a, b, dtype)
    if combiner == "max":
        return E.Max(a, b, dtype)
    return E.Min(a, b, dtype)


def _int(v: int) -> E.IntImm:
    return E.IntImm(v)


def emit_cross_thread(lw, stage: Stage) -> N.Stmt:
    """The nest of a stage whose reduction is shared by threads (``lw`` is the lowerer)."""
    info = lw.info[stage.name]
    leaves = stage.leaves
    red_threads = thread_reduce_leaves(stage)
    first_reduce = next(k for k, lp in enumerate(leaves) if stage.iters[lp].kind == REDUCE)
    late = [lp for lp in leaves[first_reduce:] if stage.iters[lp].kind != REDUCE]
    if late:
        raise GPUScheduleError(
            f"stage {stage.name!r} binds reduction loop {red_threads[0]!r} to "
            f"{stage.annotations[red_threads[0]].tag} (a cross-thread reduction) but its "
            f"spatial loop(s) {', '.join(late)} run inside the reduction loops: reorder "
            "them outside, so that each thread group reduces one output element"
        )
    body = lw.body(stage)
    dtype = info.buffer.dtype
    values = lw.root_values(stage)
    out_idx = lw.out_index(stage)
    spatial_guards = [g for g, red in info.guards if not red]
    reduce_guards = [g for g, red in info.guards if red]

    # the thread index of the reduction: the bound loops, outer to inner, flattened
    flat: E.PrimExpr = _int(0)
    threads = 1
    for lp in red_threads:
        ext = info.extents[lp]
        flat = E.Add(E.Mul(flat, _int(ext), "int32"), info.leaf_vars[lp], "int32")
        threads *= ext
    # other threadIdx loops around the stage get their own slots of the shared buffer
    slot: E.PrimExpr = _int(0)
    slots = 1
    own = [(stage, lp) for lp in leaves[:first_reduce]]
    for st, lp in lw.enclosing_loops(stage) + own:
        ann = st.annotations.get(lp)
        if isinstance(ann, ThreadBinding) and gpu.is_thread_tag(ann.tag):
            ext = lw.info[st.name].extents[lp]
            slot = E.Add(E.Mul(slot, _int(ext), "int32"), lw.info[st.name].leaf_vars[lp], "int32")
            slots *= ext
    base = E.Mul(slot, _int(threads), "int32")

    name = stage.op.name
    local = N.Buffer(lw.fresh(f"{name}_red_local"), (1,), dtype, "local")
    shared = N.Buffer(lw.fresh(f"{name}_red_shared"), (slots * threads,), dtype, "shared")
    zero = (_int(0),)
    src = lw.translate(body.source, values)
    acc: N.Stmt = N.BufferStore(
        local, _combine(body.combiner, N.BufferLoad(local, zero, dtype), src, dtype), zero
    )
    if body.condition is not None:
        acc = N.IfThenElse(lw.translate(body.condition, values), acc)
    # a thread past the end of a split that does not divide (a spatial guard) still takes
    # part in the shared-memory tree, so it must add only the identity: its reads, of an
    # attached producer's region included, would lie outside the data (TVM passes every
    # bound check as tvm_thread_allreduce's condition)
    if reduce_guards or spatial_guards:
        acc = N.IfThenElse(_and(spatial_guards + reduce_guards), acc)
    for lp in reversed(leaves[first_reduce:]):
        if lp in red_threads:
            continue
        acc = lw.loop(stage, lp, lw.with_attached(stage, lp, acc))

    def slot_at(offset: E.PrimExpr) -> tuple:
        return (E.Add(E.Add(base, flat, "int32"), offset, "int32"),)

    parts: list = [
        N.BufferStore(local, reduce_identity(body.combiner, dtype), zero),
        acc,
        N.BufferStore(shared, N.BufferLoad(local, zero, dtype), slot_at(_int(0))),
    ]
    pow2 = 1 << max(0, math.ceil(math.log2(threads)))
    step = pow2 // 2
    while step >= 1:
        cond: E.PrimExpr = E.LT(flat, _int(step))
        if pow2 != threads:
            cond = E.And(cond, E.LT(E.Add(flat, _int(step), "int32"), _int(threads)))
        mine = N.BufferLoad(shared, slot_at(_int(0)), dtype)
        other = N.BufferLoad(shared, slot_at(_int(step)), dtype)
        parts.append(
            N.IfThenElse(
                cond,
                N.BufferStore(
                    shared, _combine(body.combiner, mine, other, dtype), slot_at(_int(0))
                ),
            )
        )
        step //= 2
    result = N.BufferLoad(shared, (E.Add(base, _int(0), "int32"),), dtype)
    parts.append(
        N.IfThenElse(
            _and([E.EQ(flat, _int(0)), *spatial_guards]),
            N.BufferStore(info.buffer, result, out_idx),
        )
    )
    stmt: N.Stmt = N.Allocate(local, N.seq(*parts))
    for lp in reversed(red_threads):
        stmt = lw.loop(stage, lp, lw.with_attached(stage, lp, stmt))
    stmt = N.Allocate(shared, stmt)
    for k in range(first_reduce - 1, -1, -1):
        lp = leaves[k]
        inner = lw.with_attached(stage, lp, stmt)
        if info.alloc_at == lp:
            inner = N.Allocate(info.buffer, inner)
        stmt = lw.loop(stage, lp, inner)
    names = ",".join(info.leaf_vars[lp].name for lp in red_threads)
    return N.Block(stage.name, stmt, ((CROSS_THREAD_KEY, names),))


def _and(conds: list) -> E.PrimExpr:
    out = conds[0]
    for c in conds[1:]:
        out = E.And(out, c)
    return out
