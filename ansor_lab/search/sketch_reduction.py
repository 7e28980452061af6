"""Reduction sketch rule: partial results in vector lanes (rfactor onto a vectorized loop).

A row reduction written plainly (``S[i] = sum_k A[i, k]``) runs as one scalar add chain:
each add waits for the previous one (4 cycles), so a 768-wide row costs ~3000 cycles
while the loads would take ~50. TVM's answer is ``rfactor``: split ``k`` as ``(ko, ki)``
and factor ``ki`` out into a block of partial results ``S_rf[i, ki] = sum_ko A[i, ko *
L + ki]`` whose ``ki`` loop is spatial, hence vectorized: ``L`` partial sums live in
vector lanes, and with ``L`` a multiple of the vector width the lanes span several
registers, i.e. several independent accumulators (the dependent add chain is broken).
``S`` then sums the ``L`` partial results (the horizontal sum at the end).

This reassociates the reduction: with floats the result differs from the serial order
by rounding. It is never silent: the partial-result block carries the annotation
``ansor.fp_reassociation`` (in the trace) saying so, and two loop annotations in the
trace and the lowered program say what the code generator may do with it
(``codegen/horizontal_reduce``): ``pragma_fp_reassociate`` on the partial results' loop
(the sign of a zero max left open) and ``pragma_horizontal_reduce`` on the horizontal
step (the L lanes combined as a tree of shuffles, not a chain of L dependent adds). A
row fusion whose output divides by a row statistic (a softmax's ``exp / sum``) also
states ``pragma_fp_reciprocal`` on the row loop: one division per row, multiplications.

The rule applies where it pays: the reduction's innermost axis is the contiguous (last)
index of what it reads, and at most one input is reused across its outputs (row sums,
norms, softmax, GEMV; not a matmul, which multi-level tiling serves). Trailing reduction
axes read as one contiguous run (a global pooling's 7x7 window) are fused into one first.
The number of lanes ``L`` is a searched choice among ``LANE_CHOICES`` (``lane_choices``):
those dividing the extent, or where none of 16 or more does, wider ones with a guarded
last round, which the code generator reads with a masked load.
"""

from __future__ import annotations

import math

from ..codegen.horizontal_reduce import HORIZONTAL, REASSOCIATE, RECIPROCAL
from ..dsl import dtypes, expr as E
from ..errors import ScheduleError
from ..ir.linear import linear_form
from ..schedule.inlined_reads import effective_reads
from ..schedule.state import Stage, State, derive_extents
from ..schedule.tir_schedule import Schedule

#: Partial results the search chooses from: 1, 2, 4 or 8 AVX2 registers of fp32
#: (1 to 4 AVX-512 registers); each register is one accumulator chain.
LANE_CHOICES = (8, 16, 32, 64)
#: The annotation that states the reassociation on the partial-result block.
REASSOCIATION = "ansor.fp_reassociation"
#: Output rows (the output axes but the last, multiplied) up to which a reduction whose
#: two operands both run along ``k`` (a dense layer on a few tokens, ``x[i, k] * w[j,
#: k]``) also gets partial results in vector lanes, with ``FEW_ROWS_MIN_LAST`` outputs
#: along the last axis at least. Tiling alone vectorizes such a product along ``j`` and
#: gathers ``w`` a lane per row: a 4 x 4096 by 4096 x 4096 dense ran at 0.85x numpy.
FEW_ROWS = 8
FEW_ROWS_MIN_LAST = 64


def _reads(state: State, st: Stage) -> dict[str, list[tuple]]:
    """The index tuples ``st`` reads, per producer (through inlined stages)."""
    out = {}
    for p in state.stages.values():
        if p is not st and not p.is_inlined:
            reads = effective_reads(state, st, p)
            if reads:
                out[p.name] = reads
    return out


def _moves(index: tuple, k: E.Var, axes: set) -> bool:
    """Whether an index tuple depends on ``k`` and on one of ``axes``."""
    used = set().union(*(E.free_vars(i) for i in index)) if index else set()
    return k in used and bool(axes & used)


