"""Checks after a step: bound inference, producer-before-reader order, parallel nesting.

A primitive changes its copy of the State, then calls ``validate`` (or, for a step that
only changed loops, ``revalidate_regions``); a failure becomes the step's ScheduleError.
"""

from __future__ import annotations

from ...errors import LoweringError
from ..bounds import ReaderOutsideError, infer_regions
from ..inlined_reads import read_ops
from ..loop_kinds import PARALLEL
from ..state import Inline, Iter, Nested, Root, State
from .common import set_extents, step_error


def refresh_extents(state: State) -> None:
    """Recompute the root extents of attached stages from bound inference."""
    if not any(isinstance(s.attach, Nested) for s in state.stages.values()):
        return
    regions = infer_regions(state)
    for s in state.stages.values():
        if s.name not in regions:
            continue
        exts = regions[s.name]
        s.root = tuple(Iter(it.name, ext, it.kind) for it, ext in zip(s.root, exts))
        for it in s.root:
            s.iters[it.name] = it
        set_extents(s)


def refresh_regions(state: State, prim: str, block: str) -> None:
    """Bound inference after a step; a failure is the step's error.

    A TE-style state (``state.defer_bound_checks``) accepts one kind of failure, as TVM's
    TE schedule does: its steps may pass through states where a block is computed at a
    loop that some reader still runs outside of (the tutorials compute_at a cache, then
    its reader). The stored extents then stay as they were until a later step infers
    again (they only seed split's inferred factor and the displayed extents: lowering
    infers every region afresh, and raises the same error if the final state is still
    invalid).
    """
    try:
        refresh_extents(state)
    except ReaderOutsideError as err:
        if not state.defer_bound_checks:
            raise step_error(prim, block, str(err)) from None
    except LoweringError as err:
        raise step_error(prim, block, str(err)) from None


def revalidate_regions(state: State, prim: str, block: str) -> None:
    """After a loop change of ``block``: the blocks computed inside it get new regions.

    Only bound inference is needed (attachments and annotations did not change), and
    only when some block is computed inside ``block``'s loops.
    """
    if state.attached_to(block):
        refresh_regions(state, prim, block)


def validate(state: State, prim: str, block: str) -> None:
    """Every check after a step that moved a block or changed what it computes."""
    refresh_regions(state, prim, block)
    check_order(state, prim, block)
    check_parallel_nesting(state, prim, block)


def check_order(state: State, prim: str, block: str) -> None:
    """Every root-level producer must run before the top-level nest that reads it."""
    order = {name: k for k, name in enumerate(state.stages)}
    # (isinstance rather than the Stage properties: this runs over stage pairs every step)
    live = [s for s in state.compute_stages() if not isinstance(s.attach, Inline)]
    roots = [s for s in live if isinstance(s.attach, Root)]
    for reader in live:
        top = state.attach_chain(reader.name)[-1]
        late = [
            p for p in roots if p is not reader and p is not top and order[p.name] > order[top.name]
        ]
        if not late:
            continue
        read = read_ops(state, reader)
        for p in late:
            if p.op.name in read:
                where = "" if top is reader else f" (it runs inside the loops of {top.name!r})"
                raise step_error(
                    prim,
                    block,
                    f"block {reader.name!r} would read {p.name!r} before {p.name!r} is "
                    f"computed{where}; do this step before moving {reader.name!r} there",
                )


def check_parallel_nesting(state: State, prim: str, block: str) -> None:
    """Reject a parallel loop inside another one: the CPU thread pool cannot nest them."""
    for st in state.compute_stages():
        if isinstance(st.attach, Inline):
            continue
        par: list[tuple[str, str]] = []
        chain = state.attach_chain(st.name)
        for inner, outer in zip([None] + chain[:-1], chain):
            stop = len(outer.leaves) if inner is None else outer.leaves.index(inner.attach.loop) + 1
            par = [
                (outer.name, lp)
                for lp in outer.leaves[:stop]
                if outer.annotations.get(lp) == PARALLEL
            ] + par
        if len(par) > 1:
            (ob, ol), (ib, il) = par[0], par[1]
            raise step_error(
                prim,
                block,
                f"loop {ib}.{il} would be a parallel loop inside the parallel loop {ob}.{ol}; "
                "nested parallel loops are not supported: parallelize only the outer one, or "
                "fuse the loops and parallelize the fused loop",
            )
