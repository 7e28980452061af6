"""Compute locations: compute_at, reverse_compute_at, compute_root, compute_inline and
reverse_compute_inline, with the checks that decide whether a block may go there."""

from __future__ import annotations

from ...dsl import expr as E
from ..inlined_reads import effective_consumers, effective_reads
from ..loop_kinds import REDUCE
from ..state import (
    INLINE,
    ROOT,
    After,
    At,
    Fuse,
    Iter,
    Split,
    Stage,
    State,
)
from .checks import validate
from .common import compute_stage, leaf, set_extents, step_error


def _transitive_consumers(state: State, block: str) -> set[str]:
    out: set[str] = set()
    todo = [block]
    while todo:
        b = todo.pop()
        for c in state.consumers(b) + effective_consumers(state, b):
            if c.name not in out:
                out.add(c.name)
                todo.append(c.name)
    return out


def compute_at(state: State, block: str, target: str, loop: str) -> None:
    """Compute ``block`` inside ``target``'s ``loop``, just the region read there."""
    st = compute_stage(state, block, "compute_at")
    leaf(state, target, loop, "compute_at")
    if target == block:
        raise step_error("compute_at", block, "cannot compute a block at its own loop", loop)
    if state.is_output(st):
        raise step_error("compute_at", block, "is an output of the function; it must stay at root")
    if target not in _transitive_consumers(state, block):
        raise step_error(
            "compute_at",
            block,
            f"{target!r} does not read {block!r} (directly or through other blocks); "
            "compute a producer at a loop of one of its consumers",
            loop,
        )
    if target in {s.name for s in state.attached_to(block)}:
        raise step_error("compute_at", block, f"{target!r} is computed inside {block!r}")
    st.attach = At(target, loop)
    validate(state, "compute_at", block)


def reverse_compute_at(state: State, block: str, target: str, loop: str) -> None:
    """Compute consumer ``block`` right after ``target``'s ``loop`` body, on what it wrote."""
    st = compute_stage(state, block, "reverse_compute_at")
    tst = leaf(state, target, loop, "reverse_compute_at")
    op = st.op
    if op.reduce_axis:
        raise step_error(
            "reverse_compute_at",
            block,
            "has a reduction; only elementwise consumers can follow a producer's tile "
            "(compute_at the producer into this block instead)",
        )
    reads = effective_reads(state, st, tst)
    if not reads:
        raise step_error("reverse_compute_at", block, f"does not read {target!r}", loop)
    axis_vars = {iv.var for iv in op.axis}
    for idx in reads:
        if idx != reads[0] or not all(isinstance(i, E.Var) and i in axis_vars for i in idx):
            raise step_error(
                "reverse_compute_at",
                block,
                f"reads {target!r} as {tst.op.name}[{', '.join(map(str, idx))}]; it must read "
                "it at its own loop variables (an elementwise consumer)",
                loop,
            )
    order = list(state.stages)
    producers = [
        p
        for p in state.compute_stages()
        if not p.is_inlined and p is not st and effective_reads(state, st, p)
    ]
    for p in producers:
        if p.name != target and p.is_root:
            if order.index(p.name) > order.index(target):
                raise step_error(
                    "reverse_compute_at",
                    block,
                    f"also reads {p.name!r}, which is computed after {target!r}",
                    loop,
                )
    first_reduce = next(
        (k for k, lp in enumerate(tst.leaves) if tst.iters[lp].kind == REDUCE), None
    )
    if first_reduce is not None and tst.leaves.index(loop) >= first_reduce:
        raise step_error(
            "reverse_compute_at",
            block,
            f"loop {loop!r} of {target!r} is inside its reduction loop "
            f"{tst.leaves[first_reduce]!r}: {block!r} would read partial results; pick a "
            "loop outside the reduction loops",
            loop,
        )
    st.attach = After(target, loop)
    validate(state, "reverse_compute_at", block)


def compute_root(state: State, block: str) -> None:
    """Compute ``block`` at the top level again (undo compute_at / reverse_compute_at)."""
    st = state.stage(block)
    if not st.is_compute:
        raise step_error("compute_root", block, "is an input placeholder")
    st.attach = ROOT
    _set_root_extents(st)
    validate(state, "compute_root", block)


