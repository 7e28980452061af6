"""Loop transformations: split, fuse, reorder, annotate (parallel, vectorize, unroll,
bind) and pragma."""

from __future__ import annotations

from ...dsl.dtypes import INDEX_MAX
from ...dsl.tensor import THREAD_TAGS
from ..loop_kinds import PARALLEL, REDUCE, VECTORIZE, annotation
from ..state import (
    After,
    Fuse,
    Iter,
    Split,
    Stage,
    State,
    ThreadBinding,
    derive_extents,
    index_tree_size,
)
from .checks import check_parallel_nesting, revalidate_regions
from .common import compute_stage, leaf, set_extents, step_error

#: the longest loop name split and fuse derive by TVM's rule (``i_0``, ``i_0_j_1_fused``);
#: a longer one is replaced by a short name with a counter, so that rounds of
#: ``fuse(split(l, 2))`` do not double the name's length each time
MAX_LOOP_NAME = 40
#: the most loops one block may have: lowering and code generation recurse once per
#: loop level, and no kernel needs more (split refuses more parts, sample_perfect_tile more n)
MAX_LOOPS = 64
#: the largest index expression (in nodes, counted as a tree) splits and fuses may leave
#: a root loop with; each level of a split of some of a fuse's loops (not all) doubles it
MAX_INDEX_NODES = 2000


def _loop_name(st: Stage, base: str, tag: str) -> str:
    """A fresh name for a new loop of ``st``: TVM's ``base`` while it is short, else the
    first word of it, ``tag`` and a counter (``i_fused_37``), unique in the stage."""
    if len(base) <= MAX_LOOP_NAME:
        return st.fresh_name(base)
    head = base.split("_", 1)[0][:16] or "l"
    k = len(st.iters)  # grows with every loop the stage ever had: usually free at once
    while f"{head}_{tag}_{k}" in st.iters:
        k += 1
    return f"{head}_{tag}_{k}"


