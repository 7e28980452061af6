"""Copies that transpose: vector loads of rows, shuffles, vector stores of columns.

A layout-changing copy such as the convolution sketch's weight panel,

    for c, y, x:                       # contiguous in the source
        for f in vectorized(16):       # contiguous in the destination
            panel[c, y, x, f] = kernel[f0 + f, c, y, x]

reads its lanes ``3 * 3 * 512`` elements apart. The generic vector path makes that a
gather (two ``vgatherqps`` per vector on x86), and the copy took 31% of the best tuned
convolution's time. When the loops around the vector loop collapse into one walk that
reads the source contiguously, the same elements can be read as L rows of L contiguous
elements, transposed in registers (log2 L rounds of two-input shuffles) and written as L
contiguous vectors. The best tuned convolutions of a log ran 1.34-1.36x faster (Zen 5).

The innermost loop may also be wider than a register (a 48-wide dense weight panel: three
column groups of 16, each transposed on its own) or a plain serial loop: a copy between
two buffers gives the same result in any order, and a search that left the panel's loop
unvectorized ran a scalar strided copy (a BERT dense layer: 8.1 -> 6.7 ms, Zen 4).

``match`` recognises the loop nest; ``emit`` writes it. They touch exactly the elements
the loops name, each once, so the result is the loops' result whatever the strides; the
loops are reordered (the walk innermost), which is why every element must be written by
one iteration only.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass

from llvmlite import ir

from ..dsl import dtypes, expr as E
from ..ir import nodes as N
from ..ir.simplify import linear_form, simplify_expr

MAX_VECTOR_BYTES = 64  # one AVX-512 register per row: L rows stay in the register file
MIN_LANES = 4
MAX_GROUPS = 16  # a wider vector loop is copied as up to 16 register-wide column groups


@dataclass(frozen=True)
class TransposeCopy:
    """A perfect loop nest ending in a vectorized loop of L lanes around ``dst[.] =
    src[.]``, seen as: ``outer`` loops around one walk over the ``collapsed`` loops (the
    source contiguous along it) around the L lanes (the destination contiguous along
    them)."""

    outer: tuple  # loops kept as loops, in their order in the nest
    collapsed: tuple  # loops walked as one, innermost (source stride 1) first
    vector: N.For
    store: N.BufferStore
    lanes: int  # lanes of one register: the transposed blocks are lanes x lanes
    groups: int  # the vector loop is ``groups`` register-wide column groups side by side
    extent: int  # iterations of the collapsed walk, at least ``lanes``: whole blocks of
    # ``lanes`` steps, then ``extent % lanes`` steps copied element by element (a walk
    # over one row of 56 under a parallel loop: three 16-step blocks and 8 steps)
    src_stride: int  # source elements between lanes (between rows)
    dst_stride: int  # destination elements between steps of the walk (between columns)


def match(s: N.For, flat_index) -> TransposeCopy | None:
    """The transposing copy that is the loop nest ``s``, or None.

    ``flat_index(buffer, indices)`` gives an access's element offset as an expression (the
    builder's own, so that the analysis sees the offsets the code would compute).
    """
    loops = [s]
    body = s.body
    while isinstance(body, N.For):
        loops.append(body)
        body = body.body
    vector, loops = loops[-1], loops[:-1]
    # A serial innermost loop qualifies too: a copy between two buffers gives the same
    # result in any order, and the search leaves many weight panels unvectorized
    if (
        not loops
        or vector.kind not in ("vectorized", "serial")
        or not isinstance(body, N.BufferStore)
    ):
        return None
    store = body
    load = store.value
    if (
        not isinstance(load, N.BufferLoad)
        or load.buffer == store.buffer
        or load.dtype != store.buffer.dtype
        or store.buffer.dtype == "bool"
    ):
        return None
    if any(lp.kind not in ("serial", "unrolled") for lp in loops):
        return None
    width = _const(vector.extent)
    if width is None:
        return None
    # a vector loop wider than a register (a 48-wide weight panel) is several columns of
    # register-wide blocks: each transposed on its own
    lanes = min(width, MAX_VECTOR_BYTES // dtypes.itemsize(store.buffer.dtype))
    if lanes < MIN_LANES or lanes & (lanes - 1) or width % lanes or width // lanes > MAX_GROUPS:
        return None
    nest = loops + [vector]
    if any(_const(lp.min) != 0 or _const(lp.extent) is None for lp in nest):
        return None
    src = linear_form(simplify_expr(flat_index(load.buffer, load.indices)))
    dst = linear_form(simplify_expr(flat_index(store.buffer, store.indices)))
    if src is None or dst is None:
        return None
    nest_vars = {lp.loop_var for lp in nest}
    for terms, _ in (src, dst):
        for term in terms:  # the nest's variables may appear only as plain linear terms
            if not isinstance(term, E.Var) and E.free_vars(term) & nest_vars:
                return None

    def s_of(lp):
        return src[0].get(lp.loop_var, 0)

    def d_of(lp):
        return dst[0].get(lp.loop_var, 0)

    if d_of(vector) != 1 or s_of(vector) in (0, 1):
        return None
    # Every iteration must write its own element: then the copy's loops may run in any
    # order (the source is another buffer, only read), and the walk below reorders them.
    if not _injective([(d_of(lp), _const(lp.extent)) for lp in nest]):
        return None
    # The walk: a loop reading the source contiguously, then each loop that steps exactly
    # over the walk so far in both buffers.
    firsts = [lp for lp in loops if s_of(lp) == 1]
    if not firsts:
        return None
    chain = [firsts[-1]]
    extent = _const(chain[0].extent)
    rest = [lp for lp in loops if lp is not chain[0]]
    while True:  # the next loop's strides are the walk's so far times its length
        step_s, step_d = extent, d_of(chain[0]) * extent
        nxt = next((lp for lp in rest if s_of(lp) == step_s and d_of(lp) == step_d), None)
        if nxt is None:
            break
        chain.append(nxt)
        rest.remove(nxt)
        extent *= _const(nxt.extent)
    if extent < lanes:  # not one whole block: the generic path
        return None
    return TransposeCopy(
        tuple(rest),
        tuple(chain),
        vector,
        store,
        lanes,
        width // lanes,
        extent,
        s_of(vector),
        d_of(chain[0]),
    )


def _injective(pairs: list[tuple[int, int]]) -> bool:
    """Whether ``sum(c * i)`` over the box ``0 <= i < extent`` takes each value once:
    sorted by size, each stride must exceed the span of all smaller ones."""
    span = 0
    for c, ext in sorted(((abs(c), e) for c, e in pairs if e > 1)):
        if c <= span:
            return False
        span += c * (ext - 1)
    return True


def transpose_rounds(n: int) -> list[list[tuple[int, int, list[int], list[int]]]]:
    """Shuffle rounds that turn n row vectors into n column vectors.

    Each round pairs rows ``j`` and ``j + half`` and, within every block of ``2 * half``
    lanes, gives row j both rows' first halves and row ``j + half`` both rows' second
    halves (masks index the concatenation of the two rows); halves go n/2, n/4 ... 1.
    """
    rounds = []
    half = n // 2
    while half >= 1:
        lo, hi = [], []
        for blk in range(0, n, 2 * half):
            lo += list(range(blk, blk + half)) + [n + x for x in range(blk, blk + half)]
            hi += list(range(blk + half, blk + 2 * half)) + [
                n + x for x in range(blk + half, blk + 2 * half)
            ]
        rounds.append([(j, j + half, lo, hi) for j in range(n) if (j // half) % 2 == 0])
        half //= 2
    return rounds


def emit(fb, m: TransposeCopy, memory_type) -> None:
    """Emit ``m`` with builder ``fb`` (a ``FunctionBuilder``): the outer loops, and in them
    a loop over blocks of ``lanes`` steps of the walk, each L row loads, the shuffles and
    L column stores."""
    with ExitStack() as loops:
        for lp in m.outer:
            fb.vars[lp.loop_var] = loops.enter_context(
                _counted(fb, lp.loop_var.name, _const(lp.extent), _int_type(lp.loop_var.dtype))
            )
        _emit_blocks(fb, m, memory_type)
    for lp in m.outer:
        fb.vars.pop(lp.loop_var, None)


def _emit_blocks(fb, m: TransposeCopy, memory_type) -> None:
    b = fb.b
    i64 = ir.IntType(64)
    load = m.store.value
    zero = {lp.loop_var: E.IntImm(0, lp.loop_var.dtype) for lp in m.collapsed + (m.vector,)}
    src0 = fb.address(load.buffer, tuple(E.substitute(i, zero) for i in load.indices))
    dst0 = fb.address(m.store.buffer, tuple(E.substitute(i, zero) for i in m.store.indices))
    mt = memory_type(m.store.buffer.dtype)
    vt = ir.VectorType(mt, m.lanes)
    align = dtypes.itemsize(m.store.buffer.dtype)
    masks = ir.VectorType(ir.IntType(32), m.lanes)
    blocks_end = m.extent - m.extent % m.lanes
    with _counted(fb, m.collapsed[0].loop_var.name, blocks_end, i64, step=m.lanes) as w0:
        for g in range(m.groups):  # lanes g*L .. g*L+L-1 of the vector loop
            rows = []
            for j in range(m.lanes):
                off = b.add(w0, ir.Constant(i64, (g * m.lanes + j) * m.src_stride))
                rows.append(b.load(b.gep(src0, [off], source_etype=mt), typ=vt, align=align))
            for rnd in transpose_rounds(m.lanes):
                new = list(rows)
                for j, p, lo, hi in rnd:
                    new[j] = b.shuffle_vector(rows[j], rows[p], ir.Constant(masks, lo))
                    new[p] = b.shuffle_vector(rows[j], rows[p], ir.Constant(masks, hi))
                rows = new
            for c in range(m.lanes):
                off = b.mul(b.add(w0, ir.Constant(i64, c)), ir.Constant(i64, m.dst_stride))
                off = b.add(off, ir.Constant(i64, g * m.lanes))
                b.store(rows[c], b.gep(dst0, [off], source_etype=mt), align=align)
    if blocks_end == m.extent:
        return
    # the tail of the walk, element by element: source row ``v``, destination lane ``v``
    name = m.collapsed[0].loop_var.name
    with _counted(fb, name + ".tail", m.extent, i64, start=blocks_end) as w:
        with _counted(fb, name + ".lane", m.lanes * m.groups, i64) as v:
            src = b.add(w, b.mul(v, ir.Constant(i64, m.src_stride)))
            dst = b.add(b.mul(w, ir.Constant(i64, m.dst_stride)), v)
            value = b.load(b.gep(src0, [src], source_etype=mt), typ=mt, align=align)
            b.store(value, b.gep(dst0, [dst], source_etype=mt), align=align)


def _counted(fb, name: str, extent: int, ty: ir.IntType, step: int = 1, start: int = 0):
    """``for v in range(start, extent, step)`` by the builder's loop emitter."""
    lo, hi = ir.Constant(ty, start), ir.Constant(ty, extent)
    return fb.counted_loop(f"tcopy.{name}", f"{name}.t", lo, hi, step)


def _int_type(dtype: str) -> ir.IntType:
    return ir.IntType(64 if dtype == "int64" else 32)


def _const(e: E.PrimExpr) -> int | None:
    return e.value if isinstance(e, E.IntImm) else None
