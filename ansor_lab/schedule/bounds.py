"""Bound inference: the region of every stage, its loops and its index expressions.

A pure function of a State (and the function's arguments): nothing is emitted. Lowering
builds on it (``lower._Lowerer`` adds the loop nests), and primitives call
``infer_regions`` after a step to refresh the extents of attached stages and to reject a
step whose regions cannot be inferred.

1. inlining: the bodies of inlined stages are substituted into their readers;
2. in reverse topological order, each stage computed at a consumer's loop (``At``) gets
   the region of its output that the loops inside that point read (the inner loops are
   relaxed over their ranges, the outer ones stay symbolic); a stage computed after a
   producer's loop (``After``) gets the box one iteration of that loop wrote; a root
   stage's region is its whole shape;
3. each stage's buffer: region-sized for an attached stage, the whole tensor for a root
   one, shrunk to what one iteration of a loop needs where every reader runs inside it
   (``compact``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dsl import expr as E
from ..dsl.tensor import Tensor
from ..errors import LoweringError
from ..ir import nodes as N
from ..ir.simplify import from_linear
from .attachment import Merged
from .inlined_reads import inlined_body, read_table
from .loop_kinds import REDUCE, SPATIAL, ThreadBinding
from .regions import (
    covered_lengths,
    needs_thread_relax,
    relaxed_span,
    span_contains,
    union_spans,
)
from .state import (
    After,
    At,
    Inline,
    Nested,
    Stage,
    State,
    derive_extents,
    pass_up,
)


class ReaderOutsideError(LoweringError):
    """A stage is computed at a loop that one of its readers runs outside of.

    Block-style steps raise it at once; the TE-style schedule accepts the state and
    lowering raises it if it still holds then (TVM's TE checks at InferBound).
    """


@dataclass
class StageInfo:
    """What bound inference derives for one stage: region, loops and index expressions."""

    region_min: list  # per root iter (spatial first): PrimExpr
    region_ext: list  # per root iter: int
    extents: dict  # iter name -> int
    leaf_vars: dict  # leaf name -> Var
    values: dict  # iter name -> PrimExpr over leaf vars (offset within the region)
    guards: list  # (condition, is_reduce) pairs
    buffer: N.Buffer | None = None
    buf_min: list | None = None  # per spatial axis: where the buffer's index 0 lies
    alloc_at: str | None = None  # a root intermediate compacted into one of its loops


class BoundInference:
    """Regions, loop variables and buffers of every compute stage of ``state``.

    ``args`` are the function's parameters: a stage writing one writes the argument
    buffer itself. ``infer()`` fills ``info`` (stage name -> ``StageInfo``).
    """

    def __init__(self, state: State, args: list[Tensor]) -> None:
        self.state = state
        self.args = args
        self.used_names: dict[str, int] = {}
        self.params = [N.Buffer(t.name, tuple(t.shape), t.dtype) for t in args]
        # tensors are matched by name: ops rewritten by cache_read/cache_write keep theirs
        self.arg_buffer = {t.name: b for t, b in zip(args, self.params)}
        self.stages = [s for s in state.stages.values() if s.is_compute]
        self.by_name = {s.name: s for s in self.stages}
        self.info: dict[str, StageInfo] = {}
        self._reads: dict[str, dict] = {}

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
        return inlined_body(self.state, stage)

    def reads(self, stage: Stage, producer: Stage) -> list[tuple]:
        """Index tuples with which ``stage`` (after inlining) reads ``producer``."""
        table = self._reads.get(stage.name)
        if table is None:  # shared with every state of the search (never mutated)
            table = self._reads[stage.name] = read_table(self.state, stage)
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
        if isinstance(stage.attach, Merged):
            return self.infer_region_merged(stage, full)
        if isinstance(stage.attach, After):
            return self.infer_region_after(stage, full)
        if not isinstance(stage.attach, At):
            return full
        target = self.by_name[stage.attach.block]
        x = stage.attach.loop
        consumers = [
            s
            for s in self.stages
            if not isinstance(s.attach, Inline) and s is not stage and self.reads(s, stage)
        ]
        if not consumers:
            return full
        tinfo = self.info[target.name]
        pos = target.leaves.index(x)
        relax: dict[E.Var, tuple] = self.thread_ranges(self.scope_of(stage), target, pos)
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
                    lo_hi = relaxed_span(E.substitute(e, values), local)
                    if lo_hi is None:
                        spans[d] = "full"
                    elif spans[d] is None:
                        spans[d] = lo_hi
                    else:
                        spans[d] = union_spans(spans[d], lo_hi)
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

    def scope_of(self, stage: Stage) -> str:
        """The storage scope of ``stage``'s buffer; TVM's ``InferStorageScope`` for a default.

        A stage left at the default "global" and computed under GPU-bound loops is stored
        where its threads can reach it and no further: under a threadIdx/vthread loop
        "local" (one per thread: the rfactor stage of a cross-thread reduction), under
        blockIdx loops only "shared". A function argument is always global.
        """
        if stage.scope != "global" or not isinstance(stage.attach, At):
            return stage.scope
        if stage.op.name in self.arg_buffer:
            return "global"
        rank = -1
        cur, upto = self.by_name[stage.attach.block], stage.attach.loop
        while True:
            for leaf in cur.leaves[: cur.leaves.index(upto) + 1]:
                ann = cur.annotations.get(leaf)
                if isinstance(ann, ThreadBinding):
                    rank = max(rank, 0 if ann.tag.startswith("blockIdx") else 1)
            if not isinstance(cur.attach, Nested):
                break
            cur, upto = self.by_name[cur.attach.block], cur.attach.loop
        return ("global", "shared", "local")[rank + 1]

    def thread_ranges(self, scope: str, target: Stage, pos: int) -> dict:
        """Ranges of the thread-bound loops around ``target.leaves[pos]`` a ``scope`` buffer spans.

        A "shared" stage computed under threadIdx/vthread loops is one buffer per block,
        so its region covers what every thread of the block reads (TVM's ``NeedRelax``),
        not what one thread reads; the loops of the stages ``target`` runs inside count too.
        """
        out: dict = {}
        if scope in ("", "local"):
            return out
        cur, upto = target, pos
        while True:
            info = self.info[cur.name]
            for leaf in cur.leaves[: upto + 1]:
                ann = cur.annotations.get(leaf)
                if isinstance(ann, ThreadBinding) and needs_thread_relax(scope, ann.tag):
                    out[info.leaf_vars[leaf]] = (0, info.extents[leaf] - 1)
            if not isinstance(cur.attach, Nested):
                return out
            parent = self.by_name[cur.attach.block]
            upto = parent.leaves.index(cur.attach.loop)
            cur = parent

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
        covered = covered_lengths(producer, set(inner), pinfo.extents)
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
            written = relaxed_span(pvalues[producer.op.axis[d].var], relax)
            if written is not None and written[2] - written[1] + 1 == length:
                sym, lo, _ = written
                mins[k] = from_linear(dict(sym), lo, "int32")
            else:  # the box starts where the inner loops are all 0
                mins[k] = E.substitute(pvalues[producer.op.axis[d].var], zero)
            exts[k] = length
        return mins, exts

    def infer_region_merged(self, stage: Stage, full: tuple) -> tuple[list, list]:
        """Region of a block merged into a host's loops: one index per merged loop."""
        host = self.by_name[stage.attach.block]
        hinfo = self.info[host.name]
        mins, exts = list(full[0]), list(full[1])
        for axis, loop in stage.attach.axes:
            if loop not in host.leaves or hinfo.extents[loop] != exts[axis]:
                raise LoweringError(
                    f"block {stage.name!r} was merged with loop {loop!r} of {host.name!r}, "
                    "which a later step split, fused or shrank; split or fuse the loops "
                    "before merging them"
                )
            mins[axis] = _add(mins[axis], hinfo.leaf_vars[loop])
            exts[axis] = 1
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
            if it.kind != SPATIAL or isinstance(lo, E.IntImm):
                continue
            absolute = _add(lo, values[it.name])
            extent = stage.op.shape[d]
            guards.append(
                (E.And(E.GE(absolute, E.IntImm(0)), E.LT(absolute, E.IntImm(extent))), False)
            )
        info = StageInfo(mins, exts, extents, leaf_vars, values, guards)
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
            shape = permute(shape, stage.layout)
            strides = aligned_strides(shape, stage.storage_align)
            info.buffer = N.Buffer(op.name, shape, op.dtype, self.scope_of(stage), strides)
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
            c
            for c in self.stages
            if not isinstance(c.attach, Inline) and c is not stage and self.reads(c, stage)
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
            (k for k, lp in enumerate(stage.leaves) if stage.iters[lp].kind == REDUCE),
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
        spans = [relaxed_span(values[iv.var], relax) for iv in stage.op.axis]
        for c in readers:
            local = {**relax, **self.loop_ranges(self.chain_to(c, stage))}
            cvalues = self.root_values(c)
            for index in self.reads(c, stage):
                for d, e in enumerate(index):
                    spans[d] = union_spans(spans[d], relaxed_span(E.substitute(e, cvalues), local))
        shape, mins = [], []
        for d, span in enumerate(spans):
            if span is None or span == "full" or span[2] - span[1] + 1 >= stage.op.shape[d]:
                shape.append(stage.op.shape[d])
                mins.append(E.IntImm(0))
            else:
                sym, lo, hi = span
                shape.append(hi - lo + 1)
                mins.append(from_linear(dict(sym), lo, "int32"))
        if tuple(shape) == tuple(stage.op.shape) and stage.scope == "global":
            return  # nothing to compact (a local or shared buffer still belongs in its kernel)
        shape = permute(shape, stage.layout)
        info.buffer = N.Buffer(stage.op.name, tuple(shape), stage.op.dtype, stage.scope)
        info.buf_min = mins
        info.alloc_at = stage.leaves[pos]

    # -- driver ---------------------------------------------------------------------
    def infer(self) -> None:
        """Name the loops and run bound inference for every stage."""
        # names are handed out producers first, so the first stage gets plain "i"
        self.var_names = {
            (s.name, leaf): self.fresh(leaf)
            for s in self.stages
            if not isinstance(s.attach, Inline)
            for leaf in s.leaves
        }
        for s in reversed(self.stages):
            if not isinstance(s.attach, Inline):
                self.ensure_info(s, ())
        for s in self.stages:
            if not isinstance(s.attach, Inline):
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
        if isinstance(stage.attach, Merged):  # it reads what the host's loop has written
            host = self.by_name[stage.attach.block]
            if self.reads(stage, host):
                try:
                    self._check_read_within_box(stage, below, host, stage)
                except LoweringError:
                    raise LoweringError(
                        f"block {stage.name!r} merged into {host.name}.{stage.attach.loop} "
                        f"reads {host.op.name!r} beyond what that loop's iteration has "
                        "written; merged loops must only read what the same iteration wrote"
                    ) from None
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
        box = [relaxed_span(pvalues[iv.var], written_relax) for iv in producer.op.axis]
        read_relax = self.loop_ranges(below)
        values = self.root_values(stage)
        for index in self.reads(stage, producer):
            for d, e in enumerate(index):
                span = relaxed_span(E.substitute(e, values), read_relax)
                if span_contains(box[d], span):
                    continue
                raise LoweringError(
                    f"stage {stage.name!r} runs inside {producer.name}.{x} (it is computed "
                    f"inside {after.name!r}, which is computed after that loop) and reads "
                    f"{producer.op.name!r} beyond what one iteration of that loop has "
                    f"written (axis {d}); reverse_compute_at {after.name!r} at an outer loop "
                    f"of {producer.name!r}, or compute {stage.name!r} at root"
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
                if not isinstance(c.attach, Inline) and c is not stage and self.reads(c, stage):
                    self.ensure_info(c, pending)
        self.build_info(stage)


def _add(a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    if isinstance(a, E.IntImm) and a.value == 0:
        return b
    if isinstance(b, E.IntImm) and b.value == 0:
        return a
    return E.Add(a, b, "int32")


def permute(seq, layout: tuple | None) -> tuple:
    """``seq`` (per axis) in storage order: storage dim k holds axis ``layout[k]``."""
    return tuple(seq) if layout is None else tuple(seq[a] for a in layout)


def aligned_strides(shape: tuple, align: dict) -> tuple:
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


def infer_regions(state: State) -> dict[str, list[int]]:
    """Root extents of every attached stage, by bound inference (for the primitives)."""
    lw = BoundInference(state, [])
    lw.infer()
    return {
        s.name: list(lw.info[s.name].region_ext) for s in lw.stages if isinstance(s.attach, Nested)
    }
