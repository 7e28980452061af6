"""``merge``: loops of the same extent and depth from different blocks become one loop.

TVM's ``Schedule.merge`` puts the later nests' bodies under the first nest's loop. Here
the later block is computed after that loop's body (``Merged``, an ``After``) with its
merged axis running as the host's loop, one index per iteration; a second merge one
level deeper adds the next axis. A block may read what the same iteration of the host
wrote (bound inference checks it), never more.
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..attachment import Merged, Root
from ..loop_kinds import SPATIAL
from ..state import State, derive_extents
from .checks import validate
from .common import leaf, step_error

PRIM = "merge"


def merged_leaves(state: State, block: str) -> set[str]:
    """``block``'s loops that run as another block's loops after ``merge`` (hidden)."""
    st = state.stage(block)
    if not isinstance(st.attach, Merged):
        return set()
    return {st.root[axis].name for axis, _ in st.attach.axes}


def _depth(state: State, block: str, loop: str) -> int:
    st = state.stage(block)
    own = [lp for lp in st.leaves if lp not in merged_leaves(state, block)]
    return len(state.enclosing_loops(block)) + own.index(loop)


def merge(state: State, loops: list[tuple[str, str]]) -> tuple[str, str]:
    """Merge ``(block, loop)`` pairs into the first block's loop; returns that loop."""
    if len(loops) < 2:
        raise ScheduleError("merge: needs at least two loops (of different blocks)")
    blocks = [b for b, _ in loops]
    if len(set(blocks)) != len(blocks):
        raise ScheduleError(
            f"merge: two loops of block {sorted({b for b in blocks if blocks.count(b) > 1})[0]!r}; "
            "merge loops of different blocks (fuse joins loops of one block)"
        )
    order = list(state.stages)
    # the host is the nest that runs first; a block already merged into it comes after it
    loops = sorted(
        loops,
        key=lambda bl: (
            order.index(state.attach_chain(bl[0])[-1].name),
            len(state.attach_chain(bl[0])),
        ),
    )
    extent = None
    for b, lp in loops:
        st = leaf(state, b, lp, PRIM)
        if lp in st.annotations:
            raise step_error(
                PRIM, b, f"is annotated ({st.annotations[lp]}); merge loops before annotating", lp
            )
        ext = derive_extents(st)[lp]
        if extent is not None and ext != extent:
            raise step_error(
                PRIM, b, f"has extent {ext}, the other loops {extent}; only loops of the same "
                "extent merge", lp,
            )  # fmt: skip
        extent = ext
    host, hloop = loops[0]
    hst = state.stage(host)
    depth = _depth(state, host, hloop)
    for b, lp in loops[1:]:
        st = state.stage(b)
        if _depth(state, b, lp) != depth:
            raise step_error(
                PRIM, b, f"is at depth {_depth(state, b, lp)}, loop {hloop!r} of {host!r} at "
                f"depth {depth}; merge loops at the same nesting depth", lp,
            )  # fmt: skip
        if isinstance(st.attach, Root):
            if depth != 0:
                raise step_error(PRIM, b, "merge the outer loops first (outermost first)", lp)
            prev: tuple = ()
        elif isinstance(st.attach, Merged) and st.attach.block == host:
            pos = hst.leaves.index(hloop) if hloop in hst.leaves else -1
            if pos == 0 or hst.leaves[pos - 1] != st.attach.loop:
                raise step_error(
                    PRIM, b, f"was merged at {host}.{st.attach.loop}; the next merge takes "
                    f"the loop right inside it, not {hloop!r}", lp,
                )  # fmt: skip
            prev = st.attach.axes
        else:
            raise step_error(
                PRIM, b, f"is computed inside another block ({st.attach}); merge loops of "
                "top-level nests", lp,
            )  # fmt: skip
        roots = [it.name for it in st.root]
        if lp not in roots or st.iters[lp].kind != SPATIAL:
            raise step_error(
                PRIM, b, "is split, fused or a reduction loop; merge the block's own spatial "
                "loops (split the merged loop afterwards is not supported either: split "
                "both nests the same way first)", lp,
            )  # fmt: skip
        axis = roots.index(lp)
        if axis >= len(st.op.axis) or int(st.op.axis[axis].dom.min) != 0:
            raise step_error(PRIM, b, "does not start at 0", lp)
        st.attach = Merged(host, hloop, prev + ((axis, hloop),))
    for b, _ in loops[1:]:
        validate(state, PRIM, b)
    return host, hloop
