"""GPU post-processing: cooperative fetching of shared caches and the unroll budget.

Like ``postproc`` for the CPU, a deterministic function of the schedule's state (its
steps are recorded after ``enter_postproc``, so the stored trace replays the program):

* a shared cache annotated ``ansor.cooperative_fetch = v`` has its fill loops fused, split
  by the number of threads of the block it is computed in (the extent of the enclosing
  ``threadIdx.x`` loop) and, where ``v`` (or a smaller power of two) divides the fill, by
  ``v``: the middle part is bound to ``threadIdx.x``, the inner part vectorized (float2 /
  float4 loads), so the threads of a block copy the tile together;
* a root stage annotated ``ansor.unroll = n`` gets ``pragma_auto_unroll_max_step = n`` on
  its outermost loop.
"""

from __future__ import annotations

from ..schedule.tir_schedule import Schedule
from .gpu_sketch import COOP_FETCH_KEY


def enclosing_threads(sch: Schedule, block: str) -> int:
    """Extent of the ``threadIdx.x`` loop around ``block`` (0 when there is none)."""
    st = sch.state.stage(block)
    loops = sch.get_loops(sch.get_block(block))
    for rv in loops[: len(loops) - len(st.leaves)]:
        info = sch.get(rv)
        if info.annotation == "threadIdx.x":
            return int(info.extent)
    return 0


def cooperative_fetch(sch: Schedule, block: str, vector: int) -> None:
    """Fuse the fill loops of shared cache ``block``, spread them over the block's
    threads and vectorize the innermost ``vector`` elements (see the module docstring)."""
    threads = enclosing_threads(sch, block)
    st = sch.state.stage(block)
    if threads <= 0 or not st.leaves:
        return
    loops = sch.get_loops(sch.get_block(block))[-len(st.leaves) :]
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    extent = int(sch.get(fused).extent)
    v = max(1, vector)
    while v > 1 and extent % v:
        v //= 2
    if v > 1 and extent >= threads * v:
        _, tx, vec = sch.split(fused, [None, threads, v])
        sch.bind(tx, "threadIdx.x")
        sch.vectorize(vec)
    else:
        _, tx = sch.split(fused, [None, threads])
        sch.bind(tx, "threadIdx.x")


def apply_gpu_postproc(sch: Schedule) -> None:
    """Read the GPU ``ansor.*`` annotations and apply the steps they ask for."""
    sch.enter_postproc()
    for st in list(sch.state.compute_stages()):
        if st.is_inlined:
            continue
        ann = st.pragmas.get("", {})
        if COOP_FETCH_KEY in ann:
            cooperative_fetch(sch, st.name, int(ann[COOP_FETCH_KEY]))
        unroll = int(ann.get("ansor.unroll", 0))
        if unroll > 0 and sch.state.stage(st.name).is_root:
            loops = sch.get_loops(sch.get_block(st.name))
            sch.annotate(loops[0], "pragma_auto_unroll_max_step", unroll)
