"""Ansor's GPU sketch rules and random annotation, for tasks whose target is CUDA.

The rules have the CPU rules' shape (``sketch.SketchRule``: a condition and named
alternatives, stages visited consumers first) and print the same way; what they build is
a CUDA schedule (see ``ir.gpu`` for the loop IR it lowers to):

* ``always_inline`` — every injective stage that is not an output is inlined, expensive
  or branchy ones too (a padding, an ``exp``): on a GPU recomputing is cheaper than a
  trip through global memory, as Ansor's ``ShouldAlwaysBeInlined`` decides for GPUs;
* ``cross_thread_reduction`` — a reduction with little spatial and much reduction work
  (a softmax row sum) has its reduction loops fused, split by a sampled thread count and
  the inner part bound to ``threadIdx.x``: the threads of a block share one reduction;
* ``multi_level_tiling`` — "SSSRRSRS": each spatial loop split in 5 levels, each
  reduction loop in 3, the first three spatial levels fused and bound to ``blockIdx.x``,
  ``vthread`` and ``threadIdx.x``; the result accumulates in a "local" cache written back
  by each thread; each input is read through a "shared" cache computed at the outer
  reduction tile and filled cooperatively (the post-processor binds its fill loops to
  the block's threads, see ``gpu_postproc``). ``+fuse(D)`` computes an elementwise
  consumer inside the thread, reading the registers;
* ``special_compute_location`` — Ansor's GPU rule: a stage whose only consumer asks for
  it (``ansor.simplify_const_tensor_indices``, as Winograd's constant transforms do) is
  computed at that consumer's last loop before its unrolled ones.

Random annotation (``annotate_gpu``, Ansor's InitThreadBind / InitUnroll) then binds every
root stage still unbound (its outer spatial loops fused, split by a sampled thread count,
bound to ``blockIdx.x`` / ``threadIdx.x``), samples the vector length of each cooperative
fetch and the ``pragma_auto_unroll_max_step`` of each stage with a reduction.
"""

from __future__ import annotations

from ..schedule.inlined_reads import effective_consumers
from ..schedule.loop_kinds import ThreadBinding
from ..schedule.state import Stage, State, derive_extents
from ..schedule.tir_schedule import Schedule
from .sketch import SketchRule, fusible_consumer, is_injective, needs_multi_level_tiling

#: Ansor's GPU multi-level tiling: 5 spatial levels, 3 reduction levels.
GPU_STRUCTURE = "SSSRRSRS"
#: Largest innermost tile of an axis (the per-thread register tile's last level).
GPU_MAX_INNERMOST = 64
#: Unroll budgets (``pragma_auto_unroll_max_step``), Ansor's GPU choices.
GPU_UNROLL_CHOICES = (0, 16, 64, 512, 1024)
#: Vector lengths of a cooperative fetch's innermost loop (float, float2, float4).
FETCH_VECTOR_CHOICES = (1, 2, 4)
#: Threads per block tried for a stage bound by ``annotate_gpu`` or a cross-thread reduction.
THREAD_CHOICES = (32, 64, 128, 256, 512, 1024)
#: The consumer attribute that asks for the special compute location (Ansor's key).
SPECIAL_LOCATION_KEY = "ansor.simplify_const_tensor_indices"
#: The block annotation the post-processor reads to fill a shared cache cooperatively.
COOP_FETCH_KEY = "ansor.cooperative_fetch"


# --------------------------------------------------------------------------------------
# Stage analysis


def is_gpu_inlineable(state: State, st: Stage) -> bool:
    """Injective, not an output, read by someone, and not a cache copy the rules made."""
    return (
        is_injective(st)
        and not state.is_output(st)
        and bool(effective_consumers(state, st.name))
        and st.op.tag != "cache"
    )


def _spatial_len(st: Stage) -> int:
    n = 1
    for d in st.op.shape:
        n *= int(d)
    return n


def _reduce_len(st: Stage) -> int:
    n = 1
    for iv in st.op.reduce_axis:
        n *= int(iv.dom.extent)
    return n


def needs_cross_thread_reduction(state: State, st: Stage, max_threads: int, warp: int) -> bool:
    """TVM's condition: a multi-level-tiling candidate with fewer than ``max_threads``
    outputs and more reduction than spatial work, or any other reduction longer than a warp.
    """
    if not st.op.reduce_axis or not st.is_root or st.op.attrs.get("ansor.rfactor"):
        return False
    space, red = _spatial_len(st), _reduce_len(st)
    if needs_multi_level_tiling(state, st):
        return space <= max_threads and space < red
    return red > warp


def thread_choices(extent: int, max_threads: int) -> list[int]:
    """Thread counts worth trying for ``extent`` iterations: at most ``max_threads``, and
    none past the first that covers the extent (more threads would only idle)."""
    out = []
    for t in THREAD_CHOICES:
        if t > max_threads:
            break
        out.append(t)
        if t >= extent:
            break
    return out or [max(1, min(max_threads, extent))]


