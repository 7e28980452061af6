"""The init a decompose_reduction splits off a block (TVM's "C_init"): its handle and
its loops.

The init is not a block of the State: lowering emits it inside the reduction block's own
nest, before the decomposition loop, over copies of the spatial loops inside it. Its
handle (``InitBlock``) names it; ``get_loops`` of it gives the block's loops outside the
decomposition point and ``InitLoop`` handles for its own copies, which vectorize, unroll
and parallel annotate apart from the update's loops (``Stage.init_annotations``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ScheduleError
from .loop_kinds import REDUCE, VECTORIZE
from .state import State


@dataclass(frozen=True)
class InitLoop:
    """A loop of a decomposed reduction's init (``get_loops`` of the "C_init" handle):
    the init's own copy of ``block``'s spatial loop ``loop``, which vectorize, unroll and
    parallel annotate apart from the update's loop (TVM's ``ax0_init`` loops)."""

    block: str
    loop: str


def annotate_init_loop(state: State, loop: InitLoop, kind: Any) -> None:
    """Run the init's copy of ``loop.loop`` as ``kind`` (parallel, vectorized, unrolled)."""
    st = state.stages.get(loop.block)
    if st is None or st.init_at is None or loop.loop not in st.leaves:
        raise ScheduleError(
            f"{loop.block}_init has no loop {loop.loop!r} any more; get its loops again"
        )
    own = [lp for lp in st.leaves[st.leaves.index(st.init_at) :] if st.iters[lp].kind != REDUCE]
    if loop.loop not in own:
        raise ScheduleError(f"{loop.loop!r} is not a loop of {loop.block}_init")
    if kind == VECTORIZE and loop.loop != own[-1]:
        raise ScheduleError(
            f"vectorize: {loop.loop!r} is not the innermost loop of {loop.block}_init "
            f"({own[-1]!r} is)"
        )
    st.init_annotations[loop.loop] = kind


@dataclass(frozen=True)
class InitBlock:
    """What the handle ``decompose_reduction`` returns stands for: the init of ``block``.

    TVM returns the new init block ("C_init"). Here the init is not a block of the State:
    it is emitted inside the reduction block's own loop nest, before the chosen loop, and
    follows that block's loop schedule. So the handle names the init (``sch.get(rv).name``
    is "C_init", ``get_block("C_init")`` returns it once the reduction is decomposed, and
    traces record and replay it), and a primitive given it says to schedule the reduction
    block instead, rather than silently acting on the reduction block.
    """

    block: str

    @property
    def name(self) -> str:
        """The init's name, as TVM names the init block."""
        return f"{self.block}_init"
