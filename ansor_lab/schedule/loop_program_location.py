"""compute_at / reverse_compute_at / compute_inline / reverse_compute_inline on a loop
program (mixed into ``LoopProgramSchedule``), with TVM's legality rules.

compute_at moves a producer block under a loop of its consumers: its loops are made
again over the region the consumers read per iteration of that loop (loop_program_regions),
each iteration variable keeps its domain and is bound to ``loop + region min`` (with a
``T.where`` when the region may leave the domain). reverse_compute_at moves a consumer
under a loop of its producers, over the region they write per iteration. Every consumer
(producer) must sit under the loop, and no other block may be moved past one it depends on.
"""

from __future__ import annotations

from typing import Any

from ..dsl import expr as E
from ..dsl.construct import logical_and
from ..errors import ScheduleError
from ..ir import nodes as N
from ..ir.simplify import simplify_expr
from ..ir.visitor import IRMutator
from . import loop_program_ir as I
from .loop_program_regions import accesses, region, region_equal


def _uses(e: E.PrimExpr, var: E.Var) -> bool:
    return any(x is var for x in E.post_order(e))


def _bounds(loops: list[N.For]) -> dict:
    out = {}
    for lp in loops:
        if isinstance(lp.min, E.IntImm) and isinstance(lp.extent, E.IntImm):
            out[lp.loop_var] = (lp.min.value, lp.min.value + lp.extent.value - 1)
    return out


def _key(accs: list[tuple], iters: dict, what: str) -> tuple:
    """The one tuple of iteration variables a block accesses a buffer at."""
    keys = {tuple(a) for a in accs}
    if len(keys) != 1:
        raise ScheduleError(f"{what} at several places; the block must access it at one")
    (key,) = keys
    if any(not (isinstance(i, E.Var) and i in iters) for i in key) or len(set(key)) != len(key):
        raise ScheduleError(
            f"{what} at [{', '.join(str(i) for i in key)}]; the indices must be distinct "
            "iteration variables of the block (v_i, v_j), as TVM requires"
        )
    return key


def _depends(a: N.Block, b: N.Block) -> str | None:
    """How ``a`` depends on ``b`` (a buffer one writes and the other touches), or None."""
    wa, wb = set(I.written(a)), set(I.written(b))
    for buf in wa & wb:
        return f"both write {buf.name!r}"
    for buf in wb:
        if I.reads_any(a, {buf}):
            return f"{a.name!r} reads {buf.name!r}, which {b.name!r} writes"
    for buf in wa:
        if I.reads_any(b, {buf}):
            return f"{b.name!r} reads {buf.name!r}, which {a.name!r} writes"
    return None


def check_order(old: N.Stmt, new: N.Stmt, name: str, prim: str) -> None:
    """No block may change sides of ``name`` when the two depend on each other."""
    order0 = [b.name for b in I.blocks_of(old)]
    blocks2 = I.blocks_of(new)
    order2 = [b.name for b in blocks2]
    moved = next(b for b in blocks2 if b.name == name)
    before0 = set(order0[: order0.index(name)])
    before2 = set(order2[: order2.index(name)])
    for other in blocks2:
        if other.name in before0 ^ before2:
            why = _depends(other, moved)
            if why is not None:
                raise ScheduleError(
                    f"{prim}: moving {name!r} past block {other.name!r} changes the result "
                    f"({why}); move it to a loop that keeps their order"
                )


class _ReplaceLoads(IRMutator):
    def __init__(self, buf: N.Buffer, fn: Any) -> None:
        self.buf, self.fn = buf, fn

    def expr_BufferLoad(self, e: N.BufferLoad) -> E.PrimExpr:
        idx = tuple(self.visit_expr(i) for i in e.indices)
        if e.buffer is self.buf:
            return self.fn(idx)
        return N.BufferLoad(e.buffer, idx, e.dtype)


def replace_loads(s: N.Stmt, buf: N.Buffer, fn: Any) -> N.Stmt:
    """``s`` with every load of ``buf`` replaced by ``fn(indices)``."""
    return _ReplaceLoads(buf, fn).visit_stmt(s)


