"""Post-processing: turn the sampled annotations into parallel / vectorize / unroll steps.

It is a deterministic function of the schedule's state, so a candidate is fully given
by its sketch and decisions; the steps are recorded after ``enter_postproc`` so the
stored trace replays the exact program.
"""

from __future__ import annotations

from ..errors import ScheduleError
from ..schedule.state import derive_extents
from ..schedule.tir_schedule import Schedule
from .sketch import MAX_INNERMOST


def _attached_loops(sch: Schedule, block: str) -> set:
    return {s.attach.loop for s in sch.state.attached_to(block)}


def parallelize(sch: Schedule, block: str, depth: int) -> None:
    """Fuse up to ``depth`` outer spatial loops of a root block and run them in parallel.

    Loops of extent 1 (a batch of one: a GEMV's row of ``x``, a convolution's ``n``) are
    fused in but do not count toward ``depth``: a parallel loop of extent 1 runs on one
    thread, and depth 1 would otherwise leave every such program serial."""
    st = sch.state.stage(block)
    busy = _attached_loops(sch, block)
    loops = sch.get_loops(sch.get_block(block))
    extents = derive_extents(st)
    chosen, counted = [], 0
    for rv, name in zip(loops, st.leaves):
        if st.iters[name].kind != "spatial" or counted == depth:
            break
        chosen.append(rv)
        counted += extents.get(name) != 1
        if name in busy:  # a fused loop may carry attachments only as its innermost part
            break
    if not chosen:
        return
    fused = sch.fuse(*chosen) if len(chosen) > 1 else chosen[0]
    sch.parallel(fused)


def vectorize_innermost(sch: Schedule, block: str) -> None:
    """Vectorize the innermost loop of a block that has more than one iteration.

    Loops of extent 1 after it vanish when the program is lowered, so the chosen loop
    is innermost in the generated code. It must be spatial, short enough, and carry no
    other block.
    """
    st = sch.state.stage(block)
    loops = sch.get_loops(sch.get_block(block))
    loops = loops[len(loops) - len(st.leaves) :]  # (one get_loops: each is a trace step)
    busy = _attached_loops(sch, block)
    for rv, name in reversed(list(zip(loops, st.leaves))):
        extent = sch.get(rv).extent
        if name in busy:
            return
        if extent == 1:
            continue
        if (
            st.iters[name].kind == "spatial"
            and name not in st.annotations
            and 2 <= extent <= MAX_INNERMOST
        ):
            sch.vectorize(rv)
        return


def apply_postproc(sch: Schedule) -> None:
    """Read the ``ansor.*`` annotations and apply the steps they ask for."""
    sch.enter_postproc()
    for st in list(sch.state.compute_stages()):
        if st.is_inlined:
            continue
        ann = st.pragmas.get("", {})
        if st.is_root:
            depth = int(ann.get("ansor.parallel", 0))
            if depth > 0:
                try:
                    parallelize(sch, st.name, depth)
                except ScheduleError:
                    pass  # nothing fusable at the top: stays serial
        vectorize_innermost(sch, st.name)
        unroll = int(ann.get("ansor.unroll", 0))
        if unroll > 0 and sch.state.stage(st.name).is_root:
            loops = sch.get_loops(sch.get_block(st.name))
            sch.annotate(loops[0], "pragma_auto_unroll_max_step", unroll)
