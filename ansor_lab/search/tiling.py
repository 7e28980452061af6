"""Tiling a stage: Ansor's multi-level tiling and the steps the CPU sketches add to it.

``apply_multi_level_tiling`` splits each loop of a stage into levels (``CPU_STRUCTURE``,
SSRSRS: four spatial, two reduction) with sampled tile sizes and orders them, optionally
fusing an elementwise consumer at the outer tile, putting the axes of a packed input
outermost, vectorizing another axis than the last, or padding an axis no register tile
divides (``awkward_axes``: a prime extent gets vector-wide tiles, the last one guarded).
``apply_pack``, ``apply_transposed_pack`` and ``apply_relayout_pack`` copy an input's
panel where the tiles reuse it; ``apply_cache_write`` and ``apply_rfactor`` are Ansor's
cache-write and rfactor steps. The sketch rules (``sketch``) decide where each applies.
"""

from __future__ import annotations

from ..schedule.sampling import divisors
from ..schedule.state import Stage, derive_extents
from ..schedule.tir_schedule import Schedule

#: Ansor's CPU multi-level tiling structure: 4 spatial levels, 2 reduction levels.
CPU_STRUCTURE = "SSRSRS"
#: Largest innermost tile (it becomes the vectorized loop).
MAX_INNERMOST = 64
#: Unroll budgets the search chooses from (pragma_auto_unroll_max_step), Ansor's CPU
#: choices. A vectorized loop counts as one step (as in TVM), so 512 unrolls e.g. a
#: 2 x 7 register tile over a 3 x 3 window: the convolutions need it.
UNROLL_CHOICES = (0, 16, 64, 512)
#: A reduction axis this short (a convolution window's rows or columns) is not tiled:
#: it runs whole in the innermost reduction level, next to the register tile. Split
#: between the levels, the window's outer part went outside the long channel loop, so
#: each step of that loop jumped across the input and the weight panel: in a tuning of
#: ResNet-50's last conv, the 58 programs with its best register tile all had the window
#: outside and ran at 35 GFLOPS at most; the same tile with the window inside runs at 50.
SMALL_REDUCTION = 7


# --------------------------------------------------------------------------------------
# Rule applications (on a tir.Schedule, recording sampling instructions)


def apply_multi_level_tiling(
    sch: Schedule,
    block: str,
    fuse_consumer: str | None = None,
    structure: str = CPU_STRUCTURE,
    outer_axes: frozenset = frozenset(),
    vector_axis: str | None = None,
    padded: dict | None = None,
) -> int:
    """Tile ``block`` as ``structure`` (e.g. SSRSRS) with sampled tile sizes (reduction
    axes of at most ``SMALL_REDUCTION`` iterations are left whole in the last R level).

    With ``padded`` ({spatial axis: factor, or a tuple of factors to sample from},
    ``awkward_axes``), each of those axes is first split by its factor, which need not
    divide it (the last tile is guarded: a masked vector, or rows skipped), and the other
    levels tile the ``ceil(extent / factor)`` tiles: a prime extent (197 tokens) gets
    vector-wide register tiles instead of tiles of 1.

    With ``fuse_consumer``, that elementwise consumer is computed after the second
    spatial level (the outer tile), as Ansor's fusion rule does. With ``outer_axes``, the
    first two spatial levels of those axes go outside the first two levels of the other
    spatial axes (j_0 j_1 i_0 i_1 instead of i_0 j_0 i_1 j_1): everything inside the
    second level of ``outer_axes`` then reuses one panel of an input indexed by them.
    With ``vector_axis``, that axis's innermost level is the innermost loop (the one the
    post-processor vectorizes) instead of the last axis's.

    Returns the position (in ``get_loops``) of the last loop of ``outer_axes``' second
    level, or of the second spatial level when there are no ``outer_axes``.
    """
    b = sch.get_block(block)
    loops = sch.get_loops(b)
    st = sch.state.stage(block)
    n_s, n_r = structure.count("S"), structure.count("R")
    s_levels: list[list] = [[] for _ in range(n_s)]
    r_levels: list[list] = [[] for _ in range(n_r)]
    in_outer: list[bool] = []  # per spatial axis, in loop order
    extents = derive_extents(st)
    for loop, name in zip(loops, st.leaves):
        spatial = st.iters[name].kind == "spatial"
        levels, n = (s_levels, n_s) if spatial else (r_levels, n_r)
        if not spatial and (extents[name] <= SMALL_REDUCTION or n == 1):
            r_levels[-1].append(loop)  # a window axis runs whole in the innermost level
            continue
        if spatial and padded and name in padded:
            pad = padded[name]
            if isinstance(pad, tuple):  # a choice of widths, drawn like any decision
                pad = sch.sample_categorical(list(pad), [1.0 / len(pad)] * len(pad))
            tiles_of, inner = sch.split(loop, [None, pad])
            tiles = sch.sample_perfect_tile(tiles_of, n=n - 1, max_innermost_factor=0)
            parts = [*sch.split(tiles_of, tiles), inner]
        else:
            tiles = sch.sample_perfect_tile(loop, n=n, max_innermost_factor=MAX_INNERMOST)
            parts = sch.split(loop, tiles)
        for level, part in zip(levels, parts):
            level.append(part)
        if spatial:
            in_outer.append(name in outer_axes)
    order = []
    si = ri = 0
    spatial_names = [n for n in st.leaves if st.iters[n].kind == "spatial"]
    for ch in structure:
        if ch == "S":
            level = list(s_levels[si])
            if vector_axis is not None and si == n_s - 1:
                k = spatial_names.index(vector_axis)
                level = level[:k] + level[k + 1 :] + [level[k]]
            order += level
            si += 1
        else:
            order += r_levels[ri]
            ri += 1
    n_axes = len(in_outer)
    head = 2 * n_axes  # the loops of the first two spatial levels (structures start "SS")
    pack_at = head - 1
    if outer_axes:
        first = [s_levels[lv][a] for lv in (0, 1) for a in range(n_axes) if in_outer[a]]
        rest = [s_levels[lv][a] for lv in (0, 1) for a in range(n_axes) if not in_outer[a]]
        order[:head] = first + rest
        pack_at = len(first) - 1
    sch.reorder(*order)
    if fuse_consumer is not None and s_levels[1]:
        sch.reverse_compute_at(sch.get_block(fuse_consumer), order[head - 1])
    return pack_at