def _set_root_extents(st: Stage) -> None:
    op = st.op
    full = [int(iv.dom.extent) for iv in op.axis] + [int(iv.dom.extent) for iv in op.reduce_axis]
    st.root = tuple(Iter(it.name, ext, it.kind) for it, ext in zip(st.root, full))
    for it in st.root:
        st.iters[it.name] = it
    set_extents(st)


def compute_inline(state: State, block: str) -> None:
    """Substitute ``block``'s expression into every reader; the block disappears."""
    st = compute_stage(state, block, "compute_inline")
    if st.op.reduce_axis:
        raise step_error(
            "compute_inline",
            block,
            "is a reduction and cannot be inlined; compute_at it into its consumer instead",
        )
    if state.is_output(st):
        raise step_error(
            "compute_inline", block, "is an output of the function and must be computed"
        )
    if not state.consumers(block):
        raise step_error("compute_inline", block, "has no consumer to inline into")
    attached = [s.name for s in state.attached_to(block)]
    if attached:
        raise step_error("compute_inline", block, f"blocks {attached} are computed inside it")
    st.attach = INLINE
    validate(state, "compute_inline", block)


def reverse_compute_inline(state: State, block: str) -> None:
    """Fold elementwise consumer ``block`` into its producer's loops (an epilogue)."""
    st = compute_stage(state, block, "reverse_compute_inline")
    op = st.op
    if op.reduce_axis:
        raise step_error("reverse_compute_inline", block, "has a reduction; it cannot be inlined")
    producers = [p for p in state.producers(block) if p.is_compute and not p.is_inlined]
    if len(producers) != 1:
        raise step_error(
            "reverse_compute_inline",
            block,
            f"must read exactly one computed block, reads {[p.name for p in producers]}",
        )
    prod = producers[0]
    if prod.op.reduce_axis:
        raise step_error(
            "reverse_compute_inline",
            block,
            f"its producer {prod.name!r} is a reduction: the epilogue would run on partial "
            "sums; use reverse_compute_at to a loop outside the reduction instead",
        )
    if state.is_output(prod):
        raise step_error(
            "reverse_compute_inline", block, f"its producer {prod.name!r} is an output"
        )
    if len(state.consumers(prod.name)) != 1:
        raise step_error("reverse_compute_inline", block, f"{prod.name!r} has other consumers")
    axis_vars = [iv.var for iv in op.axis]
    for n in E.post_order(op.body[0]):
        if isinstance(n, E.TensorLoad) and n.tensor.op.name == prod.op.name:
            if len(n.indices) != len(axis_vars) or any(
                i is not v for i, v in zip(n.indices, axis_vars)
            ):
                raise step_error(
                    "reverse_compute_inline",
                    block,
                    f"reads {prod.name!r} at [{', '.join(map(str, n.indices))}]; it must read "
                    "it at its own loop variables in order",
                )
    if tuple(prod.op.shape) != tuple(op.shape):
        raise step_error("reverse_compute_inline", block, f"shape differs from {prod.name!r}")
    rename = {p.name: c.name for p, c in zip(prod.root, st.root)}

    def r(name: str) -> str:
        return rename.get(name, name)

    st.iters = {r(n): Iter(r(n), it.extent, it.kind) for n, it in prod.iters.items()}
    st.root = tuple(st.iters[r(it.name)] for it in prod.root)
    st.leaves = [r(n) for n in prod.leaves]
    st.relations = [
        Split(r(x.parent), tuple(map(r, x.children)), x.factors, x.outer)
        if isinstance(x, Split)
        else Fuse(tuple(map(r, x.children)), r(x.fused))
        for x in prod.relations
    ]
    st.annotations = {r(k): v for k, v in prod.annotations.items()}
    st.pragmas = {r(k): dict(v) for k, v in prod.pragmas.items()}
    st.attach = prod.attach
    for s in state.attached_to(prod.name):
        s.attach = s.attach.retargeted(block, r(s.attach.loop))
    prod.attach = INLINE
    validate(state, "reverse_compute_inline", block)
