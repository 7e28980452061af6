"""Lowering a schedule State to a loop-IR PrimFunc: emission over bound inference.

``bounds.BoundInference`` derives every stage's region, loop variables and buffer; this
module emits, per root stage, its loop nest: leaf loops from the split/fuse relations
over its region, the reduction init placed just above the first reduction loop (over
the spatial loops below it), guards where a split does not divide its loop, attached
stages (with their region-sized buffers) at the top of the loop they are attached to
(``At``) or after its body (``After``); then simplifies and verifies.

A stage that is a function argument writes the argument buffer itself. Computed at a
loop (TE style only: the block style refuses compute_at of an output block, as TVM's
TIR does), it writes in place the region each iteration needs, and the regions must add
up to the whole argument (``check_argument_written``); inlined (TE style), it is not
computed at all and the argument is left as the caller passed it, as in TVM.
"""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.intrin import reduce_identity
from ..dsl.scan import ScanOp
from ..dsl.tensor import ComputeOp, PlaceholderOp, Tensor
from ..dsl.tuple_reduce import is_companion
from ..errors import LoweringError
from ..ir import nodes as N
from ..ir.simplify import simplify_stmt
from ..ir.verify import verify
from .argument_cover import box_counts, first_unwritten
from .bounds import BoundInference, permute
from .cross_thread import emit_cross_thread, thread_reduce_leaves
from .gpu_lower import lower_gpu
from .loop_kinds import PARALLEL, REDUCE, SPATIAL, UNROLL, VECTORIZE
from .scan_lower import alias_scan_buffers, check_scan_schedule, emit_scan
from .state import After, At, Nested, Stage, State, ThreadBinding
from .tuple_lower import tuple_stores

#: the IR's ``For`` kind of each annotated loop kind
_KIND = {
    PARALLEL: "parallel",
    VECTORIZE: "vectorized",
    UNROLL: "unrolled",
}


