"""cache_read / cache_write / decompose_reduction on a loop program (mixed into
``LoopProgramSchedule``), placed as TVM places them.

A cache is a new buffer ``<buffer>_<scope>`` and a copy block of the same name over the
whole buffer (the region the block writes, for cache_write). TVM's placement: a read
cache goes right before the first reader, at the innermost loop holding it and the
buffer's writer (at the top of the function for an argument); a write cache right
after the writer, before the first reader, at the innermost loop holding both (at the
end of the function when nothing reads it). compute_at / reverse_compute_at then move
the copy next to its use.
"""

from __future__ import annotations

from typing import Any

from ..dsl import expr as E
from ..errors import ScheduleError
from ..ir import nodes as N
from ..ir.visitor import IRMutator
from . import loop_program_ir as I
from .loop_program_location import replace_loads
from .loop_program_regions import accesses, region
from .trace import BlockRV


class _Rename(IRMutator):
    """Every load and store of one buffer goes to another."""

    def __init__(self, old: N.Buffer, new: N.Buffer) -> None:
        self.old, self.new = old, new

    def expr_BufferLoad(self, e: N.BufferLoad) -> E.PrimExpr:
        idx = tuple(self.visit_expr(i) for i in e.indices)
        return N.BufferLoad(self.new if e.buffer is self.old else e.buffer, idx, e.dtype)

    def stmt_BufferStore(self, s: N.BufferStore) -> N.Stmt:
        buf = self.new if s.buffer is self.old else s.buffer
        idx = tuple(self.visit_expr(i) for i in s.indices)
        return N.BufferStore(buf, self.visit_expr(s.value), idx)


def _lca(body: N.Stmt, a: N.Stmt, b: N.Stmt) -> N.Stmt | None:
    """The innermost loop (or guard) holding both ``a`` and ``b`` (None: the top level)."""
    pa, pb = I.path_to(body, a) or [], I.path_to(body, b) or []
    common = None
    for k, (x, y) in enumerate(zip(pa, pb)):
        if x is not y:
            break
        if isinstance(x, N.For) or (
            isinstance(x, N.IfThenElse) and pa[k + 1] is x.then_case and pb[k + 1] is x.then_case
        ):
            common = x
    return common


