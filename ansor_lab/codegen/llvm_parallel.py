"""Parallel loops: the body is outlined into its own function and run on libgomp's
thread pool (``GOMP_parallel``); free variables travel in a closure of i64 slots."""

from __future__ import annotations

from llvmlite import ir

from ..dsl import expr as E
from ..ir import nodes as N
from ..ir.visitor import post_order_visit
from .access import const_int
from .llvm_types import I1, I32, I64, PTR, LoopReport, llvm_type

#: Share of a parallel loop's iterations handed out statically (thread t always runs the
#: same block, so the data it touched in the last call is still in its core's cache); the
#: rest is taken in chunks from a shared counter, so a thread that was descheduled does
#: not hold up the others at the barrier.
STATIC_SHARE = 0.75


class ParallelEmitter:
    """Builder methods that outline a parallel loop."""

    def parallel_loop(self, s: N.For) -> None:
        """Outline the loop body and run its iterations on libgomp's thread pool."""
        ctx = self.ctx
        free_vars, used_buffers = _free_values(s, self.buffers)
        slots = (
            [("err", None), ("next", None)]
            + [("var", v) for v in free_vars]
            + [("buf", b) for b in used_buffers]
        )
        closure = self.alloca_builder.alloca(I64, size=len(slots), name="closure")
        closure.type = PTR
        for k, (kind, item) in enumerate(slots):
            if kind in ("err", "next"):
                value = ir.Constant(I64, 0)
            elif kind == "var":
                value = _to_slot(self.b, self.vars[item])
            else:
                value = self.b.ptrtoint(self.buffers[item], I64)
            slot = self.b.gep(closure, [ir.Constant(I32, k)], source_etype=I64)
            self.b.store(value, slot)
        ctx.outlined += 1
        name = f"{self.fn.name}__par{ctx.outlined}"
        outlined = ir.Function(ctx.module, ir.FunctionType(ir.VoidType(), [PTR]), name=name)
        outlined.attributes.add("nounwind")
        self._emit_outlined(outlined, s, slots)
        gomp = ctx.declare("GOMP_parallel", ir.VoidType(), [PTR, PTR, I32, I32])
        self.b.call(
            gomp,
            [outlined, closure, ir.Constant(I32, ctx.options.num_threads), ir.Constant(I32, 0)],
        )
        err_slot = self.b.gep(closure, [ir.Constant(I32, 0)], source_etype=I64)
        # the code a thread's share failed with (one of them, when several failed)
        self.fail_with(self.b.trunc(self.b.load(err_slot, typ=I64), I32))
        ctx.report(
            LoopReport(
                s.loop_var.name,
                "parallel",
                const_int(s.extent),
                f"{ctx.options.num_threads} threads (libgomp)",
            )
        )

    def _emit_outlined(self, fn: ir.Function, s: N.For, slots: list) -> None:
        """The outlined function unpacks the closure and calls ``<fn>_body``, which runs
        this thread's share of the loop. The body takes the buffers as ``noalias``
        arguments: pointers read back from the closure would carry no aliasing facts, and
        LLVM could then keep no accumulator in a register across a loop (every store to
        the output might change an input).

        A share of the iterations (``STATIC_SHARE``) is split into one block per thread,
        the same block on every call: a thread finds the rows it read or wrote last time
        in its own core's cache (a layer norm's 128 rows live in two L2 caches, not
        travelling between them). The rest is handed out dynamically, in chunks of about
        rest / (8 x threads) taken from a shared counter (one atomic add per chunk): on a
        machine shared with other jobs a thread that is descheduled does not hold up the
        whole loop while the other thread idles at the barrier."""
        ctx = self.ctx
        bufs = [item for kind, item in slots if kind == "buf"]
        vars_ = [item for kind, item in slots if kind == "var"]
        var_types = [llvm_type(v.dtype) for v in vars_]
        body_ty = ir.FunctionType(I32, [PTR, I32, I32] + [PTR] * len(bufs) + var_types)
        body = ir.Function(ctx.module, body_ty, name=fn.name + "_body")
        body.attributes.add("nounwind")
        buf_args = body.args[3 : 3 + len(bufs)]
        for a, b in zip(buf_args, bufs):
            a.name = b.name
            a.add_attribute("noalias")
        var_args = body.args[3 + len(bufs) :]
        for a, v in zip(var_args, vars_):
            a.name = v.name
        fb = type(self)(
            ctx,
            body,
            dict(zip(bufs, buf_args)),
            dict(zip(vars_, var_args)),
        )
        fb.in_parallel = True
        fb.ranges = dict(self.ranges)
        bld = fb.b
        lo = fb._as_i64(fb.expr(s.min))
        ext = fb._as_i64(fb.expr(s.extent))
        n64 = bld.sext(body.args[1], I64)
        tid = bld.sext(body.args[2], I64)
        # thread t first runs block t of ext * STATIC_SHARE // n iterations, then takes
        # chunks of about (ext - static part) / (8 x threads) from the shared counter;
        # one copy of the loop runs every range (the phis pick the next one)
        static_share = int(round(STATIC_SHARE * 1024))
        scaled = bld.sdiv(bld.mul(ext, ir.Constant(I64, static_share)), ir.Constant(I64, 1024))
        share = bld.sdiv(scaled, n64)
        static_end = bld.mul(share, n64)
        mine = bld.mul(tid, share)
        mine_end = bld.add(mine, share)
        per = bld.sdiv(bld.sub(ext, static_end), bld.mul(n64, ir.Constant(I64, 8)))
        one = ir.Constant(I64, 1)
        chunk = bld.select(bld.icmp_signed("<", per, one), one, per)
        entry = bld.block
        work = body.append_basic_block("par.work")
        grab = body.append_basic_block("par.grab")
        take = body.append_basic_block("par.take")
        done = body.append_basic_block("par.done")
        bld.branch(work)
        bld.position_at_end(work)
        first, last = bld.phi(I64, name="par.first"), bld.phi(I64, name="par.last")
        first.add_incoming(mine, entry)
        last.add_incoming(mine_end, entry)
        start, stop = bld.add(lo, first), bld.add(lo, last)
        vt = llvm_type(s.loop_var.dtype)
        if vt != I64:
            start, stop = bld.trunc(start, vt), bld.trunc(stop, vt)
        fb.serial_loop(s, start, stop)
        bld.branch(grab)
        bld.position_at_end(grab)
        k = bld.add(static_end, bld.atomic_rmw("add", body.args[0], chunk, "monotonic"))
        bld.cbranch(bld.icmp_signed("<", k, ext), take, done)
        bld.position_at_end(take)
        end = bld.add(k, chunk)
        end = bld.select(bld.icmp_signed(">", end, ext), ext, end)
        bld.branch(work)
        first.add_incoming(k, take)
        last.add_incoming(end, take)
        bld.position_at_end(done)
        fb.finish(ir.Constant(I32, 0))

        arg = fn.args[0]
        bld = ir.IRBuilder(fn.append_basic_block("entry"))
        values = []
        for k, (kind, item) in enumerate(slots):
            if kind in ("err", "next"):
                continue
            slot = bld.gep(arg, [ir.Constant(I32, k)], source_etype=I64)
            raw = bld.load(slot, typ=I64)
            if kind == "var":
                values.append(_from_slot(bld, raw, llvm_type(item.dtype)))
            else:
                values.append(bld.inttoptr(raw, PTR))
        tid = bld.call(ctx.declare("omp_get_thread_num", I32, []), [])
        nth = bld.call(ctx.declare("omp_get_num_threads", I32, []), [])
        if ctx.options.record_thread_ids:
            table = ctx.thread_id_table()
            idx = bld.and_(tid, ir.Constant(I32, 63))
            cell = bld.gep(table, [idx], source_etype=I32)
            bld.store(ir.Constant(I32, 1), cell)
        bufv = values[len(vars_) :]
        varv = values[: len(vars_)]
        counter = bld.gep(arg, [ir.Constant(I32, 1)], source_etype=I64)
        rc = bld.call(body, [counter, nth, tid] + bufv + varv)
        with bld.if_then(bld.icmp_signed("!=", rc, ir.Constant(I32, 0))):
            slot = bld.gep(arg, [ir.Constant(I32, 0)], source_etype=I64)
            bld.atomic_rmw("xchg", slot, bld.sext(rc, I64), "monotonic")
        bld.ret_void()


