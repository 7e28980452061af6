"""Schedule primitives as functions that change a State.

Each function validates its inputs, changes the State it is given and returns the names
of what it created. Callers hand it a copy and keep the copy only on success, so a
ScheduleError leaves the original untouched (see ``tir_schedule``). Every error names
the primitive, the block and loop, and the reason.
"""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.intrin import reduce_identity
from ..dsl.tensor import THREAD_TAGS, ComputeOp, Tensor
from ..errors import LoweringError, ScheduleError
from ..ir.nodes import SCOPES
from .bounds import ReaderOutsideError, infer_regions
from .loop_kinds import annotation
from .state import (
    INLINE,
    ROOT,
    After,
    At,
    Fuse,
    Iter,
    IterKind,
    LoopKind,
    Split,
    Stage,
    State,
    ThreadBinding,
    derive_extents,
    effective_consumers,
    effective_reads,
    inlined_body,
    make_stage,
    pass_up,
)


def _err(prim: str, block: str, msg: str, loop: str | None = None) -> ScheduleError:
    where = f"block {block!r}" + (f", loop {loop!r}" if loop else "")
    return ScheduleError(f"{prim}: {where}: {msg}")


def compute_stage(state: State, block: str, prim: str) -> Stage:
    """The compute stage called ``block`` (placeholders cannot be scheduled)."""
    st = state.stage(block)
    if not st.is_compute:
        raise _err(prim, block, "is an input placeholder; only computed blocks are scheduled")
    if st.is_inlined:
        raise _err(prim, block, "was inlined (compute_inline) and has no loops any more")
    return st


def leaf(state: State, block: str, loop: str, prim: str) -> Stage:
    """The stage owning ``loop``, checking that the loop still exists."""
    st = compute_stage(state, block, prim)
    if loop not in st.leaves:
        if loop in st.iters:
            raise _err(
                prim,
                block,
                "this loop handle is stale: an earlier split or fuse replaced the loop; "
                "use the loops that step returned",
                loop,
            )
        raise _err(prim, block, "no such loop", loop)
    return st


# --------------------------------------------------------------------------------------
# Loop transformations


