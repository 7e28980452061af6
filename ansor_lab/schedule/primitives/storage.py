"""Caches, rfactor and storage: cache_read, cache_write, rfactor, decompose_reduction,
storage_align, transform_layout, set_scope, and buffer_block (TVM's buffer handles)."""

from __future__ import annotations

from ...dsl import expr as E
from ...dsl.intrin import reduce_identity
from ...dsl.tensor import ComputeOp, Tensor
from ...ir.nodes import SCOPES
from ..loop_kinds import REDUCE, SPATIAL
from ..state import Fuse, Iter, Split, Stage, State, derive_extents, make_stage, pass_up
from .checks import validate
from .common import compute_stage, leaf, step_error


def _check_scope(prim: str, block: str, scope: str) -> None:
    if scope not in SCOPES:
        raise step_error(prim, block, f"unknown storage scope {scope!r}; use one of {SCOPES}")


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
            raise step_error(
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
            raise step_error("cache_read", r, f"does not read {tensor.name!r}")
        rst.op = _with_body(rst.op, _replace_loads(rst.op.body[0], tensor.name, cache_op.output(0)))
    cache = make_stage(cache_op)
    cache.scope = scope
    # before every reader, and before the nests readers were moved into (reverse_compute_at)
    first = min((s.name for r in readers for s in state.attach_chain(r)), key=order.index)
    if src_stage.is_compute and not src_stage.is_inlined:
        src_top = state.attach_chain(src_stage.name)[-1]
        if order.index(src_top.name) >= order.index(first):
            raise step_error(
                "cache_read",
                block,
                f"a reader of {tensor.name!r} runs inside the loops of {first!r}, where "
                f"{tensor.name!r} is computed too, so no top-level copy fits in between; "
                "cache_read before reverse_compute_at / compute_at",
            )
    state.insert_before(first, cache)
    validate(state, "cache_read", block)
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
        validate(state, "cache_write", block)
        return name
    reduce_names = {it.name for it in st.iters.values() if it.kind == REDUCE}
    _check_nothing_at_reduce_loops(state, st, "cache_write")
    if any(
        (isinstance(r, Split) and r.parent in reduce_names)
        or (isinstance(r, Fuse) and r.fused in reduce_names)
        for r in st.relations
    ):
        raise step_error(
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
    st.root = tuple(it for it in st.root if it.kind == SPATIAL)
    for n in reduce_names:
        st.iters.pop(n, None)
        st.annotations.pop(n, None)
        st.pragmas.pop(n, None)
    st.init_at = None
    new_stage = make_stage(compute)
    new_stage.scope = scope
    state.insert_before(block, new_stage)
    validate(state, "cache_write", block)
    return name


def _check_nothing_at_reduce_loops(state: State, st: Stage, prim: str) -> None:
    """``prim`` replaces ``st``'s reduction loops: no block may be computed at one of them."""
    for lp in st.leaves:
        if st.iters[lp].kind == REDUCE and state.attached_to(st.name, lp):
            who = ", ".join(repr(s.name) for s in state.attached_to(st.name, lp))
            raise step_error(
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
    if not isinstance(body, E.Reduce) or st.iters[loop].kind != REDUCE:
        raise step_error("rfactor", block, "rfactor needs a reduction loop", loop)
    _check_nothing_at_reduce_loops(state, st, "rfactor")
    ndim = len(op.axis)
    if not 0 <= factor_axis <= ndim:
        raise step_error("rfactor", block, f"factor_axis must be in [0, {ndim}]", loop)
    extents = derive_extents(st)
    reduce_leaves = [lp for lp in st.leaves if st.iters[lp].kind == REDUCE]
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
    spatial_leaves = [lp for lp in st.leaves if st.iters[lp].kind == SPATIAL]
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
    reduce_names = {n for n, it in st.iters.items() if it.kind == REDUCE}
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
    new_it = Iter(rk.var.name, extents[loop], REDUCE)
    st.root = tuple(it for it in st.root if it.kind == SPATIAL) + (new_it,)
    st.iters[new_it.name] = new_it
    st.leaves = [lp for lp in st.leaves if lp not in reduce_names] + [new_it.name]
    st.init_at = None
    state.insert_before(block, make_stage(rf_op))
    validate(state, "rfactor", block)
    return name


def decompose_reduction(state: State, block: str, loop: str) -> str:
    """Place the reduction's initialisation just before ``loop`` (its own loop nest)."""
    st = leaf(state, block, loop, "decompose_reduction")
    if not st.op.reduce_axis:
        raise step_error("decompose_reduction", block, "is not a reduction", loop)
    first_reduce = next(k for k, lp in enumerate(st.leaves) if st.iters[lp].kind == REDUCE)
    if st.leaves.index(loop) > first_reduce:
        raise step_error(
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
        raise step_error(
            "storage_align",
            block,
            f"axis must be in [0, {ndim - 1}) for a {ndim}-d buffer (the last axis has stride 1)",
        )
    if factor < 1 or not 0 <= offset < factor:
        raise step_error(
            "storage_align",
            block,
            f"need factor >= 1 and 0 <= offset < factor, got factor={factor}, offset={offset}",
        )
    if state.is_output(st):
        raise step_error(
            "storage_align", block, "writes a function argument, whose layout is fixed"
        )
    st.storage_align[axis] = (factor, offset)


def _read_tensor(st: Stage, index: int, prim: str) -> Tensor:
    """The ``index``-th tensor block ``st`` reads (TVM's read buffer index)."""
    inputs = st.op.input_tensors
    if not 0 <= index < len(inputs):
        raise step_error(
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
                raise step_error(
                    prim, block, f"writes one buffer; use ('write', 0), not {buffer!r}"
                )
            return block
        tensor_name = _read_tensor(st, index, prim).name
    else:
        raise step_error(
            prim,
            block,
            f"buffer must be ('write', 0), ('read', i) or a tensor name, got {buffer!r}",
        )
    owner = state.by_op_name(tensor_name)
    if not owner.is_compute:
        raise step_error(
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
        raise step_error(
            "transform_layout",
            block,
            f"needs a permutation of its {ndim} axes (0..{ndim - 1}), got {list(layout)}",
        )
    if state.is_output(st):
        raise step_error(
            "transform_layout",
            block,
            "writes a function argument, whose layout is "
            "fixed; transform an intermediate, e.g. a cache_read or cache_write copy",
        )
    if st.storage_align:
        raise step_error(
            "transform_layout",
            block,
            "has storage_align; transform the layout first, then align the new axes",
        )
    st.layout = None if list(layout) == list(range(ndim)) else tuple(layout)
    validate(state, "transform_layout", block)


def set_scope(state: State, block: str, scope: str) -> None:
    """Change the storage scope of the buffer ``block`` writes."""
    st = compute_stage(state, block, "set_scope")
    _check_scope("set_scope", block, scope)
    if state.is_output(st) and scope != "global":
        raise step_error("set_scope", block, "writes a function argument, which must stay global")
    st.scope = scope


def _offset(e: E.PrimExpr, lo: int) -> E.PrimExpr:
    """``e + lo`` (a reduction axis may start above 0: te.reduce_axis((2, 5)))."""
    return e if lo == 0 else E.Add(e, E.IntImm(lo), "int32")