class _Lowerer(BoundInference):
    """Bound inference plus the emission of every stage's loop nest."""

    def __init__(self, state: State, args: list[Tensor], name: str) -> None:
        super().__init__(state, args)
        self.name = name
        self.by_op = {s.op.name: s for s in self.stages}
        self.attached: dict[tuple[str, str], list[Stage]] = {}
        for s in self.stages:
            if isinstance(s.attach, Nested):
                self.attached.setdefault((s.attach.block, s.attach.loop), []).append(s)
        # a scan's tensors share its output's buffer (scan_lower)
        self.scan_temporaries = alias_scan_buffers(self)

    # -- step 3: loop nests ---------------------------------------------------------
    def load(self, e: E.TensorLoad, values: dict) -> E.PrimExpr:
        op = e.tensor.op
        idx = [E.substitute(i, values) for i in e.indices]
        producer = self.by_op.get(op.name)
        if producer is None or isinstance(op, PlaceholderOp):
            buf = self.arg_buffer.get(op.name)
            if buf is None:
                raise LoweringError(
                    f"placeholder {op.name!r} is read but is not in the argument list; "
                    f"add it to args"
                )
            return N.BufferLoad(buf, tuple(idx), buf.dtype)
        info = self.info.get(producer.name)
        if info is None:
            raise LoweringError(f"stage {producer.name!r} is read before it is lowered")
        if info.buf_min is not None:
            idx = [_sub(i, lo) for i, lo in zip(idx, info.buf_min)]
        return N.BufferLoad(info.buffer, permute(idx, producer.layout), info.buffer.dtype)

    def translate(self, e: E.PrimExpr, values: dict) -> E.PrimExpr:
        def visit(node: E.PrimExpr) -> E.PrimExpr:
            if isinstance(node, E.TensorLoad):
                inner = E.TensorLoad(node.tensor, tuple(visit(i) for i in node.indices), node.dtype)
                return self.load(inner, {})
            if isinstance(node, E.Var):
                return values.get(node, node)
            return E.map_children(node, visit)

        return visit(e)

    def out_index(self, stage: Stage) -> tuple:
        """The index ``stage`` stores its element at, in its buffer."""
        info = self.info[stage.name]
        op: ComputeOp = stage.op
        values = self.root_values(stage)
        n_sp = len(op.axis)
        if isinstance(stage.attach, At) and op.name not in self.arg_buffer:
            out_idx = tuple(info.values[it.name] for it in stage.root[:n_sp])
        elif info.buf_min is not None:
            out_idx = tuple(_sub(values[iv.var], lo) for iv, lo in zip(op.axis, info.buf_min))
        else:
            out_idx = tuple(values[iv.var] for iv in op.axis)
        return permute(out_idx, stage.layout)

    def stores(self, stage: Stage) -> tuple[N.Stmt, N.Stmt | None]:
        """(update statement, init statement or None) at the innermost point."""
        info = self.info[stage.name]
        values = self.root_values(stage)
        out_idx = self.out_index(stage)
        buf = info.buffer
        body = self.body(stage)
        spatial_guards = [g for g, red in info.guards if not red]
        all_guards = [g for g, _ in info.guards]
        if isinstance(body, E.Reduce) and not isinstance(body.combiner, str):
            return tuple_stores(self, stage, body, values, out_idx, info.guards)
        if isinstance(body, E.Reduce):
            src = self.translate(body.source, values)
            cur = N.BufferLoad(buf, out_idx, buf.dtype)
            if body.combiner == "sum":
                new = E.Add(cur, src, buf.dtype)
            elif body.combiner == "max":
                new = E.Max(cur, src, buf.dtype)
            else:
                new = E.Min(cur, src, buf.dtype)
            update: N.Stmt = N.BufferStore(buf, new, out_idx)
            if body.condition is not None:
                update = N.IfThenElse(self.translate(body.condition, values), update)
            update = _guard(update, all_guards)
            init = N.BufferStore(buf, reduce_identity(body.combiner, buf.dtype), out_idx)
            return update, _guard(init, spatial_guards)
        value = self.translate(body, values)
        return _guard(N.BufferStore(buf, value, out_idx), all_guards), None

    def loop(self, stage: Stage, leaf: str, body: N.Stmt, for_init: bool = False) -> N.Stmt:
        info = self.info[stage.name]
        ann = stage.annotations.get(leaf)
        if for_init and leaf in stage.init_annotations:
            ann = stage.init_annotations[leaf]
        kind, tag = "serial", ""
        if isinstance(ann, ThreadBinding):
            kind, tag = "thread_binding", ann.tag
        elif ann is not None:
            kind = _KIND[ann]
        if for_init and kind == "parallel":
            kind = "serial"
        items = dict(stage.pragmas.get(leaf, {}))
        if leaf == stage.leaves[0]:
            items.update(stage.pragmas.get("", {}))  # block-level annotations
        # "ansor.*" keys are instructions to the search's post-processor, not to the IR
        items = {k: v for k, v in items.items() if not k.startswith("ansor.")}
        pragmas = tuple(sorted(items.items()))
        return N.For(
            info.leaf_vars[leaf],
            E.IntImm(0),
            E.IntImm(info.extents[leaf]),
            kind,
            body,
            tag,
            pragmas,
        )

    def emit(self, stage: Stage) -> N.Stmt:
        if is_companion(stage.op):
            return N.seq()  # written by the tuple reduction's first output (tuple_lower)
        if isinstance(stage.op, ScanOp):
            return emit_scan(self, stage)
        if thread_reduce_leaves(stage):
            return emit_cross_thread(self, stage)
        update, init = self.stores(stage)
        leaves = stage.leaves
        first_reduce = next(
            (k for k, leaf in enumerate(leaves) if stage.iters[leaf].kind == REDUCE),
            None,
        )
        if stage.init_at is not None and init is not None and stage.init_at in leaves:
            at = leaves.index(stage.init_at)
            if first_reduce is None or at <= first_reduce:
                first_reduce = at  # decompose_reduction: the init goes before that loop
        stmt = update
        info = self.info[stage.name]
        for k in range(len(leaves) - 1, -1, -1):
            leaf = leaves[k]
            inner = self.with_attached(stage, leaf, stmt)
            if info.alloc_at == leaf:
                inner = N.Allocate(info.buffer, inner)
            stmt = self.loop(stage, leaf, inner)
            if k == first_reduce and init is not None:
                init_nest = init
                for leaf2 in reversed(leaves[k:]):
                    if stage.iters[leaf2].kind == SPATIAL:
                        init_nest = self.loop(stage, leaf2, init_nest, for_init=True)
                stmt = N.seq(init_nest, stmt)
        if first_reduce is None and init is not None:
            stmt = N.seq(init, stmt)
        return N.Block(stage.name, stmt)

    def with_attached(self, stage: Stage, leaf: str, inner: N.Stmt) -> N.Stmt:
        attached = self.attached.get((stage.name, leaf))
        if not attached:
            return inner
        before = [p for p in attached if isinstance(p.attach, At)]
        after = [c for c in attached if isinstance(c.attach, After)]
        out = N.seq(*[self.emit(p) for p in before], inner, *[self.emit(c) for c in after])
        for p in reversed(before):
            if p.op.name not in self.arg_buffer:  # an argument is written in place
                out = N.Allocate(self.info[p.name].buffer, out)
        return out

    # -- driver ---------------------------------------------------------------------
    def enclosing_loops(self, stage: Stage) -> list[tuple[Stage, str]]:
        """The loops around ``stage``'s own nest (of the stages it runs inside), outer first."""
        loops: list[tuple[Stage, str]] = []
        cur = stage
        while isinstance(cur.attach, Nested):
            parent = self.by_name[cur.attach.block]
            pos = parent.leaves.index(cur.attach.loop)
            loops = [(parent, lp) for lp in parent.leaves[: pos + 1]] + loops
            cur = parent
        return loops

    def check_argument_written(self, stage: Stage) -> None:
        """An argument computed at another stage's loop must come out whole, race-free.

        As in TVM, such a stage writes the argument buffer in place: each iteration of the
        loops around the attach point writes the region its readers need there. Where the
        readers need only part of the argument, TVM leaves the rest unwritten and the
        caller silently gets whatever the array held; we refuse that program instead
        (compute_root the stage to get all of it). The regions are boxes whose corners
        are expressions of the enclosing loop variables, so every iteration is enumerated
        (per group of axes that share variables) and the boxes are counted per element.

        Regions of different iterations may overlap (a stencil reads B[i] and B[i+1]):
        each recomputes the shared elements in full, which is harmless, even in parallel,
        for an elementwise stage (the same value is stored twice). A reduction, though,
        accumulates in place: two iterations running at once (a parallel or thread-bound
        loop around the attach point) would add into the same element. Refused.
        """
        info = self.info[stage.name]
        n_sp = len(stage.op.axis)
        shape = [int(x) for x in stage.op.shape]
        loops = self.enclosing_loops(stage)
        var_ext: dict = {}
        for st, lp in loops:
            si = self.info[st.name]
            var_ext[si.leaf_vars[lp]] = si.extents[lp]
        where = (
            f"stage {stage.name!r} is a function argument computed at "
            f"{stage.attach.block}.{stage.attach.loop}"
        )
        mins, exts = info.region_min[:n_sp], info.region_ext[:n_sp]
        dim_vars = [E.free_vars(m) for m in mins]
        used: set = set().union(*dim_vars) if dim_vars else set()
        if not used <= var_ext.keys():
            raise LoweringError(
                f"{where}, but its region depends on variables of no "
                "enclosing loop; compute_root it"
            )
        # an enclosing loop the region does not depend on recomputes the same box
        overlap = any(ext > 1 and v not in used for v, ext in var_ext.items())
        groups: list[tuple[list, set]] = []  # axes whose regions share loop variables
        for d in range(n_sp):
            dims, vs = [d], set(dim_vars[d])
            for g in [g for g in groups if g[1] & vs]:
                groups.remove(g)
                dims, vs = dims + g[0], vs | g[1]
            groups.append((sorted(dims), vs))
        for dims, vs in groups:
            counts = box_counts(
                [mins[d] for d in dims],
                [exts[d] for d in dims],
                [shape[d] for d in dims],
                sorted(vs, key=lambda v: v.name),
                var_ext,
                where,
            )
            hole = first_unwritten(counts)
            if hole is not None:
                at = dict(zip(dims, hole))
                idx = ", ".join(str(at[d]) if d in at else ":" for d in range(n_sp))
                raise LoweringError(
                    f"{where}, whose iterations write only the part of it their readers "
                    f"need: {stage.op.name}[{idx}] would never be written (TVM leaves such "
                    f"elements unwritten; ansor_lab refuses). compute_root {stage.name!r} "
                    "to compute all of it, or leave it out of the arguments"
                )
            overlap = overlap or counts.max() > 1
        shared = [
            f"{st.name}.{lp}"
            for st, lp in loops
            if st.annotations.get(lp) not in (None, UNROLL, VECTORIZE)
        ]
        if overlap and shared and isinstance(self.body(stage), E.Reduce):
            raise LoweringError(
                f"{where} inside the parallel or thread-bound loop {shared[0]}, and "
                f"different iterations compute the same elements of it: this reduction "
                "accumulates in place into the argument, so iterations running at once "
                f"would add into the same element. compute_root {stage.name!r}, or make "
                "that loop serial"
            )

    def run(self) -> N.PrimFunc:
        """Lower the whole state into a PrimFunc."""
        for s in self.stages:
            if isinstance(s.attach, Nested):
                target = self.by_name.get(s.attach.block)
                if target is None or s.attach.loop not in target.leaves:
                    raise LoweringError(
                        f"stage {s.name!r} is attached to {s.attach.block}.{s.attach.loop}, "
                        "which is not a loop of the schedule any more"
                    )
        self.infer()  # refuses attachment cycles, which check_scan_schedule walks
        check_scan_schedule(self)
        for s in self.stages:
            if (
                isinstance(s.attach, At)
                and s.op.name in self.arg_buffer
                and s.op.name not in self.scan_written  # a scan's update: one row a step
            ):
                self.check_argument_written(s)
        for s in self.stages:
            if s.is_root:
                self.compact(s)
        body_parts = [self.emit(s) for s in self.stages if s.is_root]
        body = N.seq(*body_parts)
        for s in reversed(self.stages):
            if (
                (s.is_root or isinstance(s.attach, After))
                and s.op.name not in self.arg_buffer
                and self.info[s.name].alloc_at is None
            ):
                body = N.Allocate(self.info[s.name].buffer, body)
        for buf in reversed(self.scan_temporaries):
            body = N.Allocate(buf, body)
        func = N.PrimFunc(tuple(self.params), body, self.name)
        return func