def split(state: State, block: str, loop: str, factors: list) -> list[str]:
    """Split ``loop`` into ``len(factors)`` loops; one factor may be None (inferred)."""
    st = leaf(state, block, loop, "split")
    extent = derive_extents(st)[loop]
    if len(factors) < 2:
        raise _err("split", block, f"needs at least two factors, got {factors!r}", loop)
    nones = [k for k, f in enumerate(factors) if f is None]
    if len(nones) > 1:
        raise _err("split", block, f"at most one factor may be None, got {factors!r}", loop)
    for f in factors:
        if f is not None and (not isinstance(f, int) or isinstance(f, bool) or f < 1):
            raise _err("split", block, f"factors must be positive ints or None, got {f!r}", loop)
    known = 1
    for f in factors:
        if f is not None:
            known *= f
    if nones:
        factors = list(factors)
        factors[nones[0]] = -(-extent // known)
    elif known != extent:
        raise _err(
            "split",
            block,
            f"factors {list(factors)} multiply to {known} but the loop has extent {extent}; "
            "make them multiply to the extent, or put None for the one to infer",
            loop,
        )
    kind = st.iters[loop].kind
    names = []
    for k in range(len(factors)):
        name = st.fresh_name(f"{loop}_{k}")
        st.iters[name] = Iter(name, 0, kind)
        names.append(name)
    st.relations.append(Split(loop, tuple(names), tuple(factors[1:])))
    pos = st.leaves.index(loop)
    st.leaves[pos : pos + 1] = names
    st.annotations.pop(loop, None)
    st.pragmas.pop(loop, None)
    state.move_attachments(block, loop, names[-1])
    if st.init_at == loop:
        st.init_at = names[0]
    _set_extents(st)
    _revalidate_regions(state, "split", block)
    return names


def _set_extents(st: Stage) -> None:
    """Store every derived iter's extent (for display and validation)."""
    extents = derive_extents(st)
    for name, it in list(st.iters.items()):
        if it.extent != extents.get(name, it.extent):
            st.iters[name] = Iter(name, extents[name], it.kind)


def fuse(state: State, block: str, loops: list[str]) -> str:
    """Fuse adjacent loops (outer to inner) into one."""
    if not loops:
        raise _err("fuse", block, "needs at least one loop")
    st = compute_stage(state, block, "fuse")
    for lp in loops:
        leaf(state, block, lp, "fuse")
    if len(loops) == 1:
        return loops[0]
    pos = [st.leaves.index(lp) for lp in loops]
    if pos != list(range(pos[0], pos[0] + len(loops))):
        raise _err(
            "fuse",
            block,
            f"loops {loops} are not adjacent and in order (current order: {st.leaves}); "
            "reorder them first",
            loops[0],
        )
    kinds = {st.iters[lp].kind for lp in loops}
    if len(kinds) > 1:
        raise _err("fuse", block, "cannot fuse a spatial loop with a reduction loop", loops[0])
    for lp in loops[:-1]:
        if state.attached_to(block, lp):
            who = ", ".join(s.name for s in state.attached_to(block, lp))
            raise _err(
                "fuse",
                block,
                f"block(s) {who} are computed at this loop, which fuse would remove; "
                "fuse first, then compute_at",
                lp,
            )
    name = st.fresh_name("_".join(loops) + "_fused")
    st.iters[name] = Iter(name, 0, kinds.pop())
    st.relations.append(Fuse(tuple(loops), name))
    st.leaves[pos[0] : pos[0] + len(loops)] = [name]
    for lp in loops:
        st.annotations.pop(lp, None)
        st.pragmas.pop(lp, None)
    state.move_attachments(block, loops[-1], name)
    if st.init_at in loops:
        st.init_at = name
    _set_extents(st)
    _revalidate_regions(state, "fuse", block)
    return name


def reorder(state: State, block: str, loops: list[str]) -> None:
    """Put ``loops`` in the given order, in the positions they occupy together."""
    st = compute_stage(state, block, "reorder")
    for lp in loops:
        leaf(state, block, lp, "reorder")
    if len(set(loops)) != len(loops):
        raise _err("reorder", block, f"a loop is listed twice in {loops}")
    slots = sorted(st.leaves.index(lp) for lp in loops)
    for slot, lp in zip(slots, loops):
        st.leaves[slot] = lp
    _check_reduction_order(state, st, "reorder")
    _revalidate_regions(state, "reorder", block)


def _check_reduction_order(state: State, st: Stage, prim: str) -> None:
    first_reduce = next(
        (k for k, lp in enumerate(st.leaves) if st.iters[lp].kind == IterKind.REDUCE),
        len(st.leaves),
    )
    for s in state.attached_to(st.name):
        if isinstance(s.attach, After) and st.leaves.index(s.attach.loop) >= first_reduce:
            raise _err(
                prim,
                st.name,
                f"block {s.name!r} is computed after loop {s.attach.loop!r}, which would "
                "now be inside a reduction loop: it would read partial results",
            )
    if st.init_at is not None and st.leaves.index(st.init_at) > first_reduce:
        raise _err(prim, st.name, "the decomposed init would land inside a reduction loop")


def annotate_loop(state: State, block: str, loop: str, kind: str, prim: str) -> None:
    """Mark a loop parallel / vectorize / unroll, or bind it to a thread tag.

    ``kind`` is the user's spelling ("parallel", "vectorize", "unroll" or a thread tag
    such as "threadIdx.x"); the stage stores the typed ``annotation`` of it.
    """
    st = leaf(state, block, loop, prim)
    ann = annotation(kind)
    is_reduce = st.iters[loop].kind == IterKind.REDUCE
    if ann in (LoopKind.PARALLEL, LoopKind.VECTORIZE) and is_reduce:
        what = "parallelize" if ann == LoopKind.PARALLEL else "vectorize"
        raise _err(
            prim,
            block,
            f"cannot {what} a reduction loop: its iterations all update the same element "
            f"of {st.op.name!r}; {what} a spatial loop, or rfactor the reduction first",
            loop,
        )
    if isinstance(ann, ThreadBinding):
        if ann.tag not in THREAD_TAGS:
            raise _err(prim, block, f"unknown thread {kind!r}; use one of {THREAD_TAGS}", loop)
        if is_reduce:
            raise _err(prim, block, "binding a reduction loop to threads is not supported", loop)
        for other, have in st.annotations.items():
            if have == ann and other != loop:
                raise _err(prim, block, f"{kind} is already bound to loop {other!r}", loop)
    st.annotations[loop] = ann
    if ann == LoopKind.PARALLEL:
        _check_parallel_nesting(state, prim, block)


def pragma(state: State, block: str, loop: str | None, key: str, value: object) -> None:
    """Attach ``key = value`` to a loop (or, with loop None, to the block's outermost loop)."""
    st = compute_stage(state, block, "annotate")
    if loop is not None:
        leaf(state, block, loop, "annotate")
    if not isinstance(key, str) or not key:
        raise _err("annotate", block, f"annotation key must be a non-empty string, got {key!r}")
    if not isinstance(value, (int, float, str, bool)):
        raise _err("annotate", block, f"annotation value must be a number or string: {value!r}")
    st.pragmas.setdefault(loop or "", {})[key] = value


# --------------------------------------------------------------------------------------
# Compute locations


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


def refresh_extents(state: State) -> None:
    """Recompute the root extents of attached stages from bound inference."""
    if not any(s.nested for s in state.stages.values()):
        return
    regions = infer_regions(state)
    for s in state.stages.values():
        if s.name not in regions:
            continue
        exts = regions[s.name]
        s.root = tuple(Iter(it.name, ext, it.kind) for it, ext in zip(s.root, exts))
        for it in s.root:
            s.iters[it.name] = it
        _set_extents(s)


def _refresh_regions(state: State, prim: str, block: str) -> None:
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
            raise _err(prim, block, str(err)) from None
    except LoweringError as err:
        raise _err(prim, block, str(err)) from None


def _revalidate_regions(state: State, prim: str, block: str) -> None:
    """After a loop change of ``block``: the blocks computed inside it get new regions.

    Only bound inference is needed (attachments and annotations did not change), and
    only when some block is computed inside ``block``'s loops.
    """
    if state.attached_to(block):
        _refresh_regions(state, prim, block)


def _validate(state: State, prim: str, block: str) -> None:
    _refresh_regions(state, prim, block)
    _check_order(state, prim, block)
    _check_parallel_nesting(state, prim, block)


def _check_order(state: State, prim: str, block: str) -> None:
    """Every root-level producer must run before the top-level nest that reads it."""
    order = {name: k for k, name in enumerate(state.stages)}
    live = [s for s in state.compute_stages() if not s.is_inlined]
    memo: dict = {}
    for reader in live:
        top = state.attach_chain(reader.name)[-1]
        late = [
            p
            for p in live
            if p.is_root and p is not reader and p is not top and order[p.name] > order[top.name]
        ]
        if not late:
            continue
        read = {
            n.tensor.op.name
            for n in E.post_order(inlined_body(state, reader, memo))
            if isinstance(n, E.TensorLoad)
        }
        for p in late:
            if p.op.name in read:
                where = "" if top is reader else f" (it runs inside the loops of {top.name!r})"
                raise _err(
                    prim,
                    block,
                    f"block {reader.name!r} would read {p.name!r} before {p.name!r} is "
                    f"computed{where}; do this step before moving {reader.name!r} there",
                )


def _check_parallel_nesting(state: State, prim: str, block: str) -> None:
    """Reject a parallel loop inside another one: the CPU thread pool cannot nest them."""
    for st in state.compute_stages():
        if st.is_inlined:
            continue
        par: list[tuple[str, str]] = []
        chain = state.attach_chain(st.name)
        for inner, outer in zip([None] + chain[:-1], chain):
            stop = len(outer.leaves) if inner is None else outer.leaves.index(inner.attach.loop) + 1
            par = [
                (outer.name, lp)
                for lp in outer.leaves[:stop]
                if outer.annotations.get(lp) == LoopKind.PARALLEL
            ] + par
        if len(par) > 1:
            (ob, ol), (ib, il) = par[0], par[1]
            raise _err(
                prim,
                block,
                f"loop {ib}.{il} would be a parallel loop inside the parallel loop {ob}.{ol}; "
                "nested parallel loops are not supported: parallelize only the outer one, or "
                "fuse the loops and parallelize the fused loop",
            )


def compute_at(state: State, block: str, target: str, loop: str) -> None:
    """Compute ``block`` inside ``target``'s ``loop``, just the region read there."""
    st = compute_stage(state, block, "compute_at")
    leaf(state, target, loop, "compute_at")
    if target == block:
        raise _err("compute_at", block, "cannot compute a block at its own loop", loop)
    if state.is_output(st):
        raise _err("compute_at", block, "is an output of the function; it must stay at root")
    if target not in _transitive_consumers(state, block):
        raise _err(
            "compute_at",
            block,
            f"{target!r} does not read {block!r} (directly or through other blocks); "
            "compute a producer at a loop of one of its consumers",
            loop,
        )
    if target in {s.name for s in state.attached_to(block)}:
        raise _err("compute_at", block, f"{target!r} is computed inside {block!r}")
    st.attach = At(target, loop)
    _validate(state, "compute_at", block)


def reverse_compute_at(state: State, block: str, target: str, loop: str) -> None:
    """Compute consumer ``block`` right after ``target``'s ``loop`` body, on what it wrote."""
    st = compute_stage(state, block, "reverse_compute_at")
    tst = leaf(state, target, loop, "reverse_compute_at")
    op = st.op
    if op.reduce_axis:
        raise _err(
            "reverse_compute_at",
            block,
            "has a reduction; only elementwise consumers can follow a producer's tile "
            "(compute_at the producer into this block instead)",
        )
    reads = effective_reads(state, st, tst)
    if not reads:
        raise _err("reverse_compute_at", block, f"does not read {target!r}", loop)
    axis_vars = {iv.var for iv in op.axis}
    for idx in reads:
        if idx != reads[0] or not all(isinstance(i, E.Var) and i in axis_vars for i in idx):
            raise _err(
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
                raise _err(
                    "reverse_compute_at",
                    block,
                    f"also reads {p.name!r}, which is computed after {target!r}",
                    loop,
                )
    first_reduce = next(
        (k for k, lp in enumerate(tst.leaves) if tst.iters[lp].kind == IterKind.REDUCE), None
    )
    if first_reduce is not None and tst.leaves.index(loop) >= first_reduce:
        raise _err(
            "reverse_compute_at",
            block,
            f"loop {loop!r} of {target!r} is inside its reduction loop "
            f"{tst.leaves[first_reduce]!r}: {block!r} would read partial results; pick a "
            "loop outside the reduction loops",
            loop,
        )
    st.attach = After(target, loop)
    _validate(state, "reverse_compute_at", block)


def compute_root(state: State, block: str) -> None:
    """Compute ``block`` at the top level again (undo compute_at / reverse_compute_at)."""
    st = state.stage(block)
    if not st.is_compute:
        raise _err("compute_root", block, "is an input placeholder")
    st.attach = ROOT
    _set_root_extents(st)
    _validate(state, "compute_root", block)


def _set_root_extents(st: Stage) -> None:
    op = st.op
    full = [int(iv.dom.extent) for iv in op.axis] + [int(iv.dom.extent) for iv in op.reduce_axis]
    st.root = tuple(Iter(it.name, ext, it.kind) for it, ext in zip(st.root, full))
    for it in st.root:
        st.iters[it.name] = it
    _set_extents(st)


def compute_inline(state: State, block: str) -> None:
    """Substitute ``block``'s expression into every reader; the block disappears."""
    st = compute_stage(state, block, "compute_inline")
    if st.op.reduce_axis:
        raise _err(
            "compute_inline",
            block,
            "is a reduction and cannot be inlined; compute_at it into its consumer instead",
        )
    if state.is_output(st):
        raise _err("compute_inline", block, "is an output of the function and must be computed")
    if not state.consumers(block):
        raise _err("compute_inline", block, "has no consumer to inline into")
    attached = [s.name for s in state.attached_to(block)]
    if attached:
        raise _err("compute_inline", block, f"blocks {attached} are computed inside it")
    st.attach = INLINE
    _validate(state, "compute_inline", block)


def reverse_compute_inline(state: State, block: str) -> None:
    """Fold elementwise consumer ``block`` into its producer's loops (an epilogue)."""
    st = compute_stage(state, block, "reverse_compute_inline")
    op = st.op
    if op.reduce_axis:
        raise _err("reverse_compute_inline", block, "has a reduction; it cannot be inlined")
    producers = [p for p in state.producers(block) if p.is_compute and not p.is_inlined]
    if len(producers) != 1:
        raise _err(
            "reverse_compute_inline",
            block,
            f"must read exactly one computed block, reads {[p.name for p in producers]}",
        )
    prod = producers[0]
    if prod.op.reduce_axis:
        raise _err(
            "reverse_compute_inline",
            block,
            f"its producer {prod.name!r} is a reduction: the epilogue would run on partial "
            "sums; use reverse_compute_at to a loop outside the reduction instead",
        )
    if state.is_output(prod):
        raise _err("reverse_compute_inline", block, f"its producer {prod.name!r} is an output")
    if len(state.consumers(prod.name)) != 1:
        raise _err("reverse_compute_inline", block, f"{prod.name!r} has other consumers")
    axis_vars = [iv.var for iv in op.axis]
    for n in E.post_order(op.body[0]):
        if isinstance(n, E.TensorLoad) and n.tensor.op.name == prod.op.name:
            if len(n.indices) != len(axis_vars) or any(
                i is not v for i, v in zip(n.indices, axis_vars)
            ):
                raise _err(
                    "reverse_compute_inline",
                    block,
                    f"reads {prod.name!r} at [{', '.join(map(str, n.indices))}]; it must read "
                    "it at its own loop variables in order",
                )
    if tuple(prod.op.shape) != tuple(op.shape):
        raise _err("reverse_compute_inline", block, f"shape differs from {prod.name!r}")
    rename = {p.name: c.name for p, c in zip(prod.root, st.root)}

    def r(name: str) -> str:
        return rename.get(name, name)

    st.iters = {r(n): Iter(r(n), it.extent, it.kind) for n, it in prod.iters.items()}
    st.root = tuple(st.iters[r(it.name)] for it in prod.root)
    st.leaves = [r(n) for n in prod.leaves]
    st.relations = [
        Split(r(x.parent), tuple(map(r, x.children)), x.factors)
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
    _validate(state, "reverse_compute_inline", block)


# --------------------------------------------------------------------------------------
# Caches, rfactor and storage


def _check_scope(prim: str, block: str, scope: str) -> None:
    if scope not in SCOPES:
        raise _err(prim, block, f"unknown storage scope {scope!r}; use one of {SCOPES}")


def _fresh_axis(op: ComputeOp) -> tuple[tuple, dict]:
    axis = tuple(E.IterVar(E.Var(iv.var.name), iv.dom, "spatial") for iv in op.axis)
    return axis, {old.var: new.var for old, new in zip(op.axis, axis)}


def _replace_loads(e: E.PrimExpr, old_name: str, new_tensor) -> E.PrimExpr:
    def visit(node: E.PrimExpr) -> E.PrimExpr:
        if isinstance(node, E.TensorLoad) and node.tensor.op.name == old_name:
            return E.TensorLoad(new_tensor, tuple(visit(i) for i in node.indices), node.dtype)
        return E.map_children(node, visit)

    return visit(e)


def _with_body(op: ComputeOp, body: E.PrimExpr, name: str | None = None) -> ComputeOp:
    return ComputeOp(name or op.name, op.axis, op.reduce_axis, (body,), op.tag, dict(op.attrs))


def _copy_op(name: str, source, shape: tuple, axis_names: list[str]) -> ComputeOp:
    axis = tuple(
        E.IterVar(E.Var(n), E.Range.of(0, ext), "spatial") for n, ext in zip(axis_names, shape)
    )
    body = E.TensorLoad(source, tuple(iv.var for iv in axis), source.dtype)
    return ComputeOp(name, axis, (), (body,), "cache")


def cache_read(
    state: State, block: str, read: object, scope: str, consumers: list[str] | None = None
) -> str:
    """Copy a tensor ``block`` reads into a new ``scope`` buffer; ``block`` (and the other
    ``consumers``, if given) read the copy."""
    st = compute_stage(state, block, "cache_read")
    _check_scope("cache_read", block, scope)
    inputs = st.op.input_tensors
    if isinstance(read, int):
        tensor = _read_tensor(st, read, "cache_read")
    else:
        matches = [t for t in inputs if t.name == str(read)]
        if not matches:
            raise _err(
                "cache_read", block, f"does not read {read!r}; it reads {[t.name for t in inputs]}"
            )
        tensor = matches[0]
    name = state.fresh_block_name(f"{tensor.name}_{scope}")
    src_stage = state.by_op_name(tensor.name)
    names = (
        [iv.var.name for iv in src_stage.op.axis]
        if isinstance(src_stage.op, ComputeOp)
        else [f"ax{d}" for d in range(len(tensor.shape))]
    )
    cache_op = _copy_op(name, tensor, tuple(tensor.shape), names)
    readers = [block] + [c for c in (consumers or []) if c != block]
    order = list(state.stages)
    for r in readers:
        rst = compute_stage(state, r, "cache_read")
        if tensor.name not in {t.name for t in rst.op.input_tensors}:
            raise _err("cache_read", r, f"does not read {tensor.name!r}")
        rst.op = _with_body(rst.op, _replace_loads(rst.op.body[0], tensor.name, cache_op.output(0)))
    cache = make_stage(cache_op)
    cache.scope = scope
    # before every reader, and before the nests readers were moved into (reverse_compute_at)
    first = min((s.name for r in readers for s in state.attach_chain(r)), key=order.index)
    if src_stage.is_compute and not src_stage.is_inlined:
        src_top = state.attach_chain(src_stage.name)[-1]
        if order.index(src_top.name) >= order.index(first):
            raise _err(
                "cache_read",
                block,
                f"a reader of {tensor.name!r} runs inside the loops of {first!r}, where "
                f"{tensor.name!r} is computed too, so no top-level copy fits in between; "
                "cache_read before reverse_compute_at / compute_at",
            )
    state.insert_before(first, cache)
    _validate(state, "cache_read", block)
    return name


def cache_write(state: State, block: str, scope: str, te_style: bool = False) -> str:
    """Compute ``block`` into a ``scope`` buffer and copy the result out afterwards.

    Block style (TVM TIR): block ``block`` keeps its loops and now writes
    ``<tensor>_<scope>``; the returned new block copies that into the tensor. TE style
    (``s.cache_write``): the returned new block computes with fresh loops and the stage
    of the tensor becomes the copy, keeping its spatial loops.
    """
    st = compute_stage(state, block, "cache_write")
    _check_scope("cache_write", block, scope)
    op: ComputeOp = st.op
    name = state.fresh_block_name(f"{op.name}_{scope}")
    if not te_style:
        compute = _with_body(op, op.body[0], name)
        copy = _copy_op(
            op.name, compute.output(0), tuple(op.shape), [iv.var.name for iv in op.axis]
        )
        st.op = compute
        st.scope = scope
        copy_stage = make_stage(copy, name)
        state.insert_after(block, copy_stage)
        _validate(state, "cache_write", block)
        return name
    reduce_names = {it.name for it in st.iters.values() if it.kind == IterKind.REDUCE}
    _check_nothing_at_reduce_loops(state, st, "cache_write")
    if any(
        (isinstance(r, Split) and r.parent in reduce_names)
        or (isinstance(r, Fuse) and r.fused in reduce_names)
        for r in st.relations
    ):
        raise _err(
            "cache_write",
            block,
            "its reduction loops were already split or fused; call cache_write first",
        )
    axis, mapping = _fresh_axis(op)
    red = tuple(E.IterVar(E.Var(iv.var.name), iv.dom, "reduce") for iv in op.reduce_axis)
    mapping.update({old.var: new.var for old, new in zip(op.reduce_axis, red)})
    body = op.body[0]
    if isinstance(body, E.Reduce):
        src = E.substitute(body.source, mapping)
        cond = None if body.condition is None else E.substitute(body.condition, mapping)
        body = E.Reduce(body.combiner, src, red, cond, body.dtype)
    else:
        body = E.substitute(body, mapping)
    compute = ComputeOp(name, axis, red, (body,), op.tag, dict(op.attrs))
    copy_body = E.TensorLoad(compute.output(0), tuple(iv.var for iv in op.axis), op.dtype)
    st.op = ComputeOp(op.name, op.axis, (), (copy_body,), op.tag, dict(op.attrs))
    st.leaves = [lp for lp in st.leaves if lp not in reduce_names]
    st.root = tuple(it for it in st.root if it.kind == IterKind.SPATIAL)
    for n in reduce_names:
        st.iters.pop(n, None)
        st.annotations.pop(n, None)
        st.pragmas.pop(n, None)
    st.init_at = None
    new_stage = make_stage(compute)
    new_stage.scope = scope
    state.insert_before(block, new_stage)
    _validate(state, "cache_write", block)
    return name


def _check_nothing_at_reduce_loops(state: State, st: Stage, prim: str) -> None:
    """``prim`` replaces ``st``'s reduction loops: no block may be computed at one of them."""
    for lp in st.leaves:
        if st.iters[lp].kind == IterKind.REDUCE and state.attached_to(st.name, lp):
            who = ", ".join(repr(s.name) for s in state.attached_to(st.name, lp))
            raise _err(
                prim,
                st.name,
                f"block(s) {who} are computed at reduction loop {lp!r}, which {prim} replaces; "
                f"{prim} first, or compute_root them",
                lp,
            )


def rfactor(state: State, block: str, loop: str, factor_axis: int = 0) -> str:
    """Turn reduction ``loop`` into a spatial axis of a new block of partial results.

    The new block ``<tensor>_rf`` has the reduction's output shape with an extra axis
    (at ``factor_axis``) of ``loop``'s extent and reduces over the other reduction loops;
    ``block`` then reduces over that axis. Returns the new block's name.
    """
    st = leaf(state, block, loop, "rfactor")
    op: ComputeOp = st.op
    body = op.body[0]
    if not isinstance(body, E.Reduce) or st.iters[loop].kind != IterKind.REDUCE:
        raise _err("rfactor", block, "rfactor needs a reduction loop", loop)
    _check_nothing_at_reduce_loops(state, st, "rfactor")
    ndim = len(op.axis)
    if not 0 <= factor_axis <= ndim:
        raise _err("rfactor", block, f"factor_axis must be in [0, {ndim}]", loop)
    extents = derive_extents(st)
    reduce_leaves = [lp for lp in st.leaves if st.iters[lp].kind == IterKind.REDUCE]
    rf_var = E.Var(loop)
    spatial = [E.IterVar(E.Var(iv.var.name), iv.dom, "spatial") for iv in op.axis]
    rf_axis = E.IterVar(rf_var, E.Range.of(0, extents[loop]), "spatial")
    spatial.insert(factor_axis, rf_axis)
    others = [
        E.IterVar(E.Var(lp), E.Range.of(0, extents[lp]), "reduce")
        for lp in reduce_leaves
        if lp != loop
    ]
    leaf_values = {lp: iv.var for lp, iv in zip([x for x in reduce_leaves if x != loop], others)}
    leaf_values[loop] = rf_var
    spatial_leaves = [lp for lp in st.leaves if st.iters[lp].kind == IterKind.SPATIAL]
    for lp in spatial_leaves:
        leaf_values[lp] = E.IntImm(0)  # spatial values are not needed; keep pass_up happy
    values, guards = pass_up(st, leaf_values, extents)
    mapping = {
        iv.var: _offset(values[it.name], int(iv.dom.min))
        for iv, it in zip(op.reduce_axis, st.root[ndim:])
    }
    old_spatial = [iv for iv in spatial if iv is not rf_axis]
    mapping.update({iv.var: new.var for iv, new in zip(op.axis, old_spatial)})
    src = E.substitute(body.source, mapping)
    conds = [E.substitute(body.condition, mapping)] if body.condition is not None else []
    conds += [g for g, is_red in guards if is_red]
    cond = None
    for c in conds:
        cond = c if cond is None else E.And(cond, c)
    name = state.fresh_block_name(f"{op.name}_rf")
    if others:
        rf_body = E.Reduce(body.combiner, src, tuple(others), cond, body.dtype)
    elif cond is not None:
        rf_body = E.Call(
            "if_then_else", (cond, src, reduce_identity(body.combiner, body.dtype)), body.dtype
        )
    else:
        rf_body = src
    rf_op = ComputeOp(
        name, tuple(spatial), tuple(others), (rf_body,), op.tag, {**op.attrs, "ansor.rfactor": True}
    )
    rk = E.IterVar(E.Var(f"{loop}_v"), E.Range.of(0, extents[loop]), "reduce")
    idx = [iv.var for iv in op.axis]
    idx.insert(factor_axis, rk.var)
    load = E.TensorLoad(rf_op.output(0), tuple(idx), body.dtype)
    st.op = ComputeOp(
        op.name,
        op.axis,
        (rk,),
        (E.Reduce(body.combiner, load, (rk,), None, body.dtype),),
        op.tag,
        dict(op.attrs),
    )
    # the write-back block keeps its spatial loops; its one reduction loop is new
    reduce_names = {n for n, it in st.iters.items() if it.kind == IterKind.REDUCE}
    st.relations = [
        r
        for r in st.relations
        if not (
            (isinstance(r, Split) and r.parent in reduce_names)
            or (isinstance(r, Fuse) and r.fused in reduce_names)
        )
    ]
    for n in reduce_names:
        st.iters.pop(n)
        st.annotations.pop(n, None)
        st.pragmas.pop(n, None)
    new_it = Iter(rk.var.name, extents[loop], IterKind.REDUCE)
    st.root = tuple(it for it in st.root if it.kind == IterKind.SPATIAL) + (new_it,)
    st.iters[new_it.name] = new_it
    st.leaves = [lp for lp in st.leaves if lp not in reduce_names] + [new_it.name]
    st.init_at = None
    state.insert_before(block, make_stage(rf_op))
    _validate(state, "rfactor", block)
    return name


def decompose_reduction(state: State, block: str, loop: str) -> str:
    """Place the reduction's initialisation just before ``loop`` (its own loop nest)."""
    st = leaf(state, block, loop, "decompose_reduction")
    if not st.op.reduce_axis:
        raise _err("decompose_reduction", block, "is not a reduction", loop)
    first_reduce = next(k for k, lp in enumerate(st.leaves) if st.iters[lp].kind == IterKind.REDUCE)
    if st.leaves.index(loop) > first_reduce:
        raise _err(
            "decompose_reduction",
            block,
            f"loop {loop!r} is inside the reduction loop {st.leaves[first_reduce]!r}; the init "
            "must go before the reduction starts",
            loop,
        )
    st.init_at = loop
    return f"{block}_init"


def storage_align(state: State, block: str, axis: int, factor: int, offset: int) -> None:
    """Pad the buffer ``block`` writes so that stride(axis) % factor == offset."""
    st = compute_stage(state, block, "storage_align")
    ndim = len(st.op.shape)
    if not 0 <= axis < ndim - 1:
        raise _err(
            "storage_align",
            block,
            f"axis must be in [0, {ndim - 1}) for a {ndim}-d buffer (the last axis has stride 1)",
        )
    if factor < 1 or not 0 <= offset < factor:
        raise _err(
            "storage_align",
            block,
            f"need factor >= 1 and 0 <= offset < factor, got factor={factor}, offset={offset}",
        )
    if state.is_output(st):
        raise _err("storage_align", block, "writes a function argument, whose layout is fixed")
    st.storage_align[axis] = (factor, offset)


def _read_tensor(st: Stage, index: int, prim: str) -> Tensor:
    """The ``index``-th tensor block ``st`` reads (TVM's read buffer index)."""
    inputs = st.op.input_tensors
    if not 0 <= index < len(inputs):
        raise _err(
            prim,
            st.name,
            f"read buffer index {index} out of range (it reads {[t.name for t in inputs]})",
        )
    return inputs[index]


def buffer_block(state: State, block: str, buffer: object, prim: str) -> str:
    """The block writing the buffer TVM names ``buffer`` relative to ``block``:
    ``("write", 0)``, ``("read", i)`` (the i-th tensor it reads) or a tensor name."""
    st = compute_stage(state, block, prim)
    if isinstance(buffer, str):
        tensor_name = buffer
    elif (
        isinstance(buffer, (tuple, list))
        and len(buffer) == 2
        and buffer[0] in ("read", "write")
        and isinstance(buffer[1], int)
    ):
        kind, index = buffer
        if kind == "write":
            if index != 0:
                raise _err(prim, block, f"writes one buffer; use ('write', 0), not {buffer!r}")
            return block
        tensor_name = _read_tensor(st, index, prim).name
    else:
        raise _err(
            prim,
            block,
            f"buffer must be ('write', 0), ('read', i) or a tensor name, got {buffer!r}",
        )
    owner = state.by_op_name(tensor_name)
    if not owner.is_compute:
        raise _err(
            prim,
            block,
            f"{tensor_name!r} is an input of the function, whose layout "
            f"is fixed; cache_read it and transform the copy",
        )
    return owner.name


def transform_layout(state: State, block: str, layout: tuple) -> None:
    """Store the buffer ``block`` writes with its axes permuted: storage dim k holds
    axis ``layout[k]``. Loops and values stay as they are; only addresses change."""
    st = compute_stage(state, block, "transform_layout")
    ndim = len(st.op.axis)
    if sorted(layout) != list(range(ndim)):
        raise _err(
            "transform_layout",
            block,
            f"needs a permutation of its {ndim} axes (0..{ndim - 1}), got {list(layout)}",
        )
    if state.is_output(st):
        raise _err(
            "transform_layout",
            block,
            "writes a function argument, whose layout is "
            "fixed; transform an intermediate, e.g. a cache_read or cache_write copy",
        )
    if st.storage_align:
        raise _err(
            "transform_layout",
            block,
            "has storage_align; transform the layout first, then align the new axes",
        )
    st.layout = None if list(layout) == list(range(ndim)) else tuple(layout)
    _validate(state, "transform_layout", block)


def set_scope(state: State, block: str, scope: str) -> None:
    """Change the storage scope of the buffer ``block`` writes."""
    st = compute_stage(state, block, "set_scope")
    _check_scope("set_scope", block, scope)
    if state.is_output(st) and scope != "global":
        raise _err("set_scope", block, "writes a function argument, which must stay global")
    st.scope = scope


def _offset(e: E.PrimExpr, lo: int) -> E.PrimExpr:
    """``e + lo`` (a reduction axis may start above 0: te.reduce_axis((2, 5)))."""
    return e if lo == 0 else E.Add(e, E.IntImm(lo), "int32")