class StoragePrimitives:
    """Caches and the reduction's init (see the module docstring)."""

    def _new_buffer(self, buf: N.Buffer, scope: str, prim: str) -> N.Buffer:
        if scope not in N.SCOPES:
            raise ScheduleError(f"{prim}: unknown storage scope {scope!r}; use one of {N.SCOPES}")
        allocs, _ = I.peel_allocs(self.func.body)
        taken = {b.name for b in list(self.func.params) + allocs}
        name = I.fresh_name(f"{buf.name}_{scope}", taken)
        return N.Buffer(name, buf.shape, buf.dtype, scope)

    def _copy_block(self, name: str, dst: N.Buffer, src: N.Buffer, box: list) -> N.Stmt:
        taken = I.var_names(self.func.body)
        names = {b.name for b in I.blocks_of(self.func.body)}
        loops, iters = [], []
        for k, (lo, ext) in enumerate(box):
            lv = E.Var(I.fresh_name(f"ax{k}", taken))
            v = E.Var(f"v{k}")
            loops.append((lv, ext))
            binding = lv + lo if lo else lv
            iters.append(I.IterVar(v, "S", lo, ext, binding))
        idx = tuple(iv.var for iv in iters)
        store = N.BufferStore(dst, N.BufferLoad(src, idx, src.dtype), idx)
        out: N.Stmt = I.pack(
            I.BlockParts(I.fresh_name(name, names), tuple(iters), None, None, store)
        )
        for lv, ext in reversed(loops):
            out = N.For(lv, E.const(0), E.const(ext), "serial", out)
        return out

    def _add_alloc(self, body: N.Stmt, buf: N.Buffer) -> N.Stmt:
        allocs, inner = I.peel_allocs(body)
        return I.wrap_allocs(allocs + [buf], inner)

    def cache_read(self, block: Any, read_buffer_index: int | str, storage_scope: str,
                   consumer_blocks: Any = None) -> BlockRV:  # fmt: skip
        """A copy of a buffer ``block`` reads, in ``storage_scope``, that its readers read
        instead (all readers, or ``block`` and ``consumer_blocks``); returns the copy block."""
        prim = "cache_read"
        blk = self._block(block, prim)
        self._only_blocks(prim)
        bufs = I.read(blk)
        names = [b.name for b in bufs]
        if isinstance(read_buffer_index, str) and read_buffer_index in names:
            k = names.index(read_buffer_index)
        elif isinstance(read_buffer_index, int) and 0 <= read_buffer_index < len(bufs):
            k = read_buffer_index
        else:
            raise ScheduleError(
                f"{prim}: block {blk.name!r} reads {len(bufs)} buffers ({', '.join(names)}); "
                f"read_buffer_index {read_buffer_index!r} is not one of them"
            )
        buf = bufs[k]
        new = self._new_buffer(buf, storage_scope, prim)
        body = self.func.body
        # a reduction reading its own output is no reader of the cache
        readers = [o for o in I.blocks_of(body)
                   if I.reads_any(o, {buf}) and buf not in I.written(o)]  # fmt: skip
        if consumer_blocks:
            chosen = {blk.name} | {self._block(c, prim).name for c in consumer_blocks}
            readers = [o for o in readers if o.name in chosen]
        writers = [o for o in I.blocks_of(body) if buf in I.written(o)]
        copy = self._copy_block(new.name, new, buf, [(0, n) for n in buf.shape])
        if writers:
            order = I.blocks_of(body)
            after = [o for o in readers if order.index(o) > order.index(writers[-1])]
            if not after:
                raise ScheduleError(f"{prim}: no reader of {buf.name!r} follows its writer")
            loop = _lca(body, writers[-1], after[0])
            at = I.item_index(I.container_items(body, loop), after[0])
        else:
            loop, at = None, 0
        body = I.insert_in_loop(body, loop, at, copy)
        for o in readers:
            now = I.find_block(body, o.name)
            body = I.Replace(now, replace_loads(now, buf, lambda idx: N.BufferLoad(
                new, idx, buf.dtype))).visit_stmt(body)  # fmt: skip
        self._commit(self._add_alloc(body, new), prim)
        rv = self._rv(BlockRV, I.blocks_of(copy)[0].name)
        args = {"block": block, "read_buffer_index": k, "storage_scope": storage_scope}
        if consumer_blocks:
            args["consumer_blocks"] = list(consumer_blocks)
        self._record("CacheRead", args, [rv])
        return rv

    def cache_write(self, block: Any, write_buffer_index: int = 0,
                    storage_scope: str = "local") -> BlockRV:  # fmt: skip
        """``block`` writes a ``storage_scope`` buffer; the returned block copies it into
        the original buffer, before its first reader."""
        prim = "cache_write"
        blk = self._block(block, prim)
        self._only_blocks(prim)
        bufs = I.written(blk)
        if not isinstance(write_buffer_index, int) or not 0 <= write_buffer_index < len(bufs):
            raise ScheduleError(
                f"{prim}: block {blk.name!r} writes {len(bufs)} buffer(s) "
                f"({', '.join(b.name for b in bufs)}); write_buffer_index "
                f"{write_buffer_index!r} is not one of them"
            )
        buf = bufs[write_buffer_index]
        body = self.func.body
        others = [o for o in I.blocks_of(body) if o is not blk]
        if any(buf in I.written(o) for o in others):
            raise ScheduleError(f"{prim}: {buf.name!r} has other writers than {blk.name!r}")
        new = self._new_buffer(buf, storage_scope, prim)
        # the region the block writes over all its loops (the whole buffer, usually)
        wrapped: N.Stmt = blk
        for lp in reversed(I.loops_above(body, blk)):
            wrapped = N.For(lp.loop_var, lp.min, lp.extent, lp.kind, wrapped)
        box = region(accesses(wrapped, buf, write=True), {}, prim)
        # a guarded split relaxes past the buffer's end: the copy stays inside it
        box = [
            (lo.value, min(lo.value + ext, n) - max(lo.value, 0)) if isinstance(lo, E.IntImm)
            else (0, n)
            for (lo, ext), n in zip(box, buf.shape)
        ]  # fmt: skip
        box = [(max(lo, 0), ext) for lo, ext in box]
        copy = self._copy_block(new.name, buf, new, box)
        body = I.Replace(blk, _Rename(buf, new).visit_stmt(blk)).visit_stmt(body)
        readers = [o for o in others if I.reads_any(o, {buf})]
        if readers:
            now = I.find_block(body, blk.name)
            order = I.blocks_of(body)
            after = [o for o in order if o.name in {r.name for r in readers}]
            loop = _lca(body, now, after[0])
            at = I.item_index(I.container_items(body, loop), after[0])
        else:
            loop, at = None, len(I.container_items(body, None))
        body = I.insert_in_loop(body, loop, at, copy)
        self._commit(self._add_alloc(body, new), prim)
        rv = self._rv(BlockRV, I.blocks_of(copy)[0].name)
        args = {"block": block, "write_buffer_index": write_buffer_index,
                "storage_scope": storage_scope}  # fmt: skip
        self._record("CacheWrite", args, [rv])
        return rv

    def decompose_reduction(self, block: Any, loop: Any) -> BlockRV:
        """Move a reduction's init into its own block ``<name>_init`` before ``loop``; the
        block becomes ``<name>_update`` (TVM's decompose_reduction)."""
        prim = "decompose_reduction"
        blk, lp = self._block(block, prim), self._loop(loop, prim)
        p = I.unpack(blk, prim)
        if p.init is None:
            raise ScheduleError(f"{prim}: block {blk.name!r} has no T.init() to decompose")
        body = self.func.body
        path = I.path_to(body, blk) or []
        chain = [s for s in path if isinstance(s, N.For)]
        if lp not in chain:
            raise ScheduleError(
                f"{prim}: loop {lp.loop_var.name} does not enclose block {blk.name!r}"
            )
        reduce_b = [iv.binding for iv in p.iters if iv.kind == "R"]
        spatial_b = [iv.binding for iv in p.iters if iv.kind == "S"]

        def feeds(x: N.For, bindings: list) -> bool:
            return any(any(v is x.loop_var for v in E.post_order(b)) for b in bindings)

        k = chain.index(lp)
        for x in chain[: k + 1]:
            if feeds(x, reduce_b):
                raise ScheduleError(
                    f"{prim}: loop {x.loop_var.name} runs the reduction of {blk.name!r}; give "
                    "a loop outside every reduction loop"
                )
        taken = I.var_names(body)
        mapping, kept, dropped = {}, [], set()
        for x in chain[k:]:
            if feeds(x, reduce_b) and feeds(x, spatial_b):
                raise ScheduleError(
                    f"{prim}: loop {x.loop_var.name} feeds both spatial and reduction "
                    f"variables of {blk.name!r}"
                )
            if feeds(x, spatial_b):
                nv = E.Var(I.fresh_name(f"{x.loop_var.name}_init", taken))
                mapping[x.loop_var] = nv
                kept.append(N.For(nv, x.min, x.extent, x.kind, N.NOP, x.thread_tag))
            else:
                dropped.add(x.loop_var)

        def usable(cond: E.PrimExpr) -> E.PrimExpr | None:
            free = {v for v in E.post_order(cond) if isinstance(v, E.Var)}
            if not free & dropped:
                return E.substitute(cond, mapping)
            if not free & set(mapping):
                return None  # a guard of the reduction loops only: the init needs none
            raise ScheduleError(f"{prim}: the guard {cond} mixes spatial and reduction loops")

        names = {b.name for b in I.blocks_of(body)}
        iters = tuple(
            I.IterVar(iv.var, "S", iv.min, iv.extent, E.substitute(iv.binding, mapping))
            for iv in p.iters
            if iv.kind == "S"
        )
        where = usable(p.where) if p.where is not None else None
        init_name = I.fresh_name(f"{p.name}_init", names)
        out: N.Stmt = I.pack(I.BlockParts(init_name, iters, where, None, p.init, p.annotations))
        guards = [s for s in path[path.index(lp) :] if isinstance(s, N.IfThenElse)]
        for g in reversed(guards):
            cond = usable(g.condition)
            if cond is not None:
                out = N.IfThenElse(cond, out)
        for x in reversed(kept):
            out = N.For(x.loop_var, x.min, x.extent, x.kind, out, x.thread_tag)
        update_name = I.fresh_name(f"{p.name}_update", names)
        body = I.Replace(blk, I.pack(p.replace(name=update_name, init=None))).visit_stmt(body)
        now = I.find_loop(body, lp.loop_var)
        body = I.Replace(now, N.seq(out, now)).visit_stmt(body)
        self._commit(body, prim)
        for rv, value in list(self._table.items()):
            if isinstance(rv, BlockRV) and value == p.name:
                self._table[rv] = update_name
        rv = self._rv(BlockRV, init_name)
        self._record("DecomposeReduction", {"block": block, "loop": loop}, [rv])
        return rv
