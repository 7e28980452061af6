"""What the sketch rules read of a stage: is it elementwise, does it need multi-level
tiling, which consumer fuses into it, which input is worth packing or repacking.

Each function reads the current ``State`` (so earlier rules are taken into account).
"""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.dag import EXPENSIVE_CALLS
from ..dsl.dtypes import itemsize
from ..ir.simplify import linear_form
from ..schedule.inlined_reads import effective_consumers, effective_reads
from ..schedule.state import Stage, State

#: Smallest row (in bytes) of a tensor worth packing: from 1 KiB on, the rows of a tile
#: fall into few L1 sets (4 KiB apart in an 8-way 32 KiB L1) and pages; a short-row
#: tensor is read near-contiguously already and its copy would be pure overhead.
PACK_MIN_ROW_BYTES = 1024
#: An innermost output extent that is not a multiple of this many elements fills its
#: vectors partly (fp32: 8 lanes of AVX2, half a register of AVX-512); such a tile may
#: vectorize another axis instead, with the input it reads repacked (``relayout_read``).
VECTOR_ROW = 8


def is_injective(st: Stage) -> bool:
    """No reduction axes."""
    return not st.op.reduce_axis


def has_expensive_op(st: Stage) -> bool:
    """The body calls exp/log/tanh... (Ansor does not inline those blindly)."""
    return any(
        isinstance(n, E.Call) and n.op in EXPENSIVE_CALLS for n in E.post_order(st.op.body[0])
    )


def has_branch(st: Stage) -> bool:
    """The body chooses between values (``if_then_else`` / ``select``), e.g. padding."""
    return any(
        (isinstance(n, E.Call) and n.op == "if_then_else") or isinstance(n, E.Select)
        for n in E.post_order(st.op.body[0])
    )


def is_strictly_inlineable(state: State, st: Stage) -> bool:
    """Ansor's always-inline condition: elementwise, cheap, branch-free, not an output,
    has readers.

    A stage with a branch (a padding) read by a stage that is tiled for reuse (a
    convolution) is left to the compute-location sampling instead (inline, root, or a
    loop of its consumer), as Ansor's access analysis and MetaSchedule's CPU
    ``AutoInline(disallow_if_then_else=True)`` do: inlined into a convolution, the
    padding's guard runs in the innermost loop on every multiply-add, while computed per
    outer tile it costs one small copy and the inner loop has no guard. Read only by
    stages without such reuse (a pooling window), it is inlined: loop partitioning takes
    the guard out of every row and column but the edges, and a copy of the padded input
    only adds memory traffic (a max pool of ResNet-50: 105-115 us inlined, 130-180 us
    with the padding computed at a sampled loop, which 2 of 6 searches kept).
    """
    consumers = effective_consumers(state, st.name)
    return (
        is_injective(st)
        and not has_expensive_op(st)
        and not (has_branch(st) and any(needs_multi_level_tiling(state, c) for c in consumers))
        and not state.is_output(st)
        and bool(consumers)
        and st.op.tag != "cache"
    )  # a packing copy stays where the rule put it


def needs_multi_level_tiling(state: State, st: Stage) -> bool:
    """A reduction whose inputs miss at least two of its loop variables (data reuse).

    Not a block of partial results rfactor made: its layout (partial results last, in
    vector lanes) is the point, and its reads repeat one operand (a norm's centred
    square reads ``x[i, k] - mean[i]`` twice), which is no reuse across outputs."""
    if not st.op.reduce_axis or st.op.attrs.get("ansor.rfactor"):
        return False
    axis_vars = [iv.var for iv in st.op.axis]
    missing = 0
    for p in state.stages.values():
        if p is st:
            continue
        for index in effective_reads(state, st, p):
            used = set()
            for i in index:
                used |= E.free_vars(i)
            missing += sum(1 for v in axis_vars if v not in used)
    return missing >= 2


