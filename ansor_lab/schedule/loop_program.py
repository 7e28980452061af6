"""``tir.Schedule`` on a hand-written loop program (TVMScript that is not plain computes).

A parsed module whose blocks share loops (the MLC article fuses two matmuls' ``m`` loops
by hand) has no compute definitions to schedule, so ``tir.Schedule(mod)`` gives this
schedule instead: TVM's primitives applied to the loop IR and its blocks directly. The
loop primitives (get_block, get_loops, split, fuse, reorder, parallel, vectorize,
unroll, bind, annotate) are here, with TVM's legality rules: a parallel, vectorized or
bound loop may only feed the spatial iteration variables of the blocks under it, and no
block under it may read what another block under it writes (a race). The block
primitives are in loop_program_location (compute_at, reverse_compute_at,
compute_inline, reverse_compute_inline) and loop_program_storage (cache_read,
cache_write, decompose_reduction). Every step is recorded as an instruction of the
trace, which prints as Python and replays onto a fresh schedule of the same module.
"""

from __future__ import annotations

from typing import Any

from ..dsl import expr as E
from ..errors import ScheduleError
from ..ir import nodes as N
from ..ir.gpu import ALL_TAGS
from ..ir.simplify import linear_form, substitute_stmt
from ..ir.visitor import walk_stmts
from . import loop_program_ir as I
from .loop_program_location import LocationPrimitives
from .loop_program_regions import accesses, region
from .loop_program_storage import StoragePrimitives
from .tir_out_of_scope import OutOfScopeSteps
from .trace import BlockRV, Instruction, LoopRV, Trace

PRIMITIVES = (
    "get_block", "get_loops", "get_child_blocks", "get_producers", "get_consumers", "get",
    "split", "fuse", "reorder", "parallel", "vectorize", "unroll", "bind", "annotate",
    "unannotate", "compute_at", "reverse_compute_at", "compute_inline",
    "reverse_compute_inline", "cache_read", "cache_write", "decompose_reduction",
)  # fmt: skip
#: the loop primitives (the primitives before the block primitives were added)
LOOP_PRIMITIVES = PRIMITIVES[:15]


def _uses(e: E.PrimExpr, var: E.Var) -> bool:
    return any(x is var for x in E.post_order(e))