def bound_tags(st: Stage) -> set:
    """The thread tags bound to ``st``'s loops."""
    return {str(a) for a in st.annotations.values() if isinstance(a, ThreadBinding)}


# --------------------------------------------------------------------------------------
# Rule applications


def apply_gpu_multi_level_tiling(
    sch: Schedule, block: str, consumers: tuple = (), structure: str = GPU_STRUCTURE
) -> str:
    """Tile ``block`` as ``structure`` with sampled tile sizes and bind its first three
    spatial levels to blockIdx.x / vthread / threadIdx.x; ``consumers`` (blocks) are
    computed inside the thread's loop. Returns the name of the loop that the shared caches
    go to (the last loop of the outer reduction tile, or the thread loop without one)."""
    b = sch.get_block(block)
    loops = sch.get_loops(b)
    st = sch.state.stage(block)
    n_s, n_r = structure.count("S"), structure.count("R")
    s_levels: list[list] = [[] for _ in range(n_s)]
    r_levels: list[list] = [[] for _ in range(n_r)]
    for loop, name in zip(loops, st.leaves):
        spatial = st.iters[name].kind == "spatial"
        levels, n = (s_levels, n_s) if spatial else (r_levels, n_r)
        tiles = sch.sample_perfect_tile(loop, n=n, max_innermost_factor=GPU_MAX_INNERMOST)
        for level, part in zip(levels, sch.split(loop, tiles)):
            level.append(part)
    order, si, ri = [], 0, 0
    for ch in structure:
        if ch == "S":
            order += s_levels[si]
            si += 1
        else:
            order += r_levels[ri]
            ri += 1
    sch.reorder(*order)
    bound = []
    for level, tag in zip(s_levels[:3], ("blockIdx.x", "vthread", "threadIdx.x")):
        fused = sch.fuse(*level) if len(level) > 1 else level[0]
        sch.bind(fused, tag)
        bound.append(fused)
    for c in consumers:
        sch.reverse_compute_at(sch.get_block(c), bound[-1])
    at = r_levels[0][-1] if r_levels and r_levels[0] else bound[-1]
    return sch.get(at).name


def add_shared_caches(sch: Schedule, block: str, at_loop: str) -> list[str]:
    """Read every producer of ``block`` through a "shared" cache computed at its loop
    ``at_loop``; returns the caches' block names."""
    names = []
    seen: set = set()
    for p in sch.state.producers(block):
        if not p.op.shape or p.is_inlined or p.op.name in seen:
            continue  # a scalar needs no tile
        seen.add(p.op.name)
        b = sch.get_block(block)
        cache = sch.cache_read(b, p.op.name, "shared")
        loops = sch.get_loops(b)
        idx = [sch.get(lp).name for lp in loops].index(at_loop)
        sch.compute_at(cache, loops[idx])
        names.append(sch.get(cache).name)
    return names


def apply_gpu_tiling_rule(sch: Schedule, block: str, fuse: str | None = None) -> None:
    """The multi-level tiling alternative: a local cache-write, SSSRRSRS tiles bound to
    the thread hierarchy, shared caches of the inputs. With ``fuse`` (an elementwise
    consumer) the consumer reads the registers directly (the write-back copy is inlined)."""
    rv = sch.cache_write(sch.get_block(block), 0, "local")
    copy = sch.get(rv).name
    at = apply_gpu_multi_level_tiling(sch, block, consumers=(copy,))
    if fuse is not None:
        sch.compute_inline(sch.get_block(copy))
        tx = _thread_loop(sch, block)
        sch.reverse_compute_at(sch.get_block(fuse), tx)
    add_shared_caches(sch, block, at)


def _thread_loop(sch: Schedule, block: str):
    st = sch.state.stage(block)
    loops = sch.get_loops(sch.get_block(block))
    for rv, name in zip(loops, st.leaves):
        if st.annotations.get(name) == ThreadBinding("threadIdx.x"):
            return rv
    raise AssertionError(f"{block} has no threadIdx.x loop")


def apply_cross_thread_reduction(sch: Schedule, block: str, max_threads: int) -> None:
    """Fuse the reduction loops, split them by a sampled thread count and bind the inner
    part to threadIdx.x (the spatial loops are bound to blockIdx.x by ``annotate_gpu``)."""
    b = sch.get_block(block)
    st = sch.state.stage(block)
    loops = sch.get_loops(b)
    red = [lp for lp, n in zip(loops, st.leaves) if st.iters[n].kind == "reduce"]
    fused = sch.fuse(*red) if len(red) > 1 else red[0]
    choices = thread_choices(_reduce_len(st), max_threads)
    t = sch.sample_categorical(choices, [1.0 / len(choices)] * len(choices))
    _, inner = sch.split(fused, [None, t])
    sch.bind(inner, "threadIdx.x")