def fusible_consumer(state: State, st: Stage) -> Stage | None:
    """The single elementwise consumer that can be fused into ``st``'s tile, if any."""
    consumers = effective_consumers(state, st.name)
    if len(consumers) != 1:
        return None
    c = consumers[0]
    if not is_injective(c) or not c.is_root or tuple(c.op.shape) != tuple(st.op.shape):
        return None
    axis = [iv.var for iv in c.op.axis]
    reads = effective_reads(state, c, st)
    if not reads or any(
        len(r) != len(axis) or any(a is not b for a, b in zip(r, axis)) for r in reads
    ):
        return None  # fusion needs the consumer to read the producer at its own indices
    return c


def packable_read(state: State, st: Stage) -> str | None:
    """The input whose tile a register-tiled ``st`` would walk across rows: its last index
    is ``st``'s innermost spatial axis (the vectorized one) and an earlier index moves with
    a reduction axis, like B[k, j] in a matmul, and its rows are at least
    ``PACK_MIN_ROW_BYTES`` long. Long rows a power-of-two stride apart fall into few cache
    sets, so such a tile is worth copying into a contiguous buffer ("packing"), as
    OpenBLAS does and as TVM does by hand (its matmul tutorial's "array packing").
    Only placeholders (weights, inputs) qualify: a computed producer is scheduled itself.
    """
    if not st.op.reduce_axis or not st.op.axis:
        return None
    inner = st.op.axis[-1].var
    reduce_vars = {iv.var for iv in st.op.reduce_axis}
    for p in state.stages.values():
        if p is st or p.is_compute:
            continue
        row = p.op.shape[-1] if p.op.shape else 0
        if not isinstance(row, int) or row * itemsize(p.op.dtype) < PACK_MIN_ROW_BYTES:
            continue
        for index in effective_reads(state, st, p):
            if len(index) < 2 or index[-1] is not inner:
                continue
            if any(E.free_vars(i) & reduce_vars for i in index[:-1]):
                return p.op.name
    return None


def gathers_along(indices: tuple, var: E.Var) -> bool:
    """Whether an access's elements along ``var`` are not contiguous: ``var`` in an outer
    dimension, in a non-linear term of the last, or with a step other than 0 or 1 there
    (a stride-2 convolution's ``x[..., 2 * xx + rx]``)."""
    if not indices:
        return False
    if any(var in E.free_vars(i) for i in indices[:-1]):
        return True
    flat = indices[-1]
    form = linear_form(flat)
    if form is None:
        return var in E.free_vars(flat)
    step = sum(c for t, c in form[0].items() if t is var)
    nonlinear = any(t is not var and var in E.free_vars(t) for t in form[0])
    return nonlinear or step not in (0, 1)


def _strided_along(state: State, st: Stage, axis: int) -> bool:
    """Whether every input read whose contiguous (last) index moves with output ``axis``
    steps over elements along it: vectors along the axis would gather."""
    var = st.op.axis[axis].var
    moving = [
        index[-1:]
        for p in state.stages.values()
        if p is not st
        for index in effective_reads(state, st, p)
        if index and var in E.free_vars(index[-1])
    ]
    return bool(moving) and all(gathers_along(last, var) for last in moving)


