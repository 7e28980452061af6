"""``tir.Schedule`` on a hand-written loop program (TVMScript that is not plain computes).

A parsed module whose blocks share loops (the MLC article fuses two matmuls' ``m`` loops
by hand) has no compute definitions to schedule, so ``tir.Schedule(mod)`` gives this
schedule instead: the loop primitives (get_block, get_loops, split, fuse, reorder,
parallel, vectorize, unroll, bind, annotate) applied to the loop IR directly, with
TVM's legality rules: a parallel, vectorized or bound loop may only feed the spatial
iteration variables of the blocks under it, and no block under it may read what another
block under it writes (a race). Other primitives raise a ScheduleError that says why.
"""

from __future__ import annotations

from typing import Any

from ..dsl import expr as E
from ..errors import ScheduleError
from ..ir import nodes as N
from ..ir.gpu import ALL_TAGS
from ..ir.simplify import simplify_stmt, substitute_stmt
from ..ir.visitor import IRMutator, post_order_visit, walk_stmts
from .trace import BlockRV, LoopRV

LOOP_PRIMITIVES = (
    "get_block", "get_loops", "split", "fuse", "reorder", "parallel", "vectorize",
    "unroll", "bind", "annotate", "unannotate",
)  # fmt: skip


def _path_to(body: N.Stmt, target: N.Stmt) -> list[N.For] | None:
    """The loops enclosing ``target`` (outermost first), or None when it is not there."""
    if body is target:
        return []
    for name in ("body", "then_case", "else_case"):
        child = getattr(body, name, None)
        if isinstance(child, N.Stmt):
            found = _path_to(child, target)
            if found is not None:
                return ([body] if isinstance(body, N.For) else []) + found
    if isinstance(body, N.SeqStmt):
        for item in body.seq:
            found = _path_to(item, target)
            if found is not None:
                return found
    return None


class _Replace(IRMutator):
    def __init__(self, old: N.Stmt, new: N.Stmt) -> None:
        self.old, self.new = old, new

    def visit_stmt(self, s: N.Stmt) -> N.Stmt:
        if s is self.old:
            return self.new
        return super().visit_stmt(s)


def _uses(e: E.PrimExpr, var: E.Var) -> bool:
    return any(x is var for x in E.post_order(e))