def _to_slot(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """A scalar as the i64 of a closure slot (floats by their bits)."""
    t = v.type
    if isinstance(t, (ir.HalfType, ir.FloatType, ir.DoubleType)):
        bits = {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(t)]
        v = b.bitcast(v, ir.IntType(bits))
        return v if bits == 64 else b.zext(v, I64)
    if t == I64:
        return v
    return b.zext(v, I64) if t == I1 else b.sext(v, I64)


def _from_slot(b: ir.IRBuilder, raw: ir.Value, t: ir.Type) -> ir.Value:
    """The inverse of ``_to_slot``."""
    if isinstance(t, (ir.HalfType, ir.FloatType, ir.DoubleType)):
        bits = {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(t)]
        v = raw if bits == 64 else b.trunc(raw, ir.IntType(bits))
        return b.bitcast(v, t)
    return raw if t == I64 else b.trunc(raw, t)


def _free_values(s: N.For, buffers: dict) -> tuple[list, list]:
    """Variables defined outside ``s`` that it uses, and the outer buffers it touches."""
    used_vars: dict = {}
    used_bufs: dict = {}
    bound: set = set()
    inner_bufs: set = set()

    def visit(node) -> None:
        if isinstance(node, E.Var):
            used_vars[node] = None
        elif isinstance(node, (N.BufferLoad, N.BufferStore)):
            used_bufs[node.buffer] = None
        elif isinstance(node, N.For):
            bound.add(node.loop_var)
        elif isinstance(node, N.LetStmt):
            bound.add(node.var)
        elif isinstance(node, N.Allocate):
            inner_bufs.add(node.buffer)

    post_order_visit(s, visit)
    bound.add(s.loop_var)
    free = [v for v in used_vars if v not in bound]
    bufs = [b for b in used_bufs if b not in inner_bufs and b in buffers]
    return free, bufs