def relayout_read(state: State, st: Stage) -> tuple[str, int, int] | None:
    """The input to repack so that ``st`` can vectorize a spatial axis other than its
    innermost one: ``(tensor, its dim, st's axis)``.

    Vectorizing the innermost axis wastes lanes when its extent is short and not a
    multiple of ``VECTOR_ROW`` (a 7x7 convolution output row: 7 of 8 lanes, and each
    7-float load takes four instructions). A convolution's weight ``kernel[ff, rc, ry,
    rx]`` is indexed by one spatial axis (ff) plus reduction axes only, and no other
    input depends on ff: with the weight panel copied as ``[rc, ry, rx, ff]`` (ff last,
    contiguous) the tile can vectorize ff instead, each weight vector meeting broadcast
    inputs, as TVM's NCHWc convolutions and Ansor's layout rewrite do.
    """
    if not st.op.reduce_axis or len(st.op.axis) < 2:
        return None
    last = len(st.op.axis) - 1
    if not isinstance(st.op.shape[last], int):
        return None
    if st.op.shape[last] % VECTOR_ROW == 0 and not _strided_along(state, st, last):
        return None
    axis_pos = {iv.var: a for a, iv in enumerate(st.op.axis)}
    reduce_vars = {iv.var for iv in st.op.reduce_axis}
    found = None
    for p in state.stages.values():
        if p is st or p.is_compute or found is not None:
            continue
        for index in effective_reads(state, st, p):
            spatial = {v for i in index for v in E.free_vars(i) if v in axis_pos}
            if len(spatial) != 1:
                continue
            (v,) = spatial
            dims = [d for d, i in enumerate(index) if i is v]
            if len(dims) != 1 or dims[0] == len(index) - 1:
                continue  # v must be a bare index, and not the last one already
            rest = set().union(*(E.free_vars(i) for d, i in enumerate(index) if d != dims[0]))
            a = axis_pos[v]
            if rest <= reduce_vars and a != last and st.op.shape[a] % VECTOR_ROW == 0:
                found = (p.op.name, dims[0], a)
                break
    if found is None:
        return None
    vector_var = st.op.axis[found[2]].var
    for p in state.stages.values():  # any other read moving with the axis would gather
        if p is st or p.op.name == found[0]:
            continue
        for index in effective_reads(state, st, p):
            if any(vector_var in E.free_vars(i) for i in index):
                return None
    return found


def transposed_read(state: State, st: Stage) -> tuple[str, int] | None:
    """The input ``st`` reads transposed: ``(tensor, dim)`` where ``dim`` is the
    input's dimension indexed by ``st``'s innermost spatial axis (the one the tile
    vectorizes), and the input's last, contiguous index moves with a reduction axis only.

    ``k[b, j, k]`` in ``q @ k^T`` (``topi.nn.batch_matmul``) and ``w[j, k]`` in
    ``topi.nn.dense``: vectorizing j there gathers one float per row, each a whole row
    apart. A panel of the input copied with ``dim`` last (``[b, k, j]``) is read as
    contiguous vectors instead, as oneDNN and OpenBLAS pack a transposed operand (a 2.2x
    faster batch matmul on AVX-512). Only placeholders qualify, as in ``packable_read``;
    ``None`` when a packable read (``packable_read``) is found first.
    """
    if not st.op.reduce_axis or not st.op.axis:
        return None
    inner = st.op.axis[-1].var
    reduce_vars = {iv.var for iv in st.op.reduce_axis}
    for p in state.stages.values():
        if p is st or p.is_compute:
            continue
        for index in effective_reads(state, st, p):
            if len(index) < 2 or not E.free_vars(index[-1]) or E.free_vars(index[-1]) - reduce_vars:
                continue
            dims = [d for d, i in enumerate(index) if i is inner]
            others = set().union(*(E.free_vars(i) for d, i in enumerate(index) if d not in dims))
            if len(dims) == 1 and inner not in others and _reuse(st, index) >= VECTOR_ROW:
                return p.op.name, dims[0]
    return None


def _reuse(st: Stage, index: tuple) -> int:
    """How many output points read each element at ``index``: the product of the
    extents of ``st``'s spatial axes the index does not use (1 for a GEMV's weight,
    whose copy would only add traffic)."""
    used = set().union(*(E.free_vars(i) for i in index))
    n = 1
    for iv, extent in zip(st.op.axis, st.op.shape):
        if iv.var not in used:
            n *= extent if isinstance(extent, int) else 1
    return n


def packed_axes(state: State, st: Stage, tensor: str) -> frozenset:
    """Names of ``st``'s spatial axes that index its reads of ``tensor`` (j for B[k, j])."""
    spatial = {iv.var: iv.var.name for iv in st.op.axis}
    used: set = set()
    for index in effective_reads(state, st, state.stage(tensor)):
        for i in index:
            used |= {spatial[v] for v in E.free_vars(i) if v in spatial}
    return frozenset(used)


def spatial_size(st: Stage) -> int:
    """Product of the output extents."""
    n = 1
    for d in st.op.shape:
        n *= d
    return n


def reduce_size(st: Stage) -> int:
    """Product of the reduction extents."""
    n = 1
    for iv in st.op.reduce_axis:
        n *= int(iv.dom.extent)
    return n