class LoopProgramSchedule:
    """Loop primitives on a parsed loop program (see the module docstring)."""

    def __init__(self, func: N.PrimFunc, kinds: dict) -> None:
        self.func = func
        self.kinds = dict(kinds)  # block iteration Var -> "S" / "R"
        self.steps: list[str] = []
        self._counter = 0
        self._table: dict = {}

    # -- handles ------------------------------------------------------------------
    def _rv(self, cls: type, value: Any) -> Any:
        rv = cls(self._counter)
        self._counter += 1
        self._table[rv] = value
        return rv

    def _loop(self, rv: Any, prim: str) -> N.For:
        var = self._table.get(rv) if isinstance(rv, LoopRV) else None
        for s in walk_stmts(self.func.body):
            if isinstance(s, N.For) and s.loop_var is var:
                return s
        raise ScheduleError(f"{prim}: {getattr(rv, 'name', rv)} is not a loop of this program")

    def _block(self, rv: Any, prim: str) -> N.Block:
        name = self._table.get(rv) if isinstance(rv, BlockRV) else None
        for s in walk_stmts(self.func.body):
            if isinstance(s, N.Block) and s.name == name:
                return s
        raise ScheduleError(f"{prim}: {getattr(rv, 'name', rv)} is not a block of this program")

    def _record(self, text: str) -> None:
        self.steps.append(text)

    def _set(self, old: N.Stmt, new: N.Stmt) -> None:
        self.func = self.func.with_body(_Replace(old, new).visit_stmt(self.func.body))

    # -- reading ------------------------------------------------------------------
    @property
    def mod(self) -> N.IRModule:
        """The current program as an IRModule."""
        return N.IRModule({self.func.name: self.func})

    @property
    def trace(self) -> str:
        """The steps applied so far, as Python."""
        return "def apply_trace(sch):\n" + "".join(f"  {s}\n" for s in self.steps or ["pass"])

    def show(self) -> None:
        """Print the current program."""
        self.mod.show()

    def work_on(self, func_name: str) -> None:
        """Functions other than the parsed one are not held here."""
        if func_name != self.func.name:
            raise ScheduleError(f"this schedule holds function {self.func.name!r} only")

    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block called ``name``."""
        if not any(isinstance(s, N.Block) and s.name == name for s in walk_stmts(self.func.body)):
            names = sorted({s.name for s in walk_stmts(self.func.body) if isinstance(s, N.Block)})
            raise ScheduleError(f"get_block: no block {name!r}; the blocks are {names}")
        rv = self._rv(BlockRV, name)
        self._record(f'{rv.name} = sch.get_block(name="{name}", func_name="{self.func.name}")')
        return rv

    def get_loops(self, block: Any) -> list[LoopRV]:
        """The loops around ``block``, outermost first (a block name works too)."""
        if isinstance(block, str):
            block = self.get_block(block)
        node = self._block(block, "get_loops")
        loops = _path_to(self.func.body, node) or []
        rvs = [self._rv(LoopRV, loop.loop_var) for loop in loops]
        names = ", ".join(r.name for r in rvs) or "_"
        self._record(f"{names} = sch.get_loops(block={block.name})")
        return rvs

    # -- legality -----------------------------------------------------------------
    def _check_parallel(self, loop: N.For, prim: str) -> None:
        blocks = [s for s in walk_stmts(loop.body) if isinstance(s, N.Block)]
        for blk in blocks:
            lets = [s for s in walk_stmts(blk.body) if isinstance(s, N.LetStmt)]
            iters = [s for s in lets if s.var in self.kinds]
            if not iters:
                raise ScheduleError(
                    f"{prim}: block {blk.name!r} under loop {loop.loop_var.name} declares no "
                    "iteration variables (T.axis.*), so its iterations cannot be shown "
                    "independent; declare them with T.axis.spatial/reduce"
                )
            for let in iters:
                if self.kinds[let.var] == "R" and _uses(let.value, loop.loop_var):
                    raise ScheduleError(
                        f"{prim}: loop {loop.loop_var.name} feeds reduction variable "
                        f"{let.var.name} of block {blk.name!r}; only loops over spatial "
                        "variables can run in parallel (split the reduction with rfactor "
                        "in a te program instead)"
                    )
        written, read = set(), set()

        def visit(node: object) -> None:
            if isinstance(node, N.BufferStore):
                written.add(node.buffer)
            elif isinstance(node, N.BufferLoad):
                read.add(node.buffer)

        for blk in blocks:
            post_order_visit(blk.body, visit)
        local = {s.buffer for s in walk_stmts(loop.body) if isinstance(s, N.Allocate)}
        shared = [b for b in written & read if b not in local and len(blocks) > 1]
        # a block reading only its own output (a reduction) is fine; another block's is not
        for buf in shared:
            writers = [b for b in blocks if _writes(b, buf)]
            readers = [b for b in blocks if _reads(b, buf) and b not in writers]
            if readers:
                raise ScheduleError(
                    f"{prim}: under loop {loop.loop_var.name}, block {readers[0].name!r} reads "
                    f"{buf.name!r}, which block {writers[0].name!r} writes under the same loop; "
                    "its iterations may depend on each other. Apply it to a loop over one block"
                )

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
        self._set(node, simplify_stmt(body))
        rvs = [self._rv(LoopRV, v) for v in new_vars]
        self._record(
            f"{', '.join(r.name for r in rvs)} = sch.split(loop={loop.name}, factors={values})"
        )
        return rvs

    def _chain(self, loops: list[N.For], prim: str) -> list[N.For]:
        outer = min(loops, key=lambda lp: len(_path_to(self.func.body, lp) or []))
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
        self._record(f"sch.reorder({', '.join(rv.name for rv in ordered)})")

    def _check_no_cross_block_reads(self, loop: N.For, prim: str) -> None:
        blocks = [s for s in walk_stmts(loop.body) if isinstance(s, N.Block)]
        for blk in blocks:
            for other in blocks:
                if other is not blk and any(_reads(other, b) for b in _written(blk)):
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
        new = N.For(fused_var, E.const(0), E.const(total), "serial", simplify_stmt(body))
        self._set(loops[0], new)
        rv = self._rv(LoopRV, fused_var)
        self._record(f"{rv.name} = sch.fuse({', '.join(r.name for r in loops_rv)})")
        return rv

    def _kind(self, loop_rv: Any, kind: str, prim: str, tag: str = "") -> None:
        node = self._loop(loop_rv, prim)
        if kind != "unrolled":
            self._check_parallel(node, prim)
        if kind == "vectorized" and not isinstance(node.extent, E.IntImm):
            raise ScheduleError("vectorize: the loop's extent must be a constant")
        new = N.For(node.loop_var, node.min, node.extent, kind, node.body, tag, node.annotations)
        self._set(node, new)
        extra = f', thread_axis="{tag}"' if tag else ""
        self._record(f"sch.{prim}(loop={loop_rv.name}{extra})")

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
        self._record(f'sch.annotate({block_or_loop.name}, "{ann_key}", {ann_val!r})')

    def unannotate(self, block_or_loop: Any, ann_key: str) -> None:
        """Remove an annotation from a loop."""
        node = self._loop(block_or_loop, "unannotate")
        anns = {k: v for k, v in node.annotations if k != ann_key}
        new = N.For(node.loop_var, node.min, node.extent, node.kind, node.body,
                    node.thread_tag, tuple(sorted(anns.items())))  # fmt: skip
        self._set(node, new)
        self._record(f'sch.unannotate({block_or_loop.name}, "{ann_key}")')

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise ScheduleError(
            f"{name} is not available on a hand-written loop program: tir.Schedule gives "
            f"it only the loop primitives ({', '.join(LOOP_PRIMITIVES)}). Primitives that "
            "move or cache blocks need a program whose blocks each have their own loop nest "
            "(as te.create_prim_func prints them)"
        )


def _written(blk: N.Block) -> set:
    return {s.buffer for s in walk_stmts(blk.body) if isinstance(s, N.BufferStore)}


def _writes(blk: N.Block, buf: N.Buffer) -> bool:
    return buf in _written(blk)


def _reads(blk: N.Block, buf: N.Buffer) -> bool:
    found = []
    post_order_visit(
        blk.body,
        lambda n: found.append(n) if isinstance(n, N.BufferLoad) and n.buffer is buf else None,
    )
    return bool(found)