def _contiguous_in(index: tuple, k: E.Var) -> bool:
    """Whether ``k`` moves only the last index of ``index``, by one element a step: the
    bare ``k``, or ``k`` plus terms free of it (a chunk's ``x[i, c * 128 + k]``, a
    position found before, ``x[i, first[i] * 128 + k]``)."""
    if any(k in E.free_vars(i) for i in index[:-1]):
        return False
    if index[-1] is k:
        return True
    form = linear_form(index[-1])
    if form is None or form[0].get(k) != 1:
        return False
    return not any(k in E.free_vars(t) for t in form[0] if t is not k)


def _trailing_axes(state: State, st: Stage, reads: dict) -> tuple[E.Var, ...]:
    """The reduction axes read as one contiguous run: the last one, and before it each
    axis that indexes the dimension just outside in every read that uses it, over that
    dimension's whole extent (a 7x7 window of ``x[n, c, rh, rw]`` is a run of 49; a
    strided window, ``x[n, c, 2 * h + rh, ...]``, is not)."""
    ks = [iv.var for iv in st.op.reduce_axis]
    extents = derive_extents(st)
    run = [ks[-1]]
    for k in reversed(ks[:-1]):
        inner = run[0]
        depth = len(run)
        for name, rs in reads.items():
            shape = _shape(state, name)
            for r in rs:
                if not any(v in E.free_vars(i) for i in r for v in (k, *run)):
                    continue  # a read by other axes (a group's mean, by rc) does not move
                ok = (
                    shape is not None
                    and len(r) > depth
                    and r[-depth - 1] is k
                    and r[-depth] is inner
                    and all(extents.get(v.name) == d for v, d in zip(run, shape[-depth:]))
                    and not any(k in E.free_vars(i) for i in r[: -depth - 1])
                )
                if not ok:
                    return tuple(run)
        run.insert(0, k)
    return tuple(run)


def _shape(state: State, name: str) -> tuple | None:
    """The shape of stage ``name``'s tensor, as ints (None if not constant)."""
    op = state.stages[name].op
    shape = getattr(op, "shape", None) or tuple(iv.dom.extent for iv in op.axis)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        return None