def apply_pack(sch: Schedule, block: str, tensor: str, at: int) -> None:
    """Read ``tensor`` through a "global" cache stage computed at loop ``at`` of ``block``
    (see ``apply_multi_level_tiling(outer_axes=...)``): each iteration of that loop
    copies the panel of ``tensor`` the loops inside it read, once, and they read it
    contiguously."""
    cache = sch.cache_read(sch.get_block(block), tensor, "global")
    sch.compute_at(cache, sch.get_loops(sch.get_block(block))[at])


def apply_transposed_pack(sch: Schedule, block: str, tensor: str, dim: int, at: int) -> object:
    """``apply_pack`` of an input read transposed (``transposed_read``): the copy stores
    ``dim`` last (``k[b, j, k]`` -> ``[b, k, j]``), so the vectorized loop of ``block``
    reads it as contiguous vectors; the copy's loops run in its storage order (contiguous
    writes). Returns ``block``'s handle."""
    b = sch.get_block(block)
    cache = sch.cache_read(b, tensor, "global")
    ndim = len(sch.state.stage(sch.get(cache).name).op.axis)
    perm = [d for d in range(ndim) if d != dim] + [dim]
    sch.transform_layout(cache, ("write", 0), perm)
    sch.compute_at(cache, sch.get_loops(b)[at])
    copy_loops = sch.get_loops(cache)[-ndim:]
    sch.reorder(*[copy_loops[d] for d in perm])
    return b


def apply_relayout_pack(
    sch: Schedule, block: str, tensor: str, dim: int, axis: int, at: int
) -> None:
    """Copy the panel of ``tensor`` used inside loop ``at`` of ``block`` with its ``dim``
    last (``kernel[ff, rc, ry, rx]`` -> ``[rc, ry, rx, ff]``, ``apply_transposed_pack``),
    and store ``block``'s own result with its ``axis`` last, so the vectorized ``axis``
    reads and writes contiguous vectors. The result is an intermediate (a fused or a
    cache-write tile), whose layout is free."""
    b = apply_transposed_pack(sch, block, tensor, dim, at)
    n_axes = len(sch.state.stage(block).op.axis)
    sch.transform_layout(b, ("write", 0), [a for a in range(n_axes) if a != axis] + [axis])


def apply_cache_write(sch: Schedule, block: str) -> str:
    """Add a local cache-write stage; returns the copy block to fuse into the tile."""
    rv = sch.cache_write(sch.get_block(block), 0, "local")
    return sch.get(rv).name


def apply_rfactor(sch: Schedule, block: str, inner: bool) -> None:
    """Split the (single) reduction loop in two and rfactor one part."""
    b = sch.get_block(block)
    loops = sch.get_loops(b)
    st = sch.state.stage(block)
    red = [lp for lp, n in zip(loops, st.leaves) if st.iters[n].kind == "reduce"]
    if len(red) > 1:
        red = [sch.fuse(*red)]
    tiles = sch.sample_perfect_tile(red[0], n=2, max_innermost_factor=MAX_INNERMOST)
    ko, ki = sch.split(red[0], tiles)
    sch.rfactor(ki if inner else ko, 0)


#: Rows of a register tile along an axis that is not vectorized, when that axis must be
#: padded (``awkward_axes``)
PADDED_ROWS = 4
#: Most registers of a padded vector tile (``awkward_axes``), and the share of the axis
#: a tile wider than one may add as padding (the prior does not see the wasted lanes)
PADDED_VECTORS = 3
PADDED_WASTE = 0.10
#: Vector loops (elements) an untiled stage's awkward innermost axis is split by
#: (``split_awkward_innermost``): one, two or four AVX-512 registers of fp32; such an
#: axis has no divisor from ``MIN_VECTOR_TILE`` (one AVX2 register of fp32) up
GUARDED_VECTORS = (16, 32, 64)
MIN_VECTOR_TILE = 8