def apply_special_compute_location(sch: Schedule, block: str) -> None:
    """Compute ``block`` at its consumer's last loop before the first unrolled one (or its
    innermost spatial loop)."""
    (consumer,) = effective_consumers(sch.state, block)
    loops = sch.get_loops(sch.get_block(consumer.name))
    at = None
    for rv, name in zip(loops, consumer.leaves):
        if (
            str(consumer.annotations.get(name, "")) == "unroll"
            or consumer.iters[name].kind != "spatial"
        ):
            break
        at = rv
    if at is not None:
        sch.compute_at(sch.get_block(block), at)


# --------------------------------------------------------------------------------------
# Rules


def gpu_rules(max_threads: int = 1024, warp: int = 32) -> list[SketchRule]:
    """The GPU sketch rules for a target with ``max_threads`` per block."""

    def inline_alts(state, st):
        return [("inline", lambda sch, b: sch.compute_inline(sch.get_block(b)))]

    def special_condition(state, st):
        cons = effective_consumers(state, st.name)
        return (
            st.is_root
            and bool(state.producers(st.name))
            and len(cons) == 1
            and bool(cons[0].op.attrs.get(SPECIAL_LOCATION_KEY))
        )

    def special_alts(state, st):
        return [("special_compute_location", apply_special_compute_location)]

    def tiling_alts(state, st):
        c = fusible_consumer(state, st)
        alts = [("cache_write+tile", lambda sch, b: apply_gpu_tiling_rule(sch, b))]
        if c is not None:
            name = c.name
            alts.append(
                (f"tile+fuse({name})", lambda sch, b: apply_gpu_tiling_rule(sch, b, fuse=name))
            )
        return alts

    def cross_condition(state, st):
        return needs_cross_thread_reduction(state, st, max_threads, warp)

    def cross_alts(state, st):
        cross = (
            "cross_thread_reduction",
            lambda sch, b: apply_cross_thread_reduction(sch, b, max_threads),
        )
        if needs_multi_level_tiling(state, st):
            return [cross] + tiling_alts(state, st)
        return [cross, ("skip", lambda sch, b: None)]

    return [
        SketchRule("always_inline", is_gpu_inlineable, inline_alts),
        SketchRule("special_compute_location", special_condition, special_alts),
        SketchRule("cross_thread_reduction", cross_condition, cross_alts),
        SketchRule(
            "multi_level_tiling",
            lambda state, st: needs_multi_level_tiling(state, st) and st.is_root,
            tiling_alts,
        ),
    ]


# --------------------------------------------------------------------------------------
# Random annotation


def _is_cross_thread(st: Stage) -> bool:
    return any(
        a == ThreadBinding("threadIdx.x") and st.iters[n].kind == "reduce"
        for n, a in st.annotations.items()
    )


def bind_root_stage(sch: Schedule, block: str, max_threads: int) -> None:
    """Fuse the outer spatial loops of a root stage and bind them: to blockIdx.x alone
    when its reduction already runs across threadIdx.x, else split by a sampled thread
    count into blockIdx.x and threadIdx.x (Ansor's InitThreadBind)."""
    st = sch.state.stage(block)
    loops = sch.get_loops(sch.get_block(block))
    extents = derive_extents(st)
    outer, names = [], []
    for rv, name in zip(loops, st.leaves):
        if st.iters[name].kind != "spatial" or name in st.annotations:
            break
        outer.append(rv)
        names.append(name)
    if not outer:
        return  # no spatial loop: nothing to spread over blocks
    fused = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    if _is_cross_thread(st):
        sch.bind(fused, "blockIdx.x")
        return
    total = 1
    for n in names:
        total *= extents[n]
    choices = thread_choices(total, max_threads)
    t = sch.sample_categorical(choices, [1.0 / len(choices)] * len(choices))
    bx, tx = sch.split(fused, [None, t])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")


def annotate_gpu(sch: Schedule, max_threads: int = 1024) -> None:
    """GPU random annotation recorded as sampling steps (see the module docstring)."""
    for st in list(sch.state.compute_stages()):
        st = sch.state.stage(st.name)
        if st.is_inlined:
            continue
        if st.scope == "shared" and st.op.tag == "cache":
            n = len(FETCH_VECTOR_CHOICES)
            v = sch.sample_categorical(list(FETCH_VECTOR_CHOICES), [1.0 / n] * n)
            sch.annotate(sch.get_block(st.name), COOP_FETCH_KEY, v)
            continue
        if not st.is_root:
            continue
        if "blockIdx.x" not in bound_tags(st):
            bind_root_stage(sch, st.name, max_threads)
        if sch.state.stage(st.name).op.reduce_axis:
            n = len(GPU_UNROLL_CHOICES)
            u = sch.sample_categorical(list(GPU_UNROLL_CHOICES), [1.0 / n] * n)
            sch.annotate(sch.get_block(st.name), "ansor.unroll", u)
