"""Lowering a schedule State to a loop-IR PrimFunc.

The steps, in order:

1. inline the bodies of inlined stages into their consumers;
2. bound inference: in reverse topological order, each stage attached at a consumer's
   loop gets the region of its output that the loops inside that point read (the inner
   loops are relaxed over their ranges, the outer ones stay symbolic); a root stage's
   region is its whole shape;
3. each stage's loop nest: leaf loops from the split/fuse relations over its region,
   the reduction init placed just above the first reduction loop (over the spatial
   loops below it), guards where a split does not divide its loop, attached stages
   (with their region-sized buffers) at the top of the loop they are attached to;
4. simplify and verify.

A stage that is a function argument writes the argument buffer itself. Computed at a
loop (TE style only: the block style refuses compute_at of an output block, as TVM's
TIR does), it writes in place the region each iteration needs, and the regions must add
up to the whole argument (``check_argument_written``); inlined (TE style), it is not
computed at all and the argument is left as the caller passed it, as in TVM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..dsl import expr as E
from ..dsl.intrin import reduce_identity
from ..dsl.tensor import ComputeOp, PlaceholderOp, Tensor
from ..errors import LoweringError
from ..ir import nodes as N
from ..ir.simplify import Analyzer, from_linear, linear_form, simplify_stmt
from ..ir.verify import verify
from .argument_cover import box_counts, first_unwritten
from .state import (
    After,
    At,
    IterKind,
    LoopKind,
    Nested,
    Split,
    Stage,
    State,
    ThreadBinding,
    derive_extents,
    inlined_body,
    pass_up,
)

#: the IR's ``For`` kind of each annotated loop kind
_KIND = {
    LoopKind.PARALLEL: "parallel",
    LoopKind.VECTORIZE: "vectorized",
    LoopKind.UNROLL: "unrolled",
}


class ReaderOutsideError(LoweringError):
    """A stage is computed at a loop that one of its readers runs outside of.

    Block-style steps raise it at once; the TE-style schedule accepts the state and
    lowering raises it if it still holds then (TVM's TE checks at InferBound).
    """


@dataclass
class _StageInfo:
    """What lowering derives for one stage: region, loops and index expressions."""

    region_min: list  # per root iter (spatial first): PrimExpr
    region_ext: list  # per root iter: int
    extents: dict  # iter name -> int
    leaf_vars: dict  # leaf name -> Var
    values: dict  # iter name -> PrimExpr over leaf vars (offset within the region)
    guards: list  # (condition, is_reduce) pairs
    buffer: N.Buffer | None = None
    buf_min: list | None = None  # per spatial axis: where the buffer's index 0 lies
    alloc_at: str | None = None  # a root intermediate compacted into one of its loops


class _Lowerer:
    def __init__(self, state: State, args: list[Tensor], name: str) -> None:
        self.state = state
        self.args = args
        self.name = name
        self.used_names: dict[str, int] = {}
        self.params = [N.Buffer(t.name, tuple(t.shape), t.dtype) for t in args]
        # tensors are matched by name: ops rewritten by cache_read/cache_write keep theirs
        self.arg_buffer = {t.name: b for t, b in zip(args, self.params)}
        self.stages = [s for s in state.stages.values() if s.is_compute]
        self.by_name = {s.name: s for s in self.stages}
        self.by_op = {s.op.name: s for s in self.stages}
        self.info: dict[str, _StageInfo] = {}
        self.bodies: dict[str, E.PrimExpr] = {}
        self._reads: dict[str, dict] = {}
        self.attached: dict[tuple[str, str], list[Stage]] = {}
        for s in self.stages:
            if isinstance(s.attach, Nested):
                self.attached.setdefault((s.attach.block, s.attach.loop), []).append(s)

    # -- naming ---------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self.used_names:
            k += 1
            name = f"{base}_{k}"
        self.used_names[name] = 1
        return name

    # -- step 1: inlining -----------------------------------------------------------
    def body(self, stage: Stage) -> E.PrimExpr:
        return inlined_body(self.state, stage, self.bodies)

    def reads(self, stage: Stage, producer: Stage) -> list[tuple]:
        """Index tuples with which ``stage`` (after inlining) reads ``producer``."""
        table = self._reads.get(stage.name)
        if table is None:
            table = {}
            for node in E.post_order(self.body(stage)):
                if isinstance(node, E.TensorLoad):
                    table.setdefault(node.tensor.op.name, []).append(node.indices)
            self._reads[stage.name] = table
        return table.get(producer.op.name, [])

    # -- step 2: bound inference ----------------------------------------------------
    def root_vars(self, stage: Stage) -> list[E.Var]:
        op = stage.op
        return [iv.var for iv in op.axis] + [iv.var for iv in op.reduce_axis]

    def root_values(self, stage: Stage) -> dict:
        """Root var -> absolute index expression over the stage's leaf vars."""
        info = self.info[stage.name]
        out = {}
        for var, it, lo in zip(self.root_vars(stage), stage.root, info.region_min):
            out[var] = _add(lo, info.values[it.name])
        return out

    def loop_ranges(self, stages: list[Stage]) -> dict:
        """Loop var -> (0, extent - 1) for every loop of ``stages`` (to relax them)."""
        out = {}
        for s in stages:
            si = self.info[s.name]
            out.update({si.leaf_vars[lp]: (0, si.extents[lp] - 1) for lp in s.leaves})
        return out

    def chain_to(self, stage: Stage, target: Stage) -> list[Stage] | None:
        """Stages from ``stage`` up its attach chain to (not including) ``target``."""
        chain = []
        cur = stage
        while cur is not target:
            chain.append(cur)
            if not isinstance(cur.attach, Nested):
                return None
            cur = self.by_name[cur.attach.block]
        return chain

    def infer_region(self, stage: Stage) -> tuple[list, list]:
        op = stage.op
        shape = list(op.shape)
        n_spatial = len(op.axis)
        # the op's whole domain: stage.root holds the region of the last bound inference,
        # which a later reorder / split of the target's loops may have made stale
        axes = list(op.axis) + list(op.reduce_axis)
        full = ([E.IntImm(int(iv.dom.min)) for iv in axes], [int(iv.dom.extent) for iv in axes])
        if isinstance(stage.attach, After):
            return self.infer_region_after(stage, full)
        if not isinstance(stage.attach, At):
            return full
        target = self.by_name[stage.attach.block]
        x = stage.attach.loop
        consumers = [
            s for s in self.stages if not s.is_inlined and s is not stage and self.reads(s, stage)
        ]
        if not consumers:
            return full
        tinfo = self.info[target.name]
        pos = target.leaves.index(x)
        relax: dict[E.Var, tuple] = {}
        for leaf in target.leaves[pos + 1 :]:
            relax[tinfo.leaf_vars[leaf]] = (0, tinfo.extents[leaf] - 1)
        spans: list = [None] * n_spatial
        for c in consumers:
            chain = self.chain_to(c, target)
            if chain is None or (chain and self._entry_pos(chain[-1], target) < pos):
                raise ReaderOutsideError(
                    f"stage {stage.name!r} is computed at {target.name}.{x} but stage "
                    f"{c.name!r} reads it outside that loop; compute_at the reader too, "
                    "or attach the stage at a loop that encloses every reader"
                )
            local = {**relax, **self.loop_ranges(chain)}
            values = self.root_values(c)
            for index in self.reads(c, stage):
                for d, e in enumerate(index):
                    lo_hi = _relax(E.substitute(e, values), local)
                    if lo_hi is None:
                        spans[d] = "full"
                    elif spans[d] is None:
                        spans[d] = lo_hi
                    else:
                        spans[d] = _union(spans[d], lo_hi)
        mins, exts = list(full[0]), list(full[1])
        for d in range(n_spatial):
            span = spans[d]
            if span is None or span == "full":
                continue
            sym, lo, hi = span
            ext = hi - lo + 1
            if ext >= shape[d]:
                continue
            if not sym:
                lo = max(lo, 0)
                hi = min(hi, shape[d] - 1)
                mins[d], exts[d] = E.IntImm(lo), hi - lo + 1
            else:
                mins[d] = from_linear(dict(sym), lo, "int32")
                exts[d] = ext
        return mins, exts

    def infer_region_after(self, stage: Stage, full: tuple) -> tuple[list, list]:
        """Region of a consumer computed after a producer's loop: what that loop wrote.

        One iteration of the loop must write a dense box of the producer (a loop split
        off *outside* the attach point while its outer part stays inside writes a strided
        set; a fused loop cut mid-row writes a ragged one): the consumer, run on the
        box, would read elements that are not written yet.
        """
        producer = self.by_name[stage.attach.block]
        x = stage.attach.loop
        pinfo = self.info[producer.name]
        pos = producer.leaves.index(x)
        inner = producer.leaves[pos + 1 :]
        relax = {pinfo.leaf_vars[leaf]: (0, pinfo.extents[leaf] - 1) for leaf in inner}
        pvalues = self.root_values(producer)
        covered = _covered_lengths(producer, set(inner), pinfo.extents)
        mins, exts = list(full[0]), list(full[1])
        reads = self.reads(stage, producer)
        where = f"stage {stage.name!r} is computed after {producer.name}.{x}"
        if not reads:
            raise LoweringError(f"{where} but no longer reads {producer.op.name!r}")
        axis_pos = {iv.var: d for d, iv in enumerate(stage.op.axis)}
        zero = {pinfo.leaf_vars[leaf]: E.IntImm(0) for leaf in inner}
        for d, idx in enumerate(reads[0]):
            it = producer.root[d]
            if not isinstance(idx, E.Var) or idx not in axis_pos:
                raise LoweringError(
                    f"{where} but reads {producer.op.name!r} at "
                    f"[{', '.join(map(str, reads[0]))}], not at its own loop variables"
                )
            if covered[it.name] is None:
                raise LoweringError(
                    f"{where}, but one iteration of that loop writes a strided or ragged part "
                    f"of axis {it.name!r} of {producer.op.name!r} (a loop split from it is "
                    f"inside {x!r} while a loop with a finer stride is outside); reorder the "
                    "loops so the inner part of each split stays inside, or attach elsewhere"
                )
            k = axis_pos[idx]
            length = covered[it.name]
            if length >= stage.op.shape[k]:
                continue
            written = _relax(pvalues[producer.op.axis[d].var], relax)
            if written is not None and written[2] - written[1] + 1 == length:
                sym, lo, _ = written
                mins[k] = from_linear(dict(sym), lo, "int32")
            else:  # the box starts where the inner loops are all 0
                mins[k] = E.substitute(pvalues[producer.op.axis[d].var], zero)
            exts[k] = length
        return mins, exts

    def _entry_pos(self, top: Stage, target: Stage) -> int:
        return target.leaves.index(top.attach.loop)

    def build_info(self, stage: Stage) -> None:
        mins, exts = self.infer_region(stage)
        extents = derive_extents(stage, exts)
        leaf_vars = {leaf: E.Var(self.var_names[(stage.name, leaf)]) for leaf in stage.leaves}
        values, guards = pass_up(stage, leaf_vars, extents)
        # a region that may stick out of the tensor (attached stages) is guarded too
        for d, (it, lo) in enumerate(zip(stage.root, mins)):
            if it.kind != IterKind.SPATIAL or isinstance(lo, E.IntImm):
                continue
            absolute = _add(lo, values[it.name])
            extent = stage.op.shape[d]
            guards.append(
                (E.And(E.GE(absolute, E.IntImm(0)), E.LT(absolute, E.IntImm(extent))), False)
            )
        info = _StageInfo(mins, exts, extents, leaf_vars, values, guards)
        op = stage.op
        if op.name in self.arg_buffer:
            # an argument computed at another stage's loop is written in place, at absolute
            # indices, one region per iteration (TVM); ``check_argument_written`` makes sure
            # those regions add up to the whole argument
            info.buffer = self.arg_buffer[op.name]
        else:
            n_sp = len(op.axis)
            at = isinstance(stage.attach, At)
            shape = tuple(exts[:n_sp]) if at else tuple(op.shape)
            shape = _permute(shape, stage.layout)
            strides = _aligned_strides(shape, stage.storage_align)
            info.buffer = N.Buffer(op.name, shape, op.dtype, stage.scope, strides)
            if at:
                info.buf_min = list(mins[:n_sp])
        self.info[stage.name] = info

    def compact(self, stage: Stage) -> None:
        """Shrink a root intermediate whose readers all run inside its own loops.

        Like TVM's buffer compaction: the buffer is allocated inside the outermost of its
        loops that encloses every reader (outside all reduction loops) and covers only
        what one iteration of that loop writes and reads — a tile that can live in
        registers (cache_write "local" + reverse_compute_at relies on this).
        """
        info = self.info[stage.name]
        if not stage.is_root or stage.op.name in self.arg_buffer or stage.storage_align:
            return
        readers = [
            c for c in self.stages if not c.is_inlined and c is not stage and self.reads(c, stage)
        ]
        if not readers:
            return
        positions = []
        for c in readers:
            chain = self.chain_to(c, stage)
            if not chain:
                return
            positions.append(stage.leaves.index(chain[-1].attach.loop))
        pos = min(positions)
        first_reduce = next(
            (k for k, lp in enumerate(stage.leaves) if stage.iters[lp].kind == IterKind.REDUCE),
            len(stage.leaves),
        )
        if stage.init_at in stage.leaves:
            # decompose_reduction: the init nest runs before loop init_at, so a buffer
            # allocated inside that loop (or an inner one) would miss the init's writes
            first_reduce = min(first_reduce, stage.leaves.index(stage.init_at))
        if pos >= first_reduce:
            return
        relax = {info.leaf_vars[lp]: (0, info.extents[lp] - 1) for lp in stage.leaves[pos + 1 :]}
        values = self.root_values(stage)
        spans = [_relax(values[iv.var], relax) for iv in stage.op.axis]
        for c in readers:
            local = {**relax, **self.loop_ranges(self.chain_to(c, stage))}
            cvalues = self.root_values(c)
            for index in self.reads(c, stage):
                for d, e in enumerate(index):
                    spans[d] = _union(spans[d], _relax(E.substitute(e, cvalues), local))
        shape, mins = [], []
        for d, span in enumerate(spans):
            if span is None or span == "full" or span[2] - span[1] + 1 >= stage.op.shape[d]:
                shape.append(stage.op.shape[d])
                mins.append(E.IntImm(0))
            else:
                sym, lo, hi = span
                shape.append(hi - lo + 1)
                mins.append(from_linear(dict(sym), lo, "int32"))
        if tuple(shape) == tuple(stage.op.shape):
            return
        shape = _permute(shape, stage.layout)
        info.buffer = N.Buffer(stage.op.name, tuple(shape), stage.op.dtype, stage.scope)
        info.buf_min = mins
        info.alloc_at = stage.leaves[pos]

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
        return N.BufferLoad(info.buffer, _permute(idx, producer.layout), info.buffer.dtype)

    def translate(self, e: E.PrimExpr, values: dict) -> E.PrimExpr:
        def visit(node: E.PrimExpr) -> E.PrimExpr:
            if isinstance(node, E.TensorLoad):
                inner = E.TensorLoad(node.tensor, tuple(visit(i) for i in node.indices), node.dtype)
                return self.load(inner, {})
            if isinstance(node, E.Var):
                return values.get(node, node)
            return E.map_children(node, visit)

        return visit(e)

    def stores(self, stage: Stage) -> tuple[N.Stmt, N.Stmt | None]:
        """(update statement, init statement or None) at the innermost point."""
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
        out_idx = _permute(out_idx, stage.layout)
        buf = info.buffer
        body = self.body(stage)
        spatial_guards = [g for g, red in info.guards if not red]
        all_guards = [g for g, _ in info.guards]
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
        update, init = self.stores(stage)
        leaves = stage.leaves
        first_reduce = next(
            (k for k, leaf in enumerate(leaves) if stage.iters[leaf].kind == IterKind.REDUCE),
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
                    if stage.iters[leaf2].kind == IterKind.SPATIAL:
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
    def infer(self) -> None:
        """Name the loops and run bound inference for every stage."""
        # names are handed out producers first, so the first stage gets plain "i"
        self.var_names = {
            (s.name, leaf): self.fresh(leaf)
            for s in self.stages
            if not s.is_inlined
            for leaf in s.leaves
        }
        for s in reversed(self.stages):
            if not s.is_inlined:
                self.ensure_info(s, ())
        for s in self.stages:
            if not s.is_inlined:
                self.check_reads_inside_producer(s)

    def check_reads_inside_producer(self, stage: Stage) -> None:
        """A stage nested in a producer's loop may read only what that loop has written.

        A consumer C computed after producer P's loop x (reverse_compute_at) carries the
        stages computed inside it along. C itself reads exactly the box one iteration of x
        wrote (``infer_region_after``), but a stage nested in C that also reads P (softmax:
        the exp-sum computed inside the normalization, both reading exp) may need more of
        P than that box, e.g. a whole row while x is the column loop: it would read
        elements not written yet. Refuse, unless its reads lie inside the box.
        """
        below = [stage]
        cur = stage
        while isinstance(cur.attach, Nested):
            parent = self.by_name[cur.attach.block]
            if isinstance(cur.attach, After) and cur is not stage and self.reads(stage, parent):
                self._check_read_within_box(stage, below, parent, cur)
            below.append(parent)  # no cycles: ensure_info has refused them already
            cur = parent

    def _check_read_within_box(
        self, stage: Stage, below: list, producer: Stage, after: Stage
    ) -> None:
        x = after.attach.loop
        pinfo = self.info[producer.name]
        inner = producer.leaves[producer.leaves.index(x) + 1 :]
        written_relax = {pinfo.leaf_vars[leaf]: (0, pinfo.extents[leaf] - 1) for leaf in inner}
        pvalues = self.root_values(producer)
        box = [_relax(pvalues[iv.var], written_relax) for iv in producer.op.axis]
        read_relax = self.loop_ranges(below)
        values = self.root_values(stage)
        for index in self.reads(stage, producer):
            for d, e in enumerate(index):
                span = _relax(E.substitute(e, values), read_relax)
                if _contains(box[d], span):
                    continue
                raise LoweringError(
                    f"stage {stage.name!r} runs inside {producer.name}.{x} (it is computed "
                    f"inside {after.name!r}, which is computed after that loop) and reads "
                    f"{producer.op.name!r} beyond what one iteration of that loop has "
                    f"written (axis {d}); reverse_compute_at {after.name!r} at an outer loop "
                    f"of {producer.name!r}, or compute {stage.name!r} at root"
                )

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
            if st.annotations.get(lp) not in (None, LoopKind.UNROLL, LoopKind.VECTORIZE)
        ]
        if overlap and shared and isinstance(self.body(stage), E.Reduce):
            raise LoweringError(
                f"{where} inside the parallel or thread-bound loop {shared[0]}, and "
                f"different iterations compute the same elements of it: this reduction "
                "accumulates in place into the argument, so iterations running at once "
                f"would add into the same element. compute_root {stage.name!r}, or make "
                "that loop serial"
            )

    def ensure_info(self, stage: Stage, pending: tuple) -> None:
        """Build ``stage``'s info after the stages its region depends on."""
        if stage.name in self.info:
            return
        if stage.name in pending:
            chain = " -> ".join(pending + (stage.name,))
            raise LoweringError(f"blocks are computed inside each other in a cycle: {chain}")
        pending = pending + (stage.name,)
        if isinstance(stage.attach, Nested):
            self.ensure_info(self.by_name[stage.attach.block], pending)
        if isinstance(stage.attach, At):
            for c in self.stages:
                if not c.is_inlined and c is not stage and self.reads(c, stage):
                    self.ensure_info(c, pending)
        self.build_info(stage)

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
        self.infer()
        for s in self.stages:
            if isinstance(s.attach, At) and s.op.name in self.arg_buffer:
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
        func = N.PrimFunc(tuple(self.params), body, self.name)
        return func


def _add(a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    if isinstance(a, E.IntImm) and a.value == 0:
        return b
    if isinstance(b, E.IntImm) and b.value == 0:
        return a
    return E.Add(a, b, "int32")


def _sub(a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    if isinstance(b, E.IntImm) and b.value == 0:
        return a
    return E.Sub(a, b, "int32")


def _permute(seq, layout: tuple | None) -> tuple:
    """``seq`` (per axis) in storage order: storage dim k holds axis ``layout[k]``."""
    return tuple(seq) if layout is None else tuple(seq[a] for a in layout)


def _aligned_strides(shape: tuple, align: dict) -> tuple:
    """Row-major strides padded so that stride[axis] % factor == offset (storage_align)."""
    if not align:
        return ()
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        stride = strides[d + 1] * shape[d + 1]
        if d in align:
            factor, offset = align[d]
            while stride % factor != offset % factor:
                stride += 1
        strides[d] = stride
    return tuple(strides)


def _guard(stmt: N.Stmt, conds: list) -> N.Stmt:
    if not conds:
        return stmt
    cond = conds[0]
    for c in conds[1:]:
        cond = E.And(cond, c)
    return N.IfThenElse(cond, stmt)


def _relax(e: E.PrimExpr, ranges: dict) -> tuple | None:
    """(symbolic terms, lo, hi) of ``e`` with the variables in ``ranges`` relaxed."""
    form = linear_form(e)
    if form is None:
        return None
    terms, const = form
    lo = hi = const
    sym: dict = {}
    an = Analyzer(ranges)
    for term, coeff in terms.items():
        fv = E.free_vars(term)
        if not fv & ranges.keys():
            sym[term] = coeff
            continue
        if not fv <= ranges.keys():
            return None
        t_lo, t_hi = an.bound(term)
        if t_lo == float("-inf") or t_hi == float("inf"):
            return None
        a, b = coeff * t_lo, coeff * t_hi
        lo += min(a, b)
        hi += max(a, b)
    return (tuple(sorted(sym.items(), key=lambda kv: (repr(kv[0]), kv[1]))), int(lo), int(hi))


def _covered_lengths(stage: Stage, inner: set, extents: dict) -> dict:
    """How much of each iter one iteration of the loops outside ``inner`` covers.

    Maps every iter name to the length of the interval its values sweep while the
    ``inner`` leaves run (1: a single point; its extent: all of it), or to None when the
    values are not an interval (strided or ragged). Walks the split/fuse relations from
    the leaves back to the root iters, as ``pass_up`` does, tracking for each iter
    ``(length, align)``: its values are ``[start, start + length)`` with ``start`` always
    a multiple of ``align`` (0: always 0). A fused loop's run splits into a box of its
    children only if it is whole rows of the inner children that never wrap.
    """
    cov: dict = {lp: ((extents[lp], 0) if lp in inner else (1, 1)) for lp in stage.leaves}
    for rel in reversed(stage.relations):
        if isinstance(rel, Split):
            cov[rel.parent] = _split_cover(rel, cov, extents)
            continue
        exts = [extents[c] for c in rel.children]
        out: list = [None] * len(exts)
        if cov[rel.fused] is not None:
            length, align = cov[rel.fused]
            rows = 1  # product of the extents of the children inside child k
            for k in range(len(exts) - 1, -1, -1):
                if length <= rows * exts[k] or k == 0:
                    if length % rows == 0 and align % rows == 0:
                        run, start = length // rows, align // rows
                        room = exts[k] if start == 0 else math.gcd(start, exts[k])
                        if k == 0 or run <= room:
                            sub = start if k == 0 else (0 if start == 0 else room)
                            out = [(1, 1)] * k + [(run, sub)] + [(e, 0) for e in exts[k + 1 :]]
                    break
                rows *= exts[k]
        for c, v in zip(rel.children, out):
            cov[c] = v
    return {name: (None if v is None else v[0]) for name, v in cov.items()}


def _split_cover(rel: Split, cov: dict, extents: dict) -> tuple | None:
    """(length, align) of a split's parent from those of its children (see above)."""
    length, align, stride, partial = 1, 0, 1, False
    for child in reversed(rel.children):
        if cov[child] is None:
            return None
        n, a = cov[child]
        if partial:
            if n != 1:
                return None  # a point inside a partly covered child: strided
            if extents[child] > 1:
                align = math.gcd(align, stride)
        elif n == extents[child]:
            length *= n
        else:
            length *= n
            align = a * stride
            partial = True
        stride *= extents[child]
    return min(length, extents[rel.parent]), align


def _union(a, b):
    if a is None or b is None or a == "full" or b == "full":
        return "full"
    sym_a, lo_a, hi_a = a
    sym_b, lo_b, hi_b = b
    if len(sym_a) != len(sym_b) or any(
        not E.structural_equal(ta, tb) or ca != cb for (ta, ca), (tb, cb) in zip(sym_a, sym_b)
    ):
        return "full"
    return (sym_a, min(lo_a, lo_b), max(hi_a, hi_b))


def _contains(outer, inner) -> bool:
    """Whether relaxed span ``inner`` lies inside ``outer`` (same symbolic part)."""
    if outer is None or inner is None:
        return False
    sym_o, lo_o, hi_o = outer
    sym_i, lo_i, hi_i = inner
    same = len(sym_o) == len(sym_i) and all(
        E.structural_equal(to, ti) and co == ci for (to, co), (ti, ci) in zip(sym_o, sym_i)
    )
    return same and lo_o <= lo_i and hi_i <= hi_o


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
    func = _Lowerer(state, list(args), name).run()
    if simplify:
        func = func.with_body(simplify_stmt(func.body))
    if check:  # the search lowers thousands of candidates for features only: it skips this
        verify(func)
    return func


def infer_regions(state: State) -> dict[str, list[int]]:
    """Root extents of every attached stage, by bound inference (used by primitives)."""
    lw = _Lowerer(state, [], "main")
    lw.infer()
    return {
        s.name: list(lw.info[s.name].region_ext) for s in lw.stages if isinstance(s.attach, Nested)
    }