def awkward(extent: object, tile: int, whole_tiles: bool = True) -> bool:
    """Whether ``extent`` (longer than two tiles of ``tile``) is better padded than tiled:
    no tile in [``tile``, ``MAX_INNERMOST``] divides it (197, prime), or (``whole_tiles``)
    none of them is a multiple of ``tile`` while padding to one adds at most
    ``PADDED_WASTE`` (CLIP's 77 tokens, 7 x 11: on AVX2 its only vector tile is 11 lanes,
    a full register and a 3-lane rest, where 80 is ten full ones). Not 56 (8 divides it),
    28 (14 divides it; padding to 32 adds 14%) or 7 (too short to pad)."""
    if not isinstance(extent, int) or extent <= 2 * tile:
        return False
    tiles = [d for d in divisors(extent) if tile <= d <= MAX_INNERMOST]
    if not tiles:
        return True
    padding = -extent % tile
    return (
        whole_tiles and not any(d % tile == 0 for d in tiles) and padding <= PADDED_WASTE * extent
    )


def split_awkward_innermost(sch: Schedule, loop, extent: int) -> bool:
    """Split an untiled stage's innermost ``loop`` of ``extent`` by a sampled vector width
    (``GUARDED_VECTORS``) that need not divide it, when no vector-wide factor does: the
    last piece is guarded, and loop partitioning makes it a narrower vector. A perfect
    split of 197 (a ViT's attention rows) is 197 x 1, a scalar loop: a softmax over them
    called a scalar exp per element (754 us, 0.30x PyTorch). False when a perfect split
    can hold a vector (the caller samples one)."""
    if not awkward(extent, MIN_VECTOR_TILE, whole_tiles=False):
        return False
    probs = [1.0 / len(GUARDED_VECTORS)] * len(GUARDED_VECTORS)
    sch.split(loop, [None, sch.sample_categorical(list(GUARDED_VECTORS), probs)])
    return True


def _vector_pads(extent: int, lanes: int) -> int | tuple:
    """The padded tile of a vectorized axis: one register, or a choice among one to
    ``PADDED_VECTORS`` of them, those that pad the axis by at most ``PADDED_WASTE`` of
    it. The other levels tile the padded tiles, and their count can lack the factors a
    wider register tile needs (251 / 8 -> 32 tiles has no factor 3; 197 / 8 -> 25 only
    5s); where the rows are padded too the register tile is ``PADDED_ROWS`` x this width,
    4 x 8 on AVX2: 4 accumulators, half what hides the multiply-add latency. Measured,
    one thread, AVX2: a 127 x 509 x 251 matmul's 4 x 24 tile ran at 579 us, 4 x 16 at
    633 (timed in turns)."""
    widths = [
        k * lanes
        for k in range(1, PADDED_VECTORS + 1)
        if k == 1 or -(-extent // (k * lanes)) * k * lanes - extent <= PADDED_WASTE * extent
    ]
    return widths[0] if len(widths) == 1 else tuple(widths)


def awkward_axes(st: Stage, lanes: int) -> dict:
    """{spatial axis: padded tile} for the axes of ``st`` whose extent no register tile
    divides well: the last (vectorized) axis when no divisor in [lanes, MAX_INNERMOST]
    divides it, another when none in [PADDED_ROWS, MAX_INNERMOST] does (197, a ViT's
    tokens, is prime: its only tiles are 1 and 197), whether or not the last axis is.
    A dense layer on 197 tokens (197 x 768 x 2304) with full vectors along its 2304
    outputs could only hold one row of accumulators (1 x 48: 3 vectors, their add chains
    waiting on the latency): five searches at 64 trials ended at 3.1 to 7.4 ms; with rows
    padded to 4 (4 x 48: 12 accumulators), four ended at 2.77 to 2.86 ms.

    Rows whose tiles divide them but none by ``PADDED_ROWS`` (77 = 7 x 11) are padded
    too where the padded vector tile may be two registers or more: 4 x 16 lanes on AVX2
    ran CLIP's 8 x 77 x 77 scores at 103 us, its rows tiled by 7 or 11 at 122 (timed in
    turns); where one register is all the vector tile may be (77 on AVX-512: 32 lanes
    would pad it by 25%), 4 rows would hold 4 accumulators and the rows keep their tiles.
    """
    extents = derive_extents(st)
    names = [iv.var.name for iv in st.op.axis]
    if not names:
        return {}
    last = names[-1]
    out = {last: _vector_pads(extents[last], lanes)} if awkward(extents.get(last), lanes) else {}
    wide = isinstance(out.get(last), tuple)
    for name in names[:-1]:
        if awkward(extents.get(name), PADDED_ROWS, whole_tiles=wide):
            out[name] = PADDED_ROWS
    return out