def split(state: State, block: str, loop: str, factors: list) -> list[str]:
    """Split ``loop`` into ``len(factors)`` loops; one factor may be None (inferred)."""
    st = leaf(state, block, loop, "split")
    extent = derive_extents(st)[loop]
    if not isinstance(factors, (list, tuple)):
        raise step_error("split", block, f"factors must be a list, got {factors!r}", loop)
    if len(factors) < 2:
        raise step_error("split", block, f"needs at least two factors, got {factors!r}", loop)
    if len(st.leaves) + len(factors) - 1 > MAX_LOOPS:
        raise step_error(
            "split",
            block,
            f"{len(factors)} factors would give the block {len(st.leaves) + len(factors) - 1} "
            f"loops; a block may have at most {MAX_LOOPS}: split into fewer parts",
            loop,
        )
    nones = [k for k, f in enumerate(factors) if f is None]
    if len(nones) > 1:
        raise step_error("split", block, f"at most one factor may be None, got {factors!r}", loop)
    for f in factors:
        if f is not None and (not isinstance(f, int) or isinstance(f, bool) or f < 1):
            raise step_error(
                "split", block, f"factors must be positive ints or None, got {f!r}", loop
            )
    known = 1
    for f in factors:
        if f is not None:
            known *= f
    if nones:
        factors = list(factors)
        factors[nones[0]] = -(-extent // known)
    elif known < extent:
        raise step_error(
            "split",
            block,
            f"factors {list(factors)} multiply to {known} but the loop has extent {extent}; "
            "make them multiply to at least the extent, or put None for the one to infer",
            loop,
        )
    covered = 1
    for f in factors:
        covered *= f
    if covered > INDEX_MAX:
        # the split rebuilds the index as ((i0 * f1) + i1) * f2 + ...: every partial
        # product must fit the int32 index, or the loop wraps around and computes garbage
        raise step_error(
            "split",
            block,
            f"factors {list(factors)} cover {covered} iterations, beyond the int32 loop "
            f"index range (at most {INDEX_MAX}); the loop has extent {extent}: use factors "
            f"that multiply to about {extent} (a larger factor only adds skipped iterations)",
            loop,
        )
    kind = st.iters[loop].kind
    names = []
    for k in range(len(factors)):
        name = _loop_name(st, f"{loop}_{k}", str(k))
        st.iters[name] = Iter(name, 0, kind)
        names.append(name)
    inner = covered // factors[0]
    # as TVM: a given outer factor past what the extent needs stays (its iterations past
    # the extent are guarded off), so the loops are the ones the user wrote
    outer = factors[0] if factors[0] != -(-extent // inner) else None
    st.relations.append(Split(loop, tuple(names), tuple(factors[1:]), outer))
    pos = st.leaves.index(loop)
    st.leaves[pos : pos + 1] = names
    st.annotations.pop(loop, None)
    st.pragmas.pop(loop, None)
    state.move_attachments(block, loop, names[-1])
    if st.init_at == loop:
        st.init_at = names[0]
    set_extents(st)
    _check_index_size(st, "split", loop)
    revalidate_regions(state, "split", block)
    return names


def _check_index_size(st: Stage, prim: str, loop: str) -> None:
    size = index_tree_size(st)
    if size > MAX_INDEX_NODES:
        raise step_error(
            prim,
            st.name,
            f"after {len(st.relations)} splits and fuses a loop's index would be an "
            f"expression of {size} nodes (at most {MAX_INDEX_NODES}); split and fuse the "
            "original loops once, with the factors you want, rather than in rounds",
            loop,
        )


def fuse(state: State, block: str, loops: list[str]) -> str:
    """Fuse adjacent loops (outer to inner) into one."""
    if not loops:
        raise step_error("fuse", block, "needs at least one loop")
    st = compute_stage(state, block, "fuse")
    for lp in loops:
        leaf(state, block, lp, "fuse")
    if len(loops) == 1:
        return loops[0]
    pos = [st.leaves.index(lp) for lp in loops]
    if pos != list(range(pos[0], pos[0] + len(loops))):
        raise step_error(
            "fuse",
            block,
            f"loops {loops} are not adjacent and in order (current order: {st.leaves}); "
            "reorder them first",
            loops[0],
        )
    kinds = {st.iters[lp].kind for lp in loops}
    if len(kinds) > 1:
        raise step_error(
            "fuse", block, "cannot fuse a spatial loop with a reduction loop", loops[0]
        )
    for lp in loops[:-1]:
        if state.attached_to(block, lp):
            who = ", ".join(s.name for s in state.attached_to(block, lp))
            raise step_error(
                "fuse",
                block,
                f"block(s) {who} are computed at this loop, which fuse would remove; "
                "fuse first, then compute_at",
                lp,
            )
    extents = derive_extents(st)
    fused = 1
    for lp in loops:
        fused *= extents[lp]
    if fused > INDEX_MAX:
        raise step_error(
            "fuse",
            block,
            f"the fused loop would have extent {fused} "
            f"({' * '.join(str(extents[lp]) for lp in loops)}), beyond the int32 loop index "
            f"range (at most {INDEX_MAX}); fuse fewer loops, or split one first",
            loops[0],
        )
    name = _loop_name(st, "_".join(loops) + "_fused", "fused")
    st.iters[name] = Iter(name, 0, kinds.pop())
    st.relations.append(Fuse(tuple(loops), name))
    st.leaves[pos[0] : pos[0] + len(loops)] = [name]
    for lp in loops:
        st.annotations.pop(lp, None)
        st.pragmas.pop(lp, None)
    state.move_attachments(block, loops[-1], name)
    if st.init_at in loops:
        st.init_at = name
    set_extents(st)
    _check_index_size(st, "fuse", loops[0])
    revalidate_regions(state, "fuse", block)
    return name


def reorder(state: State, block: str, loops: list[str]) -> None:
    """Put ``loops`` in the given order, in the positions they occupy together."""
    st = compute_stage(state, block, "reorder")
    for lp in loops:
        leaf(state, block, lp, "reorder")
    if len(set(loops)) != len(loops):
        raise step_error("reorder", block, f"a loop is listed twice in {loops}")
    slots = sorted(st.leaves.index(lp) for lp in loops)
    for slot, lp in zip(slots, loops):
        st.leaves[slot] = lp
    _check_reduction_order(state, st, "reorder")
    revalidate_regions(state, "reorder", block)


def _check_reduction_order(state: State, st: Stage, prim: str) -> None:
    first_reduce = next(
        (k for k, lp in enumerate(st.leaves) if st.iters[lp].kind == REDUCE),
        len(st.leaves),
    )
    for s in state.attached_to(st.name):
        if isinstance(s.attach, After) and st.leaves.index(s.attach.loop) >= first_reduce:
            raise step_error(
                prim,
                st.name,
                f"block {s.name!r} is computed after loop {s.attach.loop!r}, which would "
                "now be inside a reduction loop: it would read partial results",
            )
    if st.init_at is not None and st.leaves.index(st.init_at) > first_reduce:
        raise step_error(prim, st.name, "the decomposed init would land inside a reduction loop")


def annotate_loop(state: State, block: str, loop: str, kind: str, prim: str) -> None:
    """Mark a loop parallel / vectorize / unroll, or bind it to a thread tag.

    ``kind`` is the user's spelling ("parallel", "vectorize", "unroll" or a thread tag
    such as "threadIdx.x"); the stage stores the typed ``annotation`` of it.
    """
    st = leaf(state, block, loop, prim)
    ann = annotation(kind)
    is_reduce = st.iters[loop].kind == REDUCE
    if ann in (PARALLEL, VECTORIZE) and is_reduce:
        what = "parallelize" if ann == PARALLEL else "vectorize"
        raise step_error(
            prim,
            block,
            f"cannot {what} a reduction loop: its iterations all update the same element "
            f"of {st.op.name!r}; {what} a spatial loop, or rfactor the reduction first",
            loop,
        )
    if isinstance(ann, ThreadBinding):
        if ann.tag not in THREAD_TAGS:
            raise step_error(
                prim, block, f"unknown thread {kind!r}; use one of {THREAD_TAGS}", loop
            )
        if is_reduce and not ann.tag.startswith("threadIdx"):
            raise step_error(
                prim,
                block,
                f"a reduction loop bound to {kind} would race: only threadIdx.* can share "
                "a reduction (a cross-thread reduction); bind it to threadIdx.x, or bind "
                "a spatial loop instead",
                loop,
            )
        for other, have in st.annotations.items():
            if have == ann and other != loop:
                raise step_error(prim, block, f"{kind} is already bound to loop {other!r}", loop)
    st.annotations[loop] = ann
    if ann == PARALLEL:
        check_parallel_nesting(state, prim, block)
    if isinstance(ann, ThreadBinding):
        # a shared stage computed inside now spans this thread loop: its region grows
        revalidate_regions(state, prim, block)


def pragma(state: State, block: str, loop: str | None, key: str, value: object) -> None:
    """Attach ``key = value`` to a loop (or, with loop None, to the block's outermost loop)."""
    st = compute_stage(state, block, "annotate")
    if loop is not None:
        leaf(state, block, loop, "annotate")
    if not isinstance(key, str) or not key:
        raise step_error(
            "annotate", block, f"annotation key must be a non-empty string, got {key!r}"
        )
    if not isinstance(value, (int, float, str, bool)):
        raise step_error(
            "annotate", block, f"annotation value must be a number or string: {value!r}"
        )
    st.pragmas.setdefault(loop or "", {})[key] = value