def drop_unused_alloc(body: N.Stmt, buf: N.Buffer) -> N.Stmt:
    """``body`` without the allocation of ``buf`` when nothing uses it any more."""
    allocs, inner = I.peel_allocs(body)
    if buf not in allocs or I.loads(inner, buf) or I.stores(inner, buf):
        return body
    return I.wrap_allocs([b for b in allocs if b is not buf], inner)


def _free_vars(p: I.BlockParts) -> set:
    stmts = [p.body] + ([p.init] if p.init is not None else [])
    found: set = set()
    for s in stmts:
        for x in I.loads(s):
            found |= {v for i in x.indices for v in E.post_order(i) if isinstance(v, E.Var)}
        for st in I.stores(s):
            found |= {v for i in st.indices for v in E.post_order(i) if isinstance(v, E.Var)}
            found |= {v for v in E.post_order(st.value) if isinstance(v, E.Var)}
    if p.where is not None:
        found |= {v for v in E.post_order(p.where) if isinstance(v, E.Var)}
    return found - {iv.var for iv in p.iters}


class LocationPrimitives:
    """Where blocks are computed (see the module docstring)."""

    def _move(self, block: Any, loop: Any, reverse: bool, prim: str, index: int,
              unit_loops: bool) -> None:  # fmt: skip
        blk, lp = self._block(block, prim), self._loop(loop, prim)
        self._only_blocks(prim)
        p = I.unpack(blk, prim)
        body0 = self.func.body
        body1 = I.remove(body0, blk)
        target = I.find_loop(body1, lp.loop_var)
        if target is None:
            raise ScheduleError(
                f"{prim}: loop {lp.loop_var.name} is one of block {blk.name!r}'s own loops; "
                f"give a loop of its {'producers' if reverse else 'consumers'}"
            )
        others = I.blocks_of(body1)
        under = {b.name for b in I.blocks_of(target.body)}
        iters = {iv.var: iv for iv in p.iters}
        outer = I.loops_above(body1, target) + [target]
        bounds = _bounds(outer)
        doms: dict = {}
        if not reverse:
            outs = I.written(blk)
            if len(outs) != 1:
                raise ScheduleError(f"{prim}: block {blk.name!r} writes {len(outs)} buffers")
            buf = outs[0]
            for o in others:
                if buf in I.written(o):
                    raise ScheduleError(
                        f"{prim}: {buf.name!r} is also written by block {o.name!r}; "
                        f"{blk.name!r} must be its only writer"
                    )
            related = [o for o in others if I.reads_any(o, {buf})]
            if not related:
                raise ScheduleError(f"{prim}: block {blk.name!r} has no consumer to compute at")
            key = _key([s.indices for s in I.stores(blk, buf)], iters,
                       f"{prim}: block {blk.name!r} writes {buf.name!r}")  # fmt: skip
            pairs = [(buf, key)]
        else:
            ins = {x.buffer for x in I.loads(blk)}
            related = [o for o in others if set(I.written(o)) & ins]
            if not related:
                raise ScheduleError(f"{prim}: block {blk.name!r} has no producer block")
            pairs = []
            for buf in dict.fromkeys(b for o in related for b in I.written(o) if b in ins):
                key = _key([x.indices for x in I.loads(blk, buf)], iters,
                           f"{prim}: block {blk.name!r} reads {buf.name!r}")  # fmt: skip
                for v in key:
                    if iters[v].kind == "R":
                        raise ScheduleError(
                            f"{prim}: block {blk.name!r} reads {buf.name!r} along its "
                            f"reduction variable {v.name}; it needs all of {buf.name!r}, "
                            "not the region one iteration of the loop produces"
                        )
                pairs.append((buf, key))
            for o in related:
                for iv in I.unpack(o, prim).iters:
                    feeding = [x for x in outer if _uses(iv.binding, x.loop_var)]
                    if iv.kind == "R" and feeding:
                        raise ScheduleError(
                            f"{prim}: loop {feeding[0].loop_var.name} runs the reduction "
                            f"{iv.var.name} of block {o.name!r}, whose result is not final "
                            "inside it; give a loop outside its reduction loops"
                        )
        missing = [o.name for o in related if o.name not in under]
        if missing:
            role = "producer" if reverse else "consumer"
            raise ScheduleError(
                f"{prim}: {role} block {missing[0]!r} of {blk.name!r} is not under loop "
                f"{lp.loop_var.name}; every {role} must be under the target loop, as TVM "
                "requires"
            )
        for buf, key in pairs:
            box = region(accesses(target.body, buf, write=reverse), bounds, prim)
            for v, (lo, ext) in zip(key, box):
                if v in doms and not (doms[v][1] == ext and region_equal(doms[v][0], lo, bounds)):
                    raise ScheduleError(
                        f"{prim}: the buffers block {blk.name!r} shares with the blocks "
                        f"under loop {lp.loop_var.name} give {v.name} two different regions"
                    )
                doms[v] = (lo, ext)
        nest = self._regenerate(p, doms, body1, bounds, outer, prim, unit_loops)
        seq = I.container_items(body1, target)
        rel = {r.name for r in related}
        outs, ins = set(I.written(blk)), {x.buffer for x in I.loads(blk)} - set(I.written(blk))
        pos = sorted(I.item_index(seq, o) for o in I.blocks_of(target.body) if o.name in rel)
        first_ok, last_ok = (pos[-1] + 1, len(seq)) if reverse else (0, pos[0])
        for k, item in enumerate(seq):
            for o in I.blocks_of(item):
                why = None if o.name in rel else _depends(o, blk)
                if why is None:
                    continue
                feeds = bool(set(I.written(o)) & ins) and not (
                    set(I.written(o)) & outs or I.reads_any(o, outs)
                )
                eats = I.reads_any(o, outs) and not set(I.written(o)) & (ins | outs)
                if not reverse and feeds:
                    first_ok = max(first_ok, k + 1)
                elif reverse and eats:
                    last_ok = min(last_ok, k)
                else:
                    raise ScheduleError(
                        f"{prim}: under loop {lp.loop_var.name}, block {o.name!r} depends on "
                        f"{blk.name!r} ({why}) across iterations; it cannot be moved there"
                    )
        if first_ok > last_ok:
            raise ScheduleError(
                f"{prim}: no place under loop {lp.loop_var.name} is after every block "
                f"{blk.name!r} reads and before every block that reads it"
            )
        at = last_ok if index == -1 else first_ok if index == -2 else index
        if not first_ok <= at <= last_ok:
            raise ScheduleError(f"{prim}: index {index} is outside [{first_ok}, {last_ok}]")
        body2 = I.insert_in_loop(body1, target, at, nest)
        check_order(body0, body2, blk.name, prim)
        self._commit(body2, prim)

    def _regenerate(self, p: I.BlockParts, doms: dict, body: N.Stmt, bounds: dict,
                    outer: list, prim: str, unit_loops: bool) -> N.Stmt:  # fmt: skip
        """The block's new nest: one loop per iteration variable over its new domain."""
        taken = I.var_names(body)
        loops, iters, preds = [], [], []
        all_bounds = dict(bounds)
        for k, iv in enumerate(p.iters):
            lo, ext = doms.get(iv.var, (E.const(iv.min), iv.extent))
            if isinstance(lo, E.IntImm):  # a constant region: intersect with the domain
                a = max(lo.value, iv.min)
                b = min(lo.value + ext, iv.min + iv.extent)
                lo, ext = E.const(a), max(b - a, 1)
            if ext == 1 and not unit_loops:  # TVM makes no loop of one iteration
                binding = simplify_expr(lo, all_bounds)
            else:
                lv = E.Var(I.fresh_name(f"ax{k}", taken))
                loops.append(N.For(lv, E.const(0), E.const(ext), "serial", N.NOP))
                all_bounds[lv] = (0, ext - 1)
                binding = simplify_expr(lv + lo, all_bounds)
            iters.append(I.IterVar(iv.var, iv.kind, iv.min, iv.extent, binding))
            for cond in (binding >= iv.min, binding < iv.min + iv.extent):
                c = simplify_expr(cond, all_bounds)
                if not (isinstance(c, E.IntImm) and c.value):
                    preds.append(c)
        defined = {x.loop_var for x in outer} | {x.loop_var for x in loops}
        stray = [v for v in _free_vars(p) if v not in defined]
        if p.where is not None and any(x is v for x in E.post_order(p.where) for v in stray):
            raise ScheduleError(
                f"{prim}: block {p.name!r}'s T.where uses the loops it leaves; write the "
                "predicate over its iteration variables to move it"
            )
        if stray:
            raise ScheduleError(
                f"{prim}: block {p.name!r} uses loop variable {stray[0].name} directly (not "
                "through an iteration variable), so it cannot be moved; bind it with T.axis"
            )
        where = p.where
        for c in preds:
            where = c if where is None else logical_and(where, c)
        out: N.Stmt = I.pack(p.replace(iters=tuple(iters), where=where))
        for lp in reversed(loops):
            out = N.For(lp.loop_var, lp.min, lp.extent, "serial", out)
        return out

    def compute_at(self, block: Any, loop: Any, preserve_unit_loops: bool = False,
                   index: int = -1) -> None:  # fmt: skip
        """Compute a producer block under ``loop`` of its consumers, over the region they
        read per iteration of it (TVM's compute_at)."""
        self._move(block, loop, False, "compute_at", index, preserve_unit_loops)
        self._record("ComputeAt", _args(block, loop, preserve_unit_loops))

    def reverse_compute_at(self, block: Any, loop: Any, preserve_unit_loops: bool = False,
                           index: int = -1) -> None:  # fmt: skip
        """Compute a consumer block under ``loop`` of its producers, over the region they
        write per iteration of it (TVM's reverse_compute_at)."""
        self._move(block, loop, True, "reverse_compute_at", index, preserve_unit_loops)
        self._record("ReverseComputeAt", _args(block, loop, preserve_unit_loops))

    # -- inlining ---------------------------------------------------------------------
    def _single_store(self, blk: N.Block, prim: str, role: str) -> tuple:
        p = I.unpack(blk, prim)
        if p.init is not None or any(iv.kind == "R" for iv in p.iters):
            raise ScheduleError(
                f"{prim}: {role} block {blk.name!r} is a reduction; only a block of one "
                "BufferStore with no reduction variables can be inlined"
            )
        if p.where is not None:
            raise ScheduleError(f"{prim}: {role} block {blk.name!r} has a T.where predicate")
        if not isinstance(p.body, N.BufferStore):
            raise ScheduleError(
                f"{prim}: {role} block {blk.name!r} is not a single BufferStore "
                f"(it holds a {type(p.body).__name__})"
            )
        return p, p.body

    def compute_inline(self, block: Any) -> None:
        """Inline a block's value into every block that reads its buffer (TVM's rules:
        one BufferStore at distinct iteration variables, no reduction, not an output)."""
        prim = "compute_inline"
        blk = self._block(block, prim)
        self._only_blocks(prim)
        p, store = self._single_store(blk, prim, "the")
        buf = store.buffer
        iters = {iv.var: iv for iv in p.iters}
        key = _key([store.indices], iters, f"{prim}: block {blk.name!r} writes {buf.name!r}")
        if buf in self.func.params:
            raise ScheduleError(
                f"{prim}: block {blk.name!r} writes {buf.name!r}, an argument of the "
                "function (its output); only intermediate buffers can be inlined"
            )
        if I.loads(store.value, buf):
            raise ScheduleError(f"{prim}: block {blk.name!r} reads the buffer it writes")
        stray = [v for v in _free_vars(p) if v not in iters]
        if stray:
            raise ScheduleError(f"{prim}: block {blk.name!r} uses loop variable {stray[0].name}")
        body0 = self.func.body
        others = [o for o in I.blocks_of(body0) if o is not blk]
        if any(buf in I.written(o) for o in others):
            raise ScheduleError(f"{prim}: {buf.name!r} has other writers than {blk.name!r}")
        order = I.blocks_of(body0)
        ins = {x.buffer for x in I.loads(store.value)}
        for o in order[order.index(blk) + 1 :]:
            if set(I.written(o)) & ins and any(
                I.reads_any(c, {buf}) for c in order[order.index(o) :]
            ):
                raise ScheduleError(
                    f"{prim}: block {o.name!r} writes what {blk.name!r} reads before a "
                    f"reader of {buf.name!r}; inlining would read the new values"
                )

        def value_at(idx: tuple) -> E.PrimExpr:
            return E.substitute(store.value, dict(zip(key, idx)))

        body = replace_loads(I.remove(body0, blk), buf, value_at)
        self._commit(drop_unused_alloc(body, buf), prim)
        self._record("ComputeInline", {"block": block})

    def reverse_compute_inline(self, block: Any) -> None:
        """Inline a consumer block into its producer: the producer computes the
        consumer's value where it computed its own (TVM's rules)."""
        prim = "reverse_compute_inline"
        blk = self._block(block, prim)
        self._only_blocks(prim)
        p, store = self._single_store(blk, prim, "the")
        body0 = self.func.body
        others = [o for o in I.blocks_of(body0) if o is not blk]
        ins = list(dict.fromkeys(x.buffer for x in I.loads(blk)))
        produced = [b for b in ins if any(b in I.written(o) for o in others)]
        if len(produced) != 1:
            raise ScheduleError(
                f"{prim}: block {blk.name!r} reads {len(produced)} buffers that blocks "
                "write; it must read exactly one producer's buffer"
            )
        buf = produced[0]
        if buf in self.func.params:
            raise ScheduleError(f"{prim}: {buf.name!r} is an argument of the function")
        writers = [o for o in others if buf in I.written(o)]
        if len(writers) != 1:
            raise ScheduleError(f"{prim}: {buf.name!r} has {len(writers)} writers")
        prod = writers[0]
        readers = [o for o in others if I.reads_any(o, {buf})]
        if readers != [prod] and readers:
            raise ScheduleError(
                f"{prim}: block {readers[0].name!r} also reads {buf.name!r}; the consumer "
                "must be its only reader"
            )
        pp, pstore = self._single_store(prod, prim, "producer")
        iters = {iv.var: iv for iv in p.iters}
        key = _key([x.indices for x in I.loads(blk, buf)], iters,
                   f"{prim}: block {blk.name!r} reads {buf.name!r}")  # fmt: skip
        if set(key) != set(iters) or any(
            iters[v].min != 0 or iters[v].extent != n for v, n in zip(key, buf.shape)
        ):
            raise ScheduleError(
                f"{prim}: block {blk.name!r} does not read all of {buf.name!r} one element "
                "per iteration (its iteration variables must index it, each over its extent)"
            )
        stray = [v for v in _free_vars(p) if v not in iters]
        if stray:
            raise ScheduleError(f"{prim}: block {blk.name!r} uses loop variable {stray[0].name}")
        mapping = dict(zip(key, pstore.indices))
        value = E.substitute(store.value, mapping)
        value = _swap(value, buf, pstore.value)
        new_store = N.BufferStore(
            store.buffer, value, tuple(E.substitute(i, mapping) for i in store.indices)
        )
        body1 = I.Replace(prod, I.pack(pp.replace(body=new_store))).visit_stmt(body0)
        body1 = I.remove(body1, next(b for b in I.blocks_of(body1) if b.name == blk.name))
        order = [b.name for b in I.blocks_of(body0)]
        between = order[order.index(prod.name) + 1 : order.index(blk.name)]
        for o in others:
            if o.name in between and _depends(o, blk):
                raise ScheduleError(
                    f"{prim}: block {o.name!r} between {prod.name!r} and {blk.name!r} "
                    f"depends on {blk.name!r} ({_depends(o, blk)})"
                )
        self._commit(drop_unused_alloc(body1, buf), prim)
        self._record("ReverseComputeInline", {"block": block})


def _args(block: Any, loop: Any, preserve_unit_loops: bool) -> dict:
    args = {"block": block, "loop": loop}
    if preserve_unit_loops:
        args["preserve_unit_loops"] = True
    return args


def _swap(value: E.PrimExpr, buf: N.Buffer, new: E.PrimExpr) -> E.PrimExpr:
    def go(e: E.PrimExpr) -> E.PrimExpr:
        if isinstance(e, N.BufferLoad) and e.buffer is buf:
            return new
        return E.map_children(e, go)

    return go(value)