def _sub(a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    if isinstance(b, E.IntImm) and b.value == 0:
        return a
    return E.Sub(a, b, "int32")


def _guard(stmt: N.Stmt, conds: list) -> N.Stmt:
    if not conds:
        return stmt
    cond = conds[0]
    for c in conds[1:]:
        cond = E.And(cond, c)
    return N.IfThenElse(cond, stmt)


def lower_state(
    state: State,
    args: list[Tensor],
    name: str = "main",
    simplify: bool = True,
    check: bool = True,
) -> N.PrimFunc:
    """The PrimFunc computing ``state`` with ``args`` as its parameters."""
    seen = set()
    for t in args:
        if not isinstance(t, Tensor):
            raise LoweringError(f"args must be tensors, got {type(t).__name__} {t!r}")
        if id(t) in seen:
            raise LoweringError(f"tensor {t.name!r} appears twice in args")
        seen.add(id(t))
    args = [state.tensor(t) for t in args]  # the user's tensors -> the state's (renamed)
    for t in args:  # stages are named by their ops (a cache_write keeps the name)
        if isinstance(t.op, ComputeOp) and t.op.name not in state.stages:
            # it would be a parameter nothing writes: its array would come back untouched
            raise LoweringError(
                f"argument {t.name!r} is a te.compute this schedule does not compute (it is "
                "not an output of te.create_schedule, nor read by one): create the schedule "
                f"with it, te.create_schedule([..., {t.name}.op]), or pass a te.placeholder "
                "for an input"
            )
    func = _Lowerer(state, list(args), name).run()
    if simplify:
        func = func.with_body(simplify_stmt(func.body))
    func = lower_gpu(func)
    if check:  # the search lowers thousands of candidates for features only: it skips this
        verify(func)
    return func
