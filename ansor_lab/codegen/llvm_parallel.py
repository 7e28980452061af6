"""Parallel loops: the body is outlined into its own function and run on libgomp's
thread pool (``GOMP_parallel``); free variables travel in a closure of i64 slots."""

from __future__ import annotations

from llvmlite import ir

from ..dsl import expr as E
from ..ir import nodes as N
from ..ir.visitor import post_order_visit
from .access import const_int
from .llvm_types import I1, I32, I64, PTR, LoopReport, llvm_type


class ParallelEmitter:
    """Builder methods that outline a parallel loop."""

    def parallel_loop(self, s: N.For) -> None:
        """Outline the loop body and run its iterations on libgomp's thread pool."""
        ctx = self.ctx
        free_vars, used_buffers = _free_values(s, self.buffers)
        slots = (
            [("err", None)] + [("var", v) for v in free_vars] + [("buf", b) for b in used_buffers]
        )
        closure = self.alloca_builder.alloca(I64, size=len(slots), name="closure")
        closure.type = PTR
        for k, (kind, item) in enumerate(slots):
            if kind == "err":
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

        Thread t runs the t-th contiguous block of ceil(extent / threads) iterations,
        the same block on every call: a thread finds the rows it read or wrote last time
        in its own core's cache (a layer norm's 128 rows live in two L2 caches, not
        travelling between them), and the threads work far apart. Iterations handed out
        one at a time from a shared counter (the tail of the loop once was) put the two
        threads on neighbouring iterations at once: a depthwise convolution whose
        parallel iterations were 14-column halves of the same rows wrote the cache line
        between them from both cores, and ran 2-7x slower whenever the threads' timing
        put them there (46 or 340 us for one program, by run) -- a search then ranked it
        by luck. (OpenMP's ``schedule(static)`` and TVM's thread pool split the same way.)"""
        ctx = self.ctx
        bufs = [item for kind, item in slots if kind == "buf"]
        vars_ = [item for kind, item in slots if kind == "var"]
        var_types = [llvm_type(v.dtype) for v in vars_]
        body_ty = ir.FunctionType(I32, [I32, I32] + [PTR] * len(bufs) + var_types)
        body = ir.Function(ctx.module, body_ty, name=fn.name + "_body")
        body.attributes.add("nounwind")
        buf_args = body.args[2 : 2 + len(bufs)]
        for a, b in zip(buf_args, bufs):
            a.name = b.name
            a.add_attribute("noalias")
        var_args = body.args[2 + len(bufs) :]
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
        n64 = bld.sext(body.args[0], I64)
        tid = bld.sext(body.args[1], I64)
        one = ir.Constant(I64, 1)
        share = bld.sdiv(bld.add(ext, bld.sub(n64, one)), n64)  # ceil(ext / n)
        first = _smin(bld, bld.mul(tid, share), ext)
        last = _smin(bld, bld.add(first, share), ext)
        start, stop = bld.add(lo, first), bld.add(lo, last)
        vt = llvm_type(s.loop_var.dtype)
        if vt != I64:
            start, stop = bld.trunc(start, vt), bld.trunc(stop, vt)
        fb.serial_loop(s, start, stop)
        fb.finish(ir.Constant(I32, 0))

        arg = fn.args[0]
        bld = ir.IRBuilder(fn.append_basic_block("entry"))
        values = []
        for k, (kind, item) in enumerate(slots):
            if kind == "err":
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
        rc = bld.call(body, [nth, tid] + bufv + varv)
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


def _smin(bld: ir.IRBuilder, a: ir.Value, b: ir.Value) -> ir.Value:
    return bld.select(bld.icmp_signed("<", a, b), a, b)


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