class LoopProgramSchedule(LocationPrimitives, StoragePrimitives, OutOfScopeSteps):
    """TVM's schedule primitives on a parsed loop program (see the module docstring)."""

    def __init__(self, func: N.PrimFunc, kinds: dict | None = None) -> None:
        self.func = func
        self._orig = func
        self._trace = Trace()
        self._counter = 0
        self._table: dict = {}

    # -- handles and the trace ----------------------------------------------------
    def _rv(self, cls: type, value: Any) -> Any:
        rv = cls(self._counter)
        self._counter += 1
        self._table[rv] = value
        return rv

    def _loop(self, rv: Any, prim: str) -> N.For:
        var = self._table.get(rv) if isinstance(rv, LoopRV) else None
        found = I.find_loop(self.func.body, var) if var is not None else None
        if found is None:
            raise ScheduleError(
                f"{prim}: {getattr(rv, 'name', rv)} is not a loop of this program (a "
                "handle from before a split, fuse or move of that loop is stale)"
            )
        return found

    def _block(self, rv: Any, prim: str) -> N.Block:
        if isinstance(rv, str):
            name = rv
        else:
            name = self._table.get(rv) if isinstance(rv, BlockRV) else None
        found = I.find_block(self.func.body, name) if name is not None else None
        if found is None:
            raise ScheduleError(
                f"{prim}: {getattr(rv, 'name', rv)} is not a block of this program "
                f"(the blocks are {[b.name for b in I.blocks_of(self.func.body)]})"
            )
        return found

    def _record(self, kind: str, args: dict, outputs: list | tuple = ()) -> None:
        self._trace.append(Instruction(kind, tuple(args.items()), tuple(outputs)))

    def _commit(self, body: N.Stmt, prim: str = "") -> None:
        body = I.simplify_program(body)
        # a block moved or copied under a parallel loop must not race there either (a
        # loop the script itself wrote that our rules cannot show legal is left alone)
        for s in walk_stmts(body):
            if isinstance(s, N.For) and s.kind in ("parallel", "vectorized", "thread_binding"):
                try:
                    self._check_parallel(s, prim or s.kind)
                except ScheduleError:
                    old = I.find_loop(self.func.body, s.loop_var)
                    if old is None or old.kind != s.kind or self._legal(old):
                        raise
        self.func = self.func.with_body(body)

    def _legal(self, loop: N.For) -> bool:
        try:
            self._check_parallel(loop, loop.kind)
        except ScheduleError:
            return False
        return True

    def _only_blocks(self, prim: str) -> None:
        """Block primitives see what blocks read and write: a store outside every block
        would be invisible to their dependence checks."""
        inside = {id(s) for b in I.blocks_of(self.func.body) for s in I.stores(b)}
        stray = [s for s in I.stores(self.func.body) if id(s) not in inside]
        if stray:
            raise ScheduleError(
                f"{prim}: the program stores to {stray[0].buffer.name!r} outside any block; "
                "block primitives need every store inside a `with T.block(...)` (with "
                "T.axis iteration variables) to see what depends on what"
            )

    def _set(self, old: N.Stmt, new: N.Stmt) -> None:
        self._commit(I.Replace(old, new).visit_stmt(self.func.body))

    # -- reading ------------------------------------------------------------------
    @property
    def mod(self) -> N.IRModule:
        """The current program as an IRModule."""
        return N.IRModule({self.func.name: self.func})

    @property
    def trace(self) -> Trace:
        """The steps applied so far (prints as Python, replays with apply_to_schedule)."""
        return self._trace

    def copy(self) -> LoopProgramSchedule:
        """An independent schedule in the same state, with the same handles."""
        out = LoopProgramSchedule(self._orig)
        out.func, out._trace = self.func, self._trace.copy()
        out._counter, out._table = self._counter, dict(self._table)
        return out

    def replay(self, trace: Trace | dict | str) -> LoopProgramSchedule:
        """Apply a trace (object or JSON) to this schedule; returns self."""
        if isinstance(trace, (dict, str)):
            trace = Trace.from_json(trace)
        trace.apply_to_schedule(self)
        return self

    def show(self) -> None:
        """Print the current program."""
        self.mod.show()

    def work_on(self, func_name: str) -> None:
        """Functions other than the parsed one are not held here."""
        if func_name != self.func.name:
            raise ScheduleError(f"this schedule holds function {self.func.name!r} only")

    def get(self, rv: Any) -> N.Stmt:
        """The loop (``For``) or block (``Block``) a handle stands for now."""
        if isinstance(rv, LoopRV):
            return self._loop(rv, "get")
        if isinstance(rv, BlockRV):
            return self._block(rv, "get")
        raise ScheduleError(f"get: not a schedule handle: {rv!r}")

    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block called ``name``."""
        self._block(name, "get_block")
        rv = self._rv(BlockRV, name)
        self._record("GetBlock", {"name": name, "func_name": func_name or self.func.name}, [rv])
        return rv

    def get_loops(self, block: Any) -> list[LoopRV]:
        """The loops around ``block``, outermost first (a block name works too)."""
        if isinstance(block, str):
            block = self.get_block(block)
        node = self._block(block, "get_loops")
        rvs = [self._rv(LoopRV, lp.loop_var) for lp in I.loops_above(self.func.body, node)]
        self._record("GetLoops", {"block": block}, rvs)
        return rvs

    def _blocks_out(self, kind: str, arg: str, value: Any, blocks: list) -> list[BlockRV]:
        rvs = [self._rv(BlockRV, b.name) for b in blocks]
        self._record(kind, {arg: value}, rvs)
        return rvs

    def get_child_blocks(self, block_or_loop: Any) -> list[BlockRV]:
        """The blocks under a loop (or inside a block), in program order."""
        if isinstance(block_or_loop, LoopRV):
            inner = I.blocks_of(self._loop(block_or_loop, "get_child_blocks").body)
        else:
            node = self._block(block_or_loop, "get_child_blocks")
            inner = [b for b in I.blocks_of(node.body) if b is not node]
        return self._blocks_out("GetChildBlocks", "block_or_loop", block_or_loop, inner)

    def get_producers(self, block: Any) -> list[BlockRV]:
        """The other blocks writing a buffer ``block`` reads, in program order."""
        node = self._block(block, "get_producers")
        ins = {x.buffer for x in I.loads(node)}
        found = [b for b in I.blocks_of(self.func.body)
                 if b is not node and set(I.written(b)) & ins]  # fmt: skip
        return self._blocks_out("GetProducers", "block", block, found)

    def get_consumers(self, block: Any) -> list[BlockRV]:
        """The other blocks reading a buffer ``block`` writes, in program order."""
        node = self._block(block, "get_consumers")
        outs = set(I.written(node))
        found = [b for b in I.blocks_of(self.func.body)
                 if b is not node and I.reads_any(b, outs)]  # fmt: skip
        return self._blocks_out("GetConsumers", "block", block, found)

    # -- legality -----------------------------------------------------------------
    def _check_parallel(self, loop: N.For, prim: str) -> None:
        blocks = I.blocks_of(loop.body)
        for blk in blocks:
            for iv in I.unpack(blk, prim).iters:
                if iv.kind == "R" and _uses(iv.binding, loop.loop_var):
                    raise ScheduleError(
                        f"{prim}: loop {loop.loop_var.name} feeds reduction variable "
                        f"{iv.var.name} of block {blk.name!r}; only loops over spatial "
                        "variables can run in parallel (decompose the reduction first, or "
                        "split it with rfactor in a te program)"
                    )
        local = {s.buffer for s in walk_stmts(loop.body) if isinstance(s, N.Allocate)}
        # a block reading only its own output (a reduction) is fine; another block's is not
        for blk in blocks:
            for buf in I.written(blk):
                if buf in local:
                    continue
                readers = [b for b in blocks if b is not blk and I.reads_any(b, {buf})]
                if readers and not self._disjoint(loop, [blk, *readers], buf):
                    raise ScheduleError(
                        f"{prim}: under loop {loop.loop_var.name}, block {readers[0].name!r} "
                        f"reads {buf.name!r}, which block {blk.name!r} writes under the same "
                        "loop; its iterations may depend on each other. Apply it to a loop "
                        "over one block"
                    )

    def _disjoint(self, loop: N.For, blocks: list, buf: N.Buffer) -> bool:
        """Whether every iteration of ``loop`` touches its own slab of ``buf`` in all of
        ``blocks`` (so blocks under a parallel loop can share the buffer, as the init,
        update and write-back of a decomposed, cached reduction do)."""
        x = loop.loop_var
        boxes = []
        for blk in blocks:
            wrapped: N.Stmt = blk
            for lp in reversed(I.loops_above(loop.body, blk)):
                wrapped = N.For(lp.loop_var, lp.min, lp.extent, lp.kind, wrapped)
            accs = accesses(wrapped, buf, False) + accesses(wrapped, buf, True)
            try:
                boxes.append(region(accs, {}, "parallel"))
            except ScheduleError:
                return False
        for d in range(len(buf.shape)):
            slabs = []
            for box in boxes:
                form = linear_form(box[d][0])
                if form is None:
                    break
                terms, const = form
                a = terms.pop(x, 0)
                slabs.append((a, tuple(sorted((str(t), c) for t, c in terms.items())), const,
                              box[d][1]))  # fmt: skip
            else:
                a0, rest0 = slabs[0][0], slabs[0][1]
                if a0 > 0 and all(
                    a == a0 and rest == rest0 and 0 <= c and c + n <= a0 for a, rest, c, n in slabs
                ):
                    return True
        return False

    # -- loop transformations -----------------------------------------------------
    def split(self, loop: Any, factors: list, preserve_unit_iters: bool = True) -> list[LoopRV]:
        """Split a loop into nested loops of the given extents (one may be None)."""
        node = self._loop(loop, "split")
        if not isinstance(node.extent, E.IntImm):
            raise ScheduleError("split: the loop's extent must be a constant")
        n = node.extent.value
        values = [int(f) if f is not None else None for f in factors]
        known = 1
        for f in values:
            if f is not None:
                if f < 1:
                    raise ScheduleError(f"split: factors must be positive, got {factors}")
                known *= f
        if values.count(None) > 1:
            raise ScheduleError("split: at most one factor may be None")
        if None in values:
            values[values.index(None)] = -(-n // known)
        total = 1
        for f in values:
            total *= f
        if total < n:
            raise ScheduleError(f"split: factors {values} cover {total} of {n} iterations")
        new_vars = [E.Var(f"{node.loop_var.name}_{k}") for k in range(len(values))]
        fused: Any = E.const(0)
        for var, f in zip(new_vars, values):
            fused = fused * f + var
        body = substitute_stmt(node.body, {node.loop_var: fused})
        if total != n:
            body = N.IfThenElse(fused < n, body)
        for var, f in reversed(list(zip(new_vars, values))):
            body = N.For(var, E.const(0), E.const(f), "serial", body)
        self._set(node, body)
        rvs = [self._rv(LoopRV, v) for v in new_vars]
        self._record("Split", {"loop": loop, "factors": values}, rvs)
        return rvs

    def _chain(self, loops: list[N.For], prim: str) -> list[N.For]:
        outer = min(loops, key=lambda lp: len(I.path_to(self.func.body, lp) or []))
        chain = [outer]
        while len(chain) < 64 and not all(lp in chain for lp in loops):
            body = chain[-1].body
            if not isinstance(body, N.For):
                raise ScheduleError(
                    f"{prim}: the loops {[lp.loop_var.name for lp in loops]} are not perfectly "
                    "nested (another statement sits between them)"
                )
            chain.append(body)
        return chain

    def reorder(self, *ordered: Any) -> None:
        """Reorder perfectly nested loops into the given order."""
        loops = [self._loop(rv, "reorder") for rv in ordered]
        chain = self._chain(loops, "reorder")
        self._check_no_cross_block_reads(chain[0], "reorder")
        picks = iter(loops)
        order = [next(picks) if lp in loops else lp for lp in chain]
        body = chain[-1].body
        for lp in reversed(order):
            body = N.For(lp.loop_var, lp.min, lp.extent, lp.kind, body, lp.thread_tag,
                         lp.annotations)  # fmt: skip
        self._set(chain[0], body)
        self._record("Reorder", {"ordered_loops": list(ordered)})

    def _check_no_cross_block_reads(self, loop: N.For, prim: str) -> None:
        blocks = I.blocks_of(loop.body)
        for blk in blocks:
            for other in blocks:
                if other is not blk and I.reads_any(other, set(I.written(blk))):
                    raise ScheduleError(
                        f"{prim}: block {other.name!r} reads what block {blk.name!r} writes "
                        "under these loops; changing their order may change the result"
                    )

    def fuse(self, *loops_rv: Any, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse perfectly nested consecutive loops into one."""
        loops = [self._loop(rv, "fuse") for rv in loops_rv]
        chain = self._chain(loops, "fuse")
        if chain != loops:
            raise ScheduleError("fuse: give consecutive loops, outermost first")
        extents = [lp.extent.value for lp in loops if isinstance(lp.extent, E.IntImm)]
        if len(extents) != len(loops):
            raise ScheduleError("fuse: loop extents must be constants")
        fused_var = E.Var("_".join(lp.loop_var.name for lp in loops) + "_fused")
        mapping, stride = {}, 1
        for lp, ext in reversed(list(zip(loops, extents))):
            mapping[lp.loop_var] = (fused_var // stride) % ext if stride > 1 else fused_var % ext
            stride *= ext
        body = substitute_stmt(loops[-1].body, mapping)
        total = stride
        new = N.For(fused_var, E.const(0), E.const(total), "serial", body)
        self._set(loops[0], new)
        rv = self._rv(LoopRV, fused_var)
        self._record("Fuse", {"loops": list(loops_rv)}, [rv])
        return rv

    def _kind(self, loop_rv: Any, kind: str, prim: str, tag: str = "") -> None:
        node = self._loop(loop_rv, prim)
        if kind != "unrolled":
            self._check_parallel(node, prim)
        if kind == "parallel":
            around = I.loops_above(self.func.body, node) + [
                x for x in walk_stmts(node.body) if isinstance(x, N.For)
            ]
            nested = [x for x in around if x.kind == "parallel"]
            if nested:
                raise ScheduleError(
                    f"parallel: loop {node.loop_var.name} would nest with parallel loop "
                    f"{nested[0].loop_var.name}; parallelize only one (fuse the loops first "
                    "to parallelize both)"
                )
        if kind == "vectorized" and not isinstance(node.extent, E.IntImm):
            raise ScheduleError("vectorize: the loop's extent must be a constant")
        new = N.For(node.loop_var, node.min, node.extent, kind, node.body, tag, node.annotations)
        self._set(node, new)
        kinds = {"parallel": "Parallel", "vectorize": "Vectorize", "unroll": "Unroll"}
        if tag:
            self._record("Bind", {"loop": loop_rv, "thread_axis": tag})
        else:
            self._record(kinds[prim], {"loop": loop_rv})

    def parallel(self, loop: Any) -> None:
        """Run the loop's iterations on several cores."""
        self._kind(loop, "parallel", "parallel")

    def vectorize(self, loop: Any) -> None:
        """Run the loop's iterations as SIMD lanes."""
        self._kind(loop, "vectorized", "vectorize")

    def unroll(self, loop: Any) -> None:
        """Unroll the loop."""
        self._kind(loop, "unrolled", "unroll")

    def bind(self, loop: Any, thread_axis: Any) -> None:
        """Bind the loop to a GPU index ("blockIdx.x", "threadIdx.x"...)."""
        tag = getattr(thread_axis, "thread_tag", thread_axis)
        if tag not in ALL_TAGS:
            raise ScheduleError(f"bind: unknown thread axis {tag!r}; use one of {ALL_TAGS}")
        self._kind(loop, "thread_binding", "bind", tag)

    def annotate(self, block_or_loop: Any, ann_key: str, ann_val: Any) -> None:
        """Attach an annotation to a loop (e.g. pragma_auto_unroll_max_step)."""
        node = self._loop(block_or_loop, "annotate")
        anns = dict(node.annotations)
        anns[ann_key] = ann_val
        new = N.For(node.loop_var, node.min, node.extent, node.kind, node.body,
                    node.thread_tag, tuple(sorted(anns.items())))  # fmt: skip
        self._set(node, new)
        self._record(
            "Annotate", {"block_or_loop": block_or_loop, "ann_key": ann_key, "ann_val": ann_val}
        )

    def unannotate(self, block_or_loop: Any, ann_key: str) -> None:
        """Remove an annotation this schedule put on a loop.

        tir.Schedule records no Unannotate instruction, so the Annotate step is taken out
        of the trace instead (the trace still replays to the same program); an annotation
        written in the script itself stays."""
        node = self._loop(block_or_loop, "unannotate")
        steps = [
            k
            for k, inst in enumerate(self._trace.insts)
            if inst.kind == "Annotate"
            and inst.arg("ann_key") == ann_key
            and self._table.get(inst.arg("block_or_loop")) is node.loop_var
        ]
        if not steps:
            raise ScheduleError(
                f"unannotate: loop {node.loop_var.name} has no annotation {ann_key!r} set by "
                "this schedule (one written in the script stays)"
            )
        anns = {k: v for k, v in node.annotations if k != ann_key}
        new = N.For(node.loop_var, node.min, node.extent, node.kind, node.body,
                    node.thread_tag, tuple(sorted(anns.items())))  # fmt: skip
        self._set(node, new)
        del self._trace.insts[steps[-1]]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise ScheduleError(
            f"{name} is not available on a hand-written loop program: tir.Schedule gives "
            f"it {', '.join(PRIMITIVES)}. The others (rfactor, storage_align, sampling...) "
            "need a program whose blocks each have their own loop nest (as "
            "te.create_prim_func prints them)"
        )
