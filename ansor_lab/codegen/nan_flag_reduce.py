"""Min/max reductions whose NaN check leaves the dependent chain: one flag per loop nest.

A float max or min propagates NaN (numpy's ``np.max``), and on x86 that costs three
instructions an element: the max, a NaN test and a blend (``vmaxps`` alone returns its
second operand when either is NaN). A reduction loop nest such as a max pool's window,

    for rv0 in range(3):
        for rv1 in range(3):
            pool[n, c, h, w] = T.max(pool[n, c, h, w], x[...])

is emitted instead as

    ok = True
    for rv0, rv1:
        v = x[...]
        ok = ok and v == v                            # off the chain, and LLVM pairs the tests
        pool[n, c, h, w] = v if v > pool[n, c, h, w] else pool[n, c, h, w]
    if not ok: pool[n, c, h, w] = NaN

The select keeps the running value when either side is NaN, so a NaN already held stays;
a NaN read is noted in ``ok``, and written once after the nest. The result is the nest's
result, NaN included (which NaN payload is left open, as in numpy; so is the sign of a zero
maximum, as for every max here). A ResNet max pool ran 128 -> ~100 us (Zen 4).

``match`` recognises the nest: serial or unrolled loops around one store
``dst[i] = max(dst[i], v)`` (or min, either operand order), ``i`` the same element in every
iteration and ``v`` not reading ``dst``. The store is emitted by ``flagged_value``.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ..dsl import dtypes, expr as E
from ..dsl.traversal import free_vars, post_order
from ..ir import nodes as N


@dataclass(frozen=True)
class NanFlagReduce:
    """The nest's one store, its op, and the value folded in each iteration."""

    store: N.BufferStore
    is_min: bool
    value: E.PrimExpr


def match(s: N.For) -> NanFlagReduce | None:
    """The flagged min/max reduction that is the loop nest ``s``, or None."""
    loops, body = [s], s.body
    while isinstance(body, N.For):
        loops.append(body)
        body = body.body
    if not isinstance(body, N.BufferStore) or any(
        lp.kind not in ("serial", "unrolled") for lp in loops
    ):
        return None
    store = body
    op = store.value
    if not isinstance(op, (E.Max, E.Min)) or not dtypes.is_float(op.dtype):
        return None
    running = N.BufferLoad(store.buffer, store.indices, store.buffer.dtype)
    if E.structural_equal(op.a, running):
        value = op.b
    elif E.structural_equal(op.b, running):
        value = op.a
    else:
        return None
    nest_vars = {lp.loop_var for lp in loops}
    if any(free_vars(i) & nest_vars for i in store.indices):
        return None  # a different element per iteration: not a reduction into one
    if any(isinstance(n, N.BufferLoad) and n.buffer == store.buffer for n in post_order(value)):
        return None  # the value reads the running result, which may hold a stale non-NaN
    return NanFlagReduce(store, isinstance(op, E.Min), value)


def flagged_value(fb, red: NanFlagReduce, flag: ir.Value) -> ir.Value:
    """The new running value of one iteration (the select), noting a NaN read in ``flag``."""
    b = fb.b
    v = fb.expr(red.value)
    old = fb.expr(red.store.value.a if red.store.value.b is red.value else red.store.value.b)
    b.store(b.and_(b.load(flag), b.fcmp_ordered("ord", v, v)), flag)
    better = b.fcmp_ordered("<" if red.is_min else ">", v, old)
    return b.select(better, v, old)


def finish(fb, red: NanFlagReduce, flag: ir.Value) -> None:
    """After the nest: the element becomes NaN if any value read was NaN."""
    ok = E.Var("nan_flag.ok", "bool")
    fb.vars[ok] = fb.b.load(flag)
    nan = E.FloatImm(float("nan"), red.store.buffer.dtype)
    dst, dtype = red.store.buffer, red.store.buffer.dtype
    running = N.BufferLoad(dst, red.store.indices, dtype)
    fb.stmt(N.BufferStore(dst, E.Select(ok, running, nan, dtype), red.store.indices))
    del fb.vars[ok]
