"""What every primitive shares: the error it raises and the handles it checks."""

from __future__ import annotations

from ...dsl.tuple_reduce import op_combiner
from ...errors import ScheduleError
from ..state import Iter, Stage, State, derive_extents

#: steps a tuple reduction (argmax) refuses: its outputs are written by one loop nest at
#: the top level; its loops may still be split, reordered, fused and annotated
_TUPLE_REFUSED = {
    "compute_at", "reverse_compute_at", "compute_inline", "reverse_compute_inline",
    "cache_read", "cache_write", "rfactor", "decompose_reduction", "set_scope",
    "storage_align", "transform_layout", "merge",
}  # fmt: skip


def step_error(prim: str, block: str, msg: str, loop: str | None = None) -> ScheduleError:
    """The error of primitive ``prim`` on ``block`` (and ``loop``), saying why."""
    where = f"block {block!r}" + (f", loop {loop!r}" if loop else "")
    return ScheduleError(f"{prim}: {where}: {msg}")


def compute_stage(state: State, block: str, prim: str) -> Stage:
    """The compute stage called ``block`` (placeholders cannot be scheduled)."""
    st = state.stage(block)
    if not st.is_compute:
        raise step_error(prim, block, "is an input placeholder; only computed blocks are scheduled")
    if st.is_inlined:
        raise step_error(prim, block, "was inlined (compute_inline) and has no loops any more")
    comb = op_combiner(st.op)
    if comb is not None:
        first = comb.group.ops[0].name
        if comb.index > 0:
            raise step_error(
                prim, block, f"is output {comb.index} of tuple reduction {first!r} "
                f"({comb.name}): it is computed by block {first!r}'s loops; schedule {first!r}",
            )  # fmt: skip
        if prim in _TUPLE_REFUSED:
            raise step_error(
                prim, block, f"is a tuple reduction ({comb.name}): its outputs are written "
                "together by its own loop nest at the top level; split, reorder, fuse, "
                "parallel, unroll or vectorize its loops instead",
            )  # fmt: skip
    return st


def leaf(state: State, block: str, loop: str, prim: str) -> Stage:
    """The stage owning ``loop``, checking that the loop still exists."""
    st = compute_stage(state, block, prim)
    if loop not in st.leaves:
        if loop in st.iters:
            raise step_error(
                prim,
                block,
                "this loop handle is stale: an earlier split or fuse replaced the loop; "
                "use the loops that step returned",
                loop,
            )
        raise step_error(prim, block, "no such loop", loop)
    return st


def set_extents(st: Stage) -> None:
    """Store every derived iter's extent (for display and validation)."""
    extents = derive_extents(st)
    for name, it in list(st.iters.items()):
        if it.extent != extents.get(name, it.extent):
            st.iters[name] = Iter(name, extents[name], it.kind)