def lane_choices(extent: int) -> tuple[int, ...]:
    """Lane counts for a reduction of ``extent``: those of ``LANE_CHOICES`` that divide it
    and leave two rounds at least; where no count of 16 or more divides, the wider counts
    anyway, the last round a masked tail (rows of 1000 or 49 would otherwise get 8 lanes,
    one accumulator chain, or none). 8 is dropped where wider counts fit."""
    choices = tuple(c for c in LANE_CHOICES if extent % c == 0 and extent // c >= 2)
    if not any(c >= 2 * LANE_CHOICES[0] for c in choices):
        wide = tuple(c for c in LANE_CHOICES[1:] if extent >= 2 * c)
        choices = tuple(sorted(set(choices) | set(wide)))
    if any(c >= 2 * LANE_CHOICES[0] for c in choices):
        # 8 lanes are one accumulator chain (half an AVX-512 register): where more lanes
        # fit, the 8-lane programs only fill the search's budget (a softmax's row max on 8
        # lanes ran 1.4x slower than on 32 or 64); they stay where nothing wider fits
        choices = tuple(c for c in choices if c > LANE_CHOICES[0])
    return choices


def _few_rows(st: Stage) -> bool:
    """Whether ``st`` has at most ``FEW_ROWS`` output rows of ``FEW_ROWS_MIN_LAST``
    outputs or more (a dense layer on a few tokens)."""
    extents = [int(iv.dom.extent) for iv in st.op.axis]
    return (
        bool(extents) and math.prod(extents[:-1]) <= FEW_ROWS and extents[-1] >= FEW_ROWS_MIN_LAST
    )


def vector_reduction(
    state: State, st: Stage, few_rows: bool = False
) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """``(axis names, lane choices)`` where ``st`` gains from partial results in vector
    lanes over its last reduction axes (fused first where there are several: they are
    read as one contiguous run, ``_trailing_axes``), else None (see the module
    docstring). With ``few_rows``, also a product of two operands that both run along the
    reduction when the output has few rows (``FEW_ROWS``): a sketch beside tiling's."""
    op = st.op
    if not op.reduce_axis or len(op.body) != 1 or not isinstance(op.body[0], E.Reduce):
        return None
    if op.attrs.get("ansor.rfactor") or any(st.relations):
        return None  # a block rfactor made, or one a rule already transformed
    if any(p.op.attrs.get("ansor.rfactor") for p in state.producers(st.name)):
        return None  # the horizontal sum of partial results rfactor made
    k = op.reduce_axis[-1].var
    extents = derive_extents(st)
    if not isinstance(extents.get(k.name), int):
        return None
    reads = _reads(state, st)
    with_k = [r for rs in reads.values() for r in rs if any(k in E.free_vars(i) for i in r)]
    if not with_k or not all(_contiguous_in(r, k) for r in with_k):
        return None  # k must step the last index of every read using it by one
    long_axes = {iv.var for iv in op.axis if int(iv.dom.extent) > 1}
    # operands of the reduction (indexed by k) that also move with an output axis: two of
    # them is a matmul's reuse, which tiling serves; a per-row scalar (a norm's mean, not
    # indexed by k) is a broadcast, not an operand
    reused = [name for name, rs in reads.items() if any(_moves(r, k, long_axes) for r in rs)]
    if len(reused) > 1 and not (few_rows and len(reused) == 2 and _few_rows(st)):
        return None
    axes = _trailing_axes(state, st, reads)
    extent = 1
    for v in axes:
        extent *= extents[v.name]
    choices = lane_choices(extent)
    return (tuple(v.name for v in axes), choices) if choices else None


def apply_vector_rfactor(sch: Schedule, block: str, axes: tuple, choices: tuple) -> None:
    """Fuse ``axes`` (the trailing reduction axes, one contiguous run) into ``k``, split it
    as (ko, ki) with ki a sampled lane count (a count that does not divide ``k`` leaves a
    guarded last round, a masked tail), rfactor ki into a block of partial results stored
    last (``[..., ki]``), loops ``spatial..., reductions..., ki`` so that ki is innermost
    (the post-processor vectorizes it), and state the reassociation on that block."""
    b = sch.get_block(block)
    st = sch.state.stage(block)
    loops = sch.get_loops(b)
    loops = loops[len(loops) - len(st.leaves) :]  # its own (a stage computed at a loop
    picked = [loops[st.leaves.index(a)] for a in axes]  # lists the loops around it first)
    loop = sch.fuse(*picked) if len(picked) > 1 else picked[0]
    axis = "*".join(axes)
    lanes = sch.sample_categorical(list(choices), [1.0 / len(choices)] * len(choices))
    _, ki = sch.split(loop, [None, lanes])
    rf = sch.rfactor(ki, len(st.op.axis))
    rf_stage = sch.state.stage(sch.get(rf).name)
    rf_loops = sch.get_loops(rf)
    rf_loops = rf_loops[len(rf_loops) - len(rf_stage.leaves) :]
    lane_pos = len(st.op.axis)  # the partial-result axis, right after the spatial ones
    order = [lp for p, lp in enumerate(rf_loops) if p != lane_pos] + [rf_loops[lane_pos]]
    if len(rf_stage.leaves) > lane_pos + 1:
        sch.reorder(*order)
    if not sch.state.stage(block).is_root:  # fused into a row loop: keep the partial
        own = sch.get_loops(sch.get_block(block))  # results there too, one row at a time
        n_spatial = len(sch.state.stage(block).op.axis)
        sch.compute_at(rf, own[len(own) - len(sch.state.stage(block).leaves) + n_spatial - 1])
    combiner = st.op.body[0].combiner if isinstance(st.op.body[0], E.Reduce) else "reduce"
    sch.annotate(
        rf,
        REASSOCIATION,
        f"{combiner} over {axis} reassociated: partial results in vector lanes, "
        f"summed horizontally by {block}",
    )
    # ... which the code generator may then use: in the partial results' loops the sign
    # of a zero is left open (a max without the -0 < +0 fix-up), and the horizontal step
    # combines the lanes as a tree (codegen/horizontal_reduce)
    sch.annotate(order[lane_pos], REASSOCIATE, 1)  # its outermost reduction loop
    sch.annotate(sch.get_loops(sch.get_block(block))[-1], HORIZONTAL, "tree")


def vector_rfactor_alt(state: State, st: Stage) -> list:
    """The sketch alternative (name, apply) of ``st``, or [] where the rule does not apply."""
    found = vector_reduction(state, st, few_rows=True)
    if found is None:
        return []
    axes, choices = found
    return [
        (
            f"rfactor({'*'.join(axes)}, vector lanes)",
            lambda sch, b: apply_vector_rfactor(sch, b, axes, choices),
        )
    ]


#: rows of a GEMV whose partial results are computed together (unrolled), each a stream
ROW_CHOICES = (2, 4, 8)


def _shares_a_vector(state: State, st: Stage, axis: str) -> bool:
    """Whether an operand of the reduction over ``axis`` is a vector shared by all the
    outputs along the last axis ``j`` (a GEMV's ``x``: indexed by ``k``, not by ``j``)."""
    if not st.op.axis:
        return False
    k = next(iv.var for iv in st.op.reduce_axis if iv.var.name == axis)
    j = st.op.axis[-1].var
    reads = [r for rs in _reads(state, st).values() for r in rs]
    return any(
        any(k in E.free_vars(i) for i in r) and not any(j in E.free_vars(i) for i in r)
        for r in reads
    )


def row_tiled_alt(state: State, st: Stage) -> list:
    """Partial results in vector lanes for several rows at once, or []: where an operand
    of the reduction is a vector shared by all rows (a GEMV's ``x``: indexed by ``k``,
    not by the last output axis ``j``), ``j`` is split as (jo, ji) with ``ji`` a sampled
    count of ``ROW_CHOICES`` unrolled inside the reduction loop: each ``x`` vector loaded
    serves ``ji`` rows, and ``ji`` weight rows stream at once with ``ji`` independent
    accumulator chains (measured on the BERT GEMV, CPU clock: 0.76-0.80 of the read
    bandwidth with one row, 0.86-0.88 with 2-8). The other output rows (a dense layer's
    few tokens, ``FEW_ROWS``) go inside the reduction loop too, unrolled: each weight
    vector loaded serves every token, and the weights stream once (``jo, ko, i, ji,
    ki``)."""
    found = vector_reduction(state, st, few_rows=True)
    if found is None or not _shares_a_vector(state, st, found[0][-1]):
        return []
    axes, choices = found
    axis = "*".join(axes)
    extent = derive_extents(st).get(st.op.axis[-1].var.name)
    rows = tuple(c for c in ROW_CHOICES if isinstance(extent, int) and extent % c == 0)
    if not rows:
        return []
    return [
        (
            f"rfactor({axis}, vector lanes x rows)",
            lambda sch, b: apply_row_tiled_rfactor(sch, b, axes, choices, rows),
        )
    ]


def apply_row_tiled_rfactor(sch: Schedule, block: str, axes: tuple, choices: tuple, rows: tuple):
    """``apply_vector_rfactor``, then the partial-result block's last spatial loop split
    by a sampled row count, its inner part unrolled between the reduction and the lanes
    (loops ``..., jo, ko, ji, ki``)."""
    apply_vector_rfactor(sch, block, axes, choices)
    rf = sch.get_block(block + "_rf")
    rf_stage = sch.state.stage(block + "_rf")
    loops = sch.get_loops(rf)
    loops = loops[len(loops) - len(rf_stage.leaves) :]
    n_spatial = len(sch.state.stage(block).op.axis)
    j, ko, ki = loops[n_spatial - 1], loops[-2], loops[-1]
    count = sch.sample_categorical(list(rows), [1.0 / len(rows)] * len(rows))
    jo, ji = sch.split(j, [None, count])
    tokens = [lp for lp in loops[: n_spatial - 1] if sch.get(lp).extent > 1]
    sch.reorder(jo, ko, *tokens, ji, ki)
    for lp in tokens:
        sch.unroll(lp)
    sch.unroll(ji)


def thread_split_alt(state: State, st: Stage, threads: int) -> list:
    """With ``threads`` cores, the reduction split across them (a parallel rfactor), or []:
    ``k = (kp, kr)`` with ``kp`` of extent ``threads`` factored out into a block of
    per-thread partial results ``S_rf[kp, ...] = sum_kr ...`` (its ``kp`` loop is spatial,
    so the sampled parallel annotation runs one ``kp`` per thread: each thread sums its
    share of the reduction), whose own ``kr`` then gets partial results in vector lanes;
    ``S`` adds the ``threads`` partial results. For a GEMV with few outputs and a long
    reduction, rows alone would leave threads idle or split a row's stream. Offered where
    the outputs share a vector (GEMV-like, ``_shares_a_vector``) only."""
    found = vector_reduction(state, st, few_rows=True)
    if found is None or threads < 2 or len(found[0]) != 1:
        return []
    (axis,), _ = found
    if not _shares_a_vector(state, st, axis):
        return []  # rows of a row reduction (softmax, norms) parallelize as they are
    extent = derive_extents(st).get(axis)
    if not isinstance(extent, int) or extent % threads:
        return []
    per = extent // threads
    choices = tuple(c for c in LANE_CHOICES if per % c == 0 and per // c >= 2)
    if not choices:
        return []
    return [
        (
            f"rfactor({axis}, {threads} threads x vector lanes)",
            lambda sch, b: apply_thread_split(sch, b, axis, threads, choices),
        )
    ]


def apply_thread_split(sch: Schedule, block: str, axis: str, threads: int, choices: tuple):
    """Split ``axis`` as (kp, kr) with ``threads`` parts, rfactor ``kp`` to the front of a
    per-thread partial-result block, then vector lanes over that block's ``kr``."""
    rf_name = _per_thread_rfactor(sch, block, axis, threads)
    rf_stage = sch.state.stage(rf_name)
    apply_vector_rfactor(sch, rf_name, (rf_stage.leaves[-1],), choices)


def _per_thread_rfactor(sch: Schedule, block: str, axis: str, threads: int) -> str:
    """Split ``axis`` as (kp, kr) with ``kp`` ``threads`` long and ``rfactor`` ``kp``, the
    reassociation stated on the per-thread partial-result block; its name."""
    st = sch.state.stage(block)
    loops = sch.get_loops(sch.get_block(block))
    loops = loops[len(loops) - len(st.leaves) :]
    kp, _ = sch.split(loops[st.leaves.index(axis)], [threads, None])
    rf = sch.rfactor(kp, 0)
    combiner = st.op.body[0].combiner if isinstance(st.op.body[0], E.Reduce) else "reduce"
    sch.annotate(
        rf,
        REASSOCIATION,
        f"{combiner} over {axis} reassociated: {threads} per-thread partial results, "
        f"added by {block}",
    )
    return sch.get(rf).name


# --------------------------------------------------------------------------------------
# Row fusion: the statistics of a row computed where the row is consumed


def _ancestors(state: State, st: Stage) -> list[Stage]:
    """Non-inlined compute stages ``st`` depends on, consumers first."""
    names: set = set()
    todo = [st.name]
    while todo:
        for p in state.producers(todo.pop()):
            if p.is_compute and p.name not in names:
                names.add(p.name)
                todo.append(p.name)
    ordered = [s for s in state.compute_stages() if s.name in names and not s.is_inlined]
    return list(reversed(ordered))


def row_fusion_loop(state: State, st: Stage) -> int | None:
    """Position of ``st``'s row loop when ``st`` is a root output that reads a
    reduction's result per row, else None. For an elementwise output (a norm's output,
    a softmax's ``exp / sum``) the row loop is all axes but the last; for a row
    reduction (an argmax's position pass, which reads the row maximum) it is all its
    spatial axes, the reduction running inside."""
    op = st.op
    if not st.is_root or any(st.relations) or not state.is_output(st):
        return None  # the output's row loop holds the whole chain; one place is enough
    if op.reduce_axis:
        if not op.axis or vector_reduction(state, st) is None:
            return None  # a matmul reading a row statistic is tiled, not fused by rows
        inner, at = {iv.var for iv in op.reduce_axis}, len(op.axis) - 1
    else:
        if len(op.axis) < 2:
            return None
        inner, at = {op.axis[-1].var}, len(op.axis) - 2
    for p in _ancestors(state, st):
        if not p.op.reduce_axis or state.is_output(p):
            continue
        for q in [p, *state.consumers(p.name)]:
            reads = effective_reads(state, st, q) if q is not st else []
            if reads and all(not inner & E.free_vars(i) for r in reads for i in r):
                return at
    return None


def apply_row_fusion(sch: Schedule, block: str, at: int, vector: bool = False) -> None:
    """Compute every stage ``block`` depends on inside its row loop ``at``, consumers
    first: each iteration computes one row's statistics (and the intermediate rows they
    read) right before the row is consumed, so the row is read from cache. A stage the
    loop cannot hold (an output, or one read by another stage outside it) stays where it
    is: ``compute_at`` refuses it atomically.

    With ``vector``, each reduction that qualifies (``vector_reduction``) first gets its
    partial results in vector lanes, which then live in the row loop too.
    """
    st = sch.state.stage(block)
    if _divides(st):  # the row is divided by its statistics: once per row, then multiply
        sch.annotate(sch.get_loops(sch.get_block(block))[at], RECIPROCAL, 1)
    if vector and st.op.reduce_axis:  # a row reduction's own partial results, which the
        found = vector_reduction(sch.state, st)  # loop below then computes per row too
        if found is not None:
            apply_vector_rfactor(sch, block, *found)
    if vector:
        for p in _ancestors(sch.state, st):
            found = vector_reduction(sch.state, p)
            if found is not None:
                apply_vector_rfactor(sch, p.name, *found)
    for p in _ancestors(sch.state, st):
        if sch.state.is_output(p):
            continue
        loop = sch.get_loops(sch.get_block(block))[at]
        try:
            sch.compute_at(sch.get_block(p.name), loop)
        except ScheduleError:
            continue


def _divides(st: Stage) -> bool:
    """Whether ``st``'s value divides floats (a softmax's ``exp / sum``)."""
    return any(
        isinstance(n, E.Div) and n.dtype.startswith("float")
        for b in st.op.body
        for n in E.post_order(b)
    )


#: A row this small stays in cache between the passes of a fused row (L1/L2) ...
ROW_IN_CACHE_BYTES = 64 << 10
#: ... and an output this large does not fit in L2 between separate passes: there the
#: fused program reads the input once from memory where separate passes read it three or
#: four times, with the same arithmetic, so the unfused alternative is dominated and not
#: offered. (Smaller problems keep it: their passes hit L2, and a layer norm ran alike.)
PASSES_MISS_CACHE_BYTES = 1 << 20


def row_fusion_alts(state: State, st: Stage) -> list:
    """Fuse rows (``apply_row_fusion``, with partial results in vector lanes where they
    fit) and leave the stages apart, except where a row stays in cache and the whole
    does not (``ROW_IN_CACHE_BYTES``, ``PASSES_MISS_CACHE_BYTES``).

    There the unfused programs are dominated, and offering them only let a noisy
    measurement choose one: of three seeded 64-trial softmax searches on a loaded
    machine, one kept an unfused program measured in a quiet moment (395 us against
    201-251 us for the fused ones)."""
    at = row_fusion_loop(state, st)
    if at is None:
        return []
    fuse = [("fuse rows", lambda sch, b: apply_row_fusion(sch, b, at, vector=True))]
    if st.op.reduce_axis:  # unfused, it keeps what the vector rule offers a reduction
        return fuse + vector_rfactor_alt(state, st) + [("skip", lambda sch, b: None)]
    item = dtypes.itemsize(st.op.dtype)
    row_bytes = int(st.op.axis[-1].dom.extent) * item
    total = item
    for iv in st.op.axis:
        total *= int(iv.dom.extent)
    if row_bytes <= ROW_IN_CACHE_BYTES and total > PASSES_MISS_CACHE_BYTES:
        return fuse
    return fuse + [("skip", lambda sch, b: None)]


# --------------------------------------------------------------------------------------
# Column reductions: the contiguous spatial axis innermost, the reduction around it


def column_reduction(state: State, st: Stage) -> bool:
    """``st`` reduces along a strided axis while its last spatial axis is the contiguous
    index of what it reads (``S[j] = sum_k A[k, j]``): the default loop order walks a
    column (one cache line per element); with ``j`` tiled inside the reduction, a row
    of ``A`` is read contiguously into a vector of partial sums."""
    op = st.op
    if not op.reduce_axis or not op.axis or any(st.relations) or op.attrs.get("ansor.rfactor"):
        return False
    if len(op.body) != 1 or not isinstance(op.body[0], E.Reduce):
        return False
    j = op.axis[-1].var
    if int(op.axis[-1].dom.extent) < 2:
        return False
    ks = {iv.var for iv in op.reduce_axis}
    reads = [r for rs in _reads(state, st).values() for r in rs]
    with_k = [r for r in reads if any(ks & E.free_vars(i) for i in r)]
    return bool(with_k) and all(r[-1] is j for r in with_k)


def column_reduction_alts(state: State, st: Stage) -> list:
    """Tile as S R S (the inner S vectorized, accumulating across the reduction: a column
    panel's partial sums stay in registers while the panel is walked down), or as R S S
    (the reduction outermost: each row of the input is read contiguously, start to end,
    into a row of partial sums held in L1). R S S streams the input in memory order,
    which the hardware prefetcher follows; S R S walks a panel with the row stride (one
    page per row on a 1024-wide fp32 input, which it does not follow): on a 1024 x 1024
    column sum, 154 us against 278 us (numpy 146 us)."""
    from .tiling import apply_multi_level_tiling  # noqa: PLC0415

    return [
        ("tile(SRS)", lambda sch, b: apply_multi_level_tiling(sch, b, structure="SRS")),
        ("tile(RSS)", lambda sch, b: apply_multi_level_tiling(sch, b, structure="RSS")),
    ]


def column_thread_alt(state: State, st: Stage) -> list:
    """With several cores: S R S S, the outer S a slice of columns per thread (the
    parallel loop), inside it R S S as above, each row of the slice read contiguously.
    R S S cannot run in parallel (its outermost loop is the reduction) and S R S walks
    the rows with a page stride; this keeps R S S's memory order within each thread."""
    from .tiling import apply_multi_level_tiling  # noqa: PLC0415

    return [("tile(SRSS)", lambda sch, b: apply_multi_level_tiling(sch, b, structure="SRSS"))]


def column_thread_split_alt(state: State, st: Stage, threads: int) -> list:
    """With ``threads`` cores, a column reduction split across them by rows, or []: ``k =
    (kp, kr)`` with ``kp`` of extent ``threads`` factored out (``S_rf[kp, j] = sum_kr A[kp
    * n + kr, j]``, ``kp`` the outermost loop: one block of rows per thread, read start to
    end as R S S does), then ``S[j] = sum_kp S_rf[kp, j]`` adds the ``threads`` rows of
    partial sums along ``j`` (vectorized). Slicing the columns instead
    (``column_thread_alt``) reads every row in pieces, the row stride between them: on two
    threads a 1024 x 1024 column sum ran at 176 GB/s that way, 214 GB/s split by rows (the
    streaming read: 220 GB/s)."""
    if threads < 2:
        return []
    axis = next((n for n in st.leaves if st.iters[n].kind == "reduce"), None)
    if axis is None:
        return []
    extent = derive_extents(st).get(axis)
    if not isinstance(extent, int) or extent % threads or extent < 2 * threads:
        return []
    return [
        (
            f"rfactor({axis}, {threads} threads) + tile(RSS)",
            lambda sch, b: apply_column_thread_split(sch, b, axis, threads),
        )
    ]


def apply_column_thread_split(sch: Schedule, block: str, axis: str, threads: int) -> None:
    """Split ``axis`` as (kp, kr) with ``threads`` parts and rfactor ``kp``; the partial
    results' loops become ``kp``, the reduction, the other spatial axes, then the last
    spatial axis in two sampled levels (the inner one vectorized); the adding block runs
    ``kp`` outermost over the same two levels of the last axis."""
    rf_name = _per_thread_rfactor(sch, block, axis, threads)
    _rows_then_vector(sch, rf_name, first=0)
    _rows_then_vector(sch, block, first=-1)


def _rows_then_vector(sch: Schedule, block: str, first: int) -> None:
    """Reorder ``block``'s loops as: the leaf at ``first``, the reduction leaves, the other
    spatial leaves, the last spatial leaf split in two sampled levels."""
    from .tiling import MAX_INNERMOST  # noqa: PLC0415

    st = sch.state.stage(block)
    loops = sch.get_loops(sch.get_block(block))
    loops = dict(zip(st.leaves, loops[len(loops) - len(st.leaves) :]))
    head = st.leaves[first]
    reduce = [n for n in st.leaves if st.iters[n].kind == "reduce" and n != head]
    spatial = [n for n in st.leaves if st.iters[n].kind == "spatial" and n != head]
    last = loops[spatial[-1]]
    tiles = sch.sample_perfect_tile(last, n=2, max_innermost_factor=MAX_INNERMOST)
    outer, inner = sch.split(last, tiles)
    order = [loops[head]] + [loops[n] for n in reduce + spatial[:-1]] + [outer, inner]
    sch.reorder(*order)
