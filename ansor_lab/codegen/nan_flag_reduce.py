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

The innermost loop may also be vectorized, with ``i`` moving only with it: partial maxima
in vector lanes (a row max split by the search's vector rfactor, a softmax's or an
argmax's first pass). The lanes' tests are and-ed into a mask flag per chunk width of the
vector loop (``flag_widths``), all reduced to one bit after the nest; since a lane's NaN
cannot be written from one bit, a nest that read a NaN runs once more, cold, writing NaN
into each lane whose value is NaN:

    if not ok:
        for ko: for ki (vectorized): part[ki] = v if v != v else part[ki]

An argmax row pass over 1024 floats in 32 lanes ran its max part at one instruction a
vector instead of three.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from llvmlite import ir

from ..dsl import dtypes, expr as E
from ..dsl.traversal import free_vars, post_order
from ..ir import nodes as N
from .access import planned_chunks


@dataclass(frozen=True)
class NanFlagReduce:
    """The nest's one store, its op, and the value folded in each iteration."""

    store: N.BufferStore
    is_min: bool
    value: E.PrimExpr
    loops: tuple = ()  # the nest, outermost first
    vector: bool = False  # the innermost loop is vectorized, the element moving with it


def match(s: N.For) -> NanFlagReduce | None:
    """The flagged min/max reduction that is the loop nest ``s``, or None."""
    loops, body = [s], s.body
    while isinstance(body, N.For):
        loops.append(body)
        body = body.body
    vector = len(loops) > 1 and loops[-1].kind == "vectorized"
    outer = loops[:-1] if vector else loops
    if not isinstance(body, N.BufferStore) or any(
        lp.kind not in ("serial", "unrolled") for lp in outer
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
    nest_vars = {lp.loop_var for lp in outer}
    if any(free_vars(i) & nest_vars for i in store.indices):
        return None  # a different element per iteration: not a reduction into one
    if any(isinstance(n, N.BufferLoad) and n.buffer == store.buffer for n in post_order(value)):
        return None  # the value reads the running result, which may hold a stale non-NaN
    return NanFlagReduce(store, isinstance(op, E.Min), value, tuple(loops), vector)


def flag_widths(red: NanFlagReduce) -> set[int]:
    """The flags the nest needs, by width: 0 is one bit (a scalar nest, or lanes emitted
    one by one); for lanes, one mask per chunk width the vector loop is emitted in
    (``access.vector_chunks``; a chunk of 1 is a <1 x i1>), so each chunk and-s its lanes'
    tests into a mask register of its own, reduced once after the nest (a test reduced to
    one bit per vector cost a max pool three more instructions a tap)."""
    if not red.vector:
        return {0}
    loop = red.loops[-1]
    extent = loop.extent.value if isinstance(loop.extent, E.IntImm) else None
    if extent is None:
        return {0}
    return {0} | {n for _, n in planned_chunks(loop)}


def make_flags(fb, red: NanFlagReduce) -> dict:
    """{width: its flag's alloca, all true}, emitted before the nest."""
    flags = {}
    for n in sorted(flag_widths(red)):
        t = ir.VectorType(ir.IntType(1), n) if n else ir.IntType(1)
        flags[n] = fb.alloca_builder.alloca(t, name="nan_flag")
        fb.b.store(ir.Constant(t, [1] * n if n else 1), flags[n])
    return flags


def flagged_value(fb, red: NanFlagReduce, flags: dict) -> ir.Value:
    """The new running value of one iteration (the select), noting a NaN read in the
    flag of its width (``make_flags``)."""
    b = fb.b
    v = fb.expr(red.value)
    old = fb.expr(red.store.value.a if red.store.value.b is red.value else red.store.value.b)
    if isinstance(old.type, ir.VectorType) and not isinstance(v.type, ir.VectorType):
        v = fb.splat(v, old.type.count)  # a value the lanes share (a padding's -inf)
    elif isinstance(v.type, ir.VectorType) and not isinstance(old.type, ir.VectorType):
        old = fb.splat(old, v.type.count)
    ordered = b.fcmp_ordered("ord", v, v)
    if isinstance(ordered.type, ir.VectorType):  # lanes: the lanes off count as ordered
        mask = fb.vec.mask if fb.vec is not None else None
        if mask is not None and mask.type == ordered.type:
            ordered = b.or_(ordered, b.not_(mask))
        lanes = ordered.type.count
        if lanes not in flags:  # a width the chunks did not foresee: reduce it to a bit
            bits = b.bitcast(ordered, ir.IntType(lanes))
            ordered = b.icmp_unsigned("==", bits, ir.Constant(bits.type, (1 << lanes) - 1))
    flag = flags[ordered.type.count if isinstance(ordered.type, ir.VectorType) else 0]
    b.store(b.and_(b.load(flag), ordered), flag)
    better = b.fcmp_ordered("<" if red.is_min else ">", v, old)
    return b.select(better, v, old)


def finish(fb, red: NanFlagReduce, flags: dict) -> None:
    """After the nest: the element becomes NaN if any value read was NaN (for lanes, the
    nest again, cold, writing NaN into the lanes that read one)."""
    b = fb.b
    ok = None
    for n, flag in sorted(flags.items()):
        bit = b.load(flag)
        if n:
            bits = b.bitcast(bit, ir.IntType(n))
            bit = b.icmp_unsigned("==", bits, ir.Constant(bits.type, (1 << n) - 1))
        ok = bit if ok is None else b.and_(ok, bit)
    flag_var = E.Var("nan_flag.ok", "bool")
    fb.vars[flag_var] = ok
    if red.vector:
        fb.stmt(N.IfThenElse(E.Not(flag_var), _nan_lanes(red), None))
        del fb.vars[flag_var]
        return
    nan = E.FloatImm(float("nan"), red.store.buffer.dtype)
    dst, dtype = red.store.buffer, red.store.buffer.dtype
    running = N.BufferLoad(dst, red.store.indices, dtype)
    fb.stmt(N.BufferStore(dst, E.Select(flag_var, running, nan, dtype), red.store.indices))
    del fb.vars[flag_var]


def _nan_lanes(red: NanFlagReduce) -> N.Stmt:
    """The nest with its store writing ``v`` where ``v`` is NaN, the running value
    elsewhere: run when a lane read a NaN."""
    dst, dtype = red.store.buffer, red.store.buffer.dtype
    running = N.BufferLoad(dst, red.store.indices, dtype)
    is_nan = E.NE(red.value, red.value)
    value = E.Select(is_nan, red.value, running, dtype)
    body: N.Stmt = N.BufferStore(dst, value, red.store.indices)
    for lp in reversed(red.loops):
        body = replace(lp, body=body)
    return body
