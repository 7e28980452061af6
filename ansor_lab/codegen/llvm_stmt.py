"""Statement emission: sequences, lets, branches (masks inside vector loops), and the
loops: serial, unrolled, vectorized (in chunks, ``access.vector_chunks``) and the counted
loop emitter every loop goes through."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from llvmlite import ir

from ..dsl.visitor import STMT
from ..errors import CodegenError
from ..ir import nodes as N
from ..ir.bound_check import interval
from . import horizontal_reduce, nan_flag_reduce, transpose_copy
from .access import const_int, loop_bounds, not_vectorizable, planned_chunks
from .llvm_types import MAX_UNROLL, LoopReport, Vector, llvm_type, memory_type


class StmtEmitter:
    """Builder methods for statements (``stmt_<Node>``) and loops."""

    def stmt(self, s: N.Stmt) -> None:
        """Emit one statement at the current position."""
        self.handler(STMT, s)(s)

    def stmt_SeqStmt(self, s: N.SeqStmt) -> None:
        for item in s.seq:
            self.stmt(item)

    def stmt_Block(self, s: N.Block) -> None:
        self.stmt(s.body)

    def stmt_Evaluate(self, s: N.Evaluate) -> None:
        self.expr(s.value)

    def stmt_LetStmt(self, s: N.LetStmt) -> None:
        value = self.expr(s.value)
        self.vars[s.var] = value
        if self.vec is not None and self.lanes_of(value):
            self.vec.varying.add(s.var)
        span = interval(s.value, self.ranges)  # what accesses through it can be proved by
        if span is not None:
            self.ranges[s.var] = span
        self.stmt(s.body)
        del self.vars[s.var]
        self.ranges.pop(s.var, None)
        if self.vec is not None:
            self.vec.varying.discard(s.var)

    def stmt_IfThenElse(self, s: N.IfThenElse) -> None:
        if self.varying(s.condition):
            cond = self.expr(s.condition)
            saved = self.vec.mask
            self.vec.mask = cond if saved is None else self.b.and_(saved, cond)
            self.stmt(s.then_case)
            if s.else_case is not None:
                notc = self.b.xor(cond, self.const(cond.type, 1))
                self.vec.mask = notc if saved is None else self.b.and_(saved, notc)
                self.stmt(s.else_case)
            self.vec.mask = saved
            return
        cond = self.expr(s.condition)
        bld = self.b
        then_bb = self.fn.append_basic_block("if.then")
        end_bb = self.fn.append_basic_block("if.end")
        else_bb = self.fn.append_basic_block("if.else") if s.else_case is not None else end_bb
        bld.cbranch(cond, then_bb, else_bb)
        bld.position_at_end(then_bb)
        with self.region():
            self.stmt(s.then_case)
        bld.branch(end_bb)
        if s.else_case is not None:
            bld.position_at_end(else_bb)
            with self.region():
                self.stmt(s.else_case)
            bld.branch(end_bb)
        bld.position_at_end(end_bb)

    def stmt_For(self, s: N.For) -> None:
        saved = self.flags, self.div_flags
        # float liberties the schedule states on a loop (``horizontal_reduce``): in a
        # reassociated block of partial results, the sign of a zero left open (a max
        # without the -0 < +0 fix-up); divisions by a loop-invariant value done as one
        # reciprocal and multiplications
        if s.annotation(horizontal_reduce.REASSOCIATE) and "fast" not in self.flags:
            extra = tuple(f for f in ("nsz",) if f not in self.flags)
            self.flags, self.div_flags = self.flags + extra, self.div_flags + extra
        if s.annotation(horizontal_reduce.RECIPROCAL) and "arcp" not in self.div_flags:
            self.div_flags = (*self.div_flags, "arcp")
        try:
            self._for(s)
        finally:
            self.flags, self.div_flags = saved

    def _for(self, s: N.For) -> None:
        if s.kind == "thread_binding":
            raise CodegenError(
                f"loop {s.loop_var.name!r} is bound to {s.thread_tag}; the LLVM (CPU) backend "
                "has no GPU threads: build with target='cuda' or remove the bind"
            )
        extent = const_int(s.extent)
        if s.kind in ("serial", "unrolled") and self.vec is None:
            hsum = horizontal_reduce.match(
                s, self.flat_index, self.ctx.options.instrument_bound_checkers
            )
            if hsum is not None:  # partial results summed as a tree (reassociation stated)
                horizontal_reduce.emit(self, hsum, memory_type)
                self.ctx.report(
                    LoopReport(s.loop_var.name, "serial", hsum.lanes, "horizontal tree")
                )
                return
            red = None if {"fast", "nnan"} & set(self.flags) else nan_flag_reduce.match(s)
            if red is not None and id(red.store) not in self.nan_flags:
                self._nan_flagged(s, red)
                how = f"{'min' if red.is_min else 'max'} reduction, NaN test in a flag"
                self.ctx.report(LoopReport(s.loop_var.name, s.kind, extent, how))
                return
            copy = transpose_copy.match(s, self.flat_index)
            if copy is not None:  # a layout-changing copy: rows in, shuffles, columns out
                transpose_copy.emit(self, copy, memory_type)
                detail = {
                    "collapsed": "*".join(lp.loop_var.name for lp in reversed(copy.collapsed)),
                    "blocks": copy.extent // copy.lanes,
                }
                if copy.extent % copy.lanes:
                    detail["tail"] = copy.extent % copy.lanes
                if copy.groups > 1:
                    detail["column groups"] = copy.groups
                self.ctx.report(
                    LoopReport(
                        copy.vector.loop_var.name,
                        copy.vector.kind,
                        copy.lanes * copy.groups,
                        f"transposed copy {copy.lanes}x{copy.lanes}",
                        detail,
                    )
                )
                return
        if s.kind == "vectorized" and self.vec is None:
            reason = not_vectorizable(s, extent)
            if reason is None:
                self.vector_loop(s, extent)
                return
            self.ctx.report(
                LoopReport(s.loop_var.name, "vectorized", extent, f"scalar loop ({reason})")
            )
        if s.kind == "parallel" and not self.in_parallel and self.vec is None:
            if self.ctx.options.num_threads > 1 or self.ctx.options.record_thread_ids:
                self.parallel_loop(s)
                return
            self.ctx.report(LoopReport(s.loop_var.name, "parallel", extent, "serial (one thread)"))
        if (
            s.kind == "unrolled"
            and extent is not None
            and const_int(s.min) is not None
            and extent <= MAX_UNROLL
        ):
            self.ctx.report(LoopReport(s.loop_var.name, "unrolled", extent, "unrolled"))
            vt = llvm_type(s.loop_var.dtype)
            quieted = False
            try:
                for k in range(extent):
                    if k == 1:
                        self.ctx.quiet += 1
                        quieted = True
                    self.vars[s.loop_var] = ir.Constant(vt, const_int(s.min) + k)
                    self.ranges[s.loop_var] = (const_int(s.min) + k, const_int(s.min) + k)
                    self.stmt(s.body)
            finally:
                if quieted:
                    self.ctx.quiet -= 1
            self.vars.pop(s.loop_var, None)
            self.ranges.pop(s.loop_var, None)
            return
        if self.vec is not None:
            raise CodegenError("internal: a loop inside a vectorized loop body")
        self.serial_loop(s)

    def _nan_flagged(self, s: N.For, red) -> None:
        """The min/max reduction nest ``s`` with its NaN test in a flag (``nan_flag_reduce``)."""
        flags = nan_flag_reduce.make_flags(self, red)
        self.nan_flags[id(red.store)] = (red, flags)
        try:
            self.stmt(s)  # the loops as usual; the store asks ``nan_flags`` for its value
        finally:
            del self.nan_flags[id(red.store)]
        nan_flag_reduce.finish(self, red, flags)

    @contextmanager
    def counted_loop(
        self, label: str, var_name: str, lo: ir.Value, hi: ir.Value, step: int = 1
    ) -> Iterator[ir.Value]:
        """``for v in range(lo, hi, step)``, the one loop emitter: yields ``v`` (a phi);
        the body is what the ``with`` block emits, in its own memo region (its values do
        not dominate the code after the loop). Blocks are named ``label``,
        ``label.body``, ``label.end``."""
        bld = self.b
        pre = bld.block
        head = self.fn.append_basic_block(label)
        body = self.fn.append_basic_block(f"{label}.body")
        end = self.fn.append_basic_block(f"{label}.end")
        bld.branch(head)
        bld.position_at_end(head)
        phi = bld.phi(lo.type, name=var_name)
        phi.add_incoming(lo, pre)
        bld.cbranch(bld.icmp_signed("<", phi, hi), body, end)
        bld.position_at_end(body)
        with self.region():
            yield phi
        nxt = bld.add(phi, ir.Constant(lo.type, step), flags=["nsw"])
        phi.add_incoming(nxt, bld.block)
        bld.branch(head)
        bld.position_at_end(end)

    def serial_loop(self, s: N.For, lo: ir.Value | None = None, hi: ir.Value | None = None):
        """A loop over ``s``'s range (or ``lo`` to ``hi``: a parallel thread's share)."""
        if lo is None:
            lo = self.expr(s.min)
            hi = self._int_op("add", lo, self.expr(s.extent))
        name = s.loop_var.name
        with self.counted_loop(f"for.{name}", name, lo, hi) as phi:
            self.vars[s.loop_var] = phi
            bounds = loop_bounds(s)
            if bounds is not None:
                self.ranges[s.loop_var] = bounds
            self.stmt(s.body)
        del self.vars[s.loop_var]
        self.ranges.pop(s.loop_var, None)

    def vector_loop(self, s: N.For, lanes: int) -> None:
        """Emit the body once per chunk of the lanes (``vector_chunks``: 48 = 32 + 16,
        28 = 16 + 12; the loop report then counts accesses over all chunks). The lanes are
        independent, so this is the same program; but a mask of a width like <48 x i1>
        that lives across blocks (a loop-invariant guard of a non-divisible tile) makes
        LLVM's x86 backend scalarize every select and masked access that uses it (25x
        slower). A row up to 16 lanes is one vector of its own width: a <7 x float> row of
        a 7x7 feature map stays in one register, where three chunks (4 + 2 + 1) made a
        convolution 2.5x slower."""
        base = self.expr(s.min)
        total: dict = {}
        chunks = planned_chunks(s)
        for offset, n in chunks:
            start = base if offset == 0 else self.b.add(base, ir.Constant(base.type, offset))
            self.vec = Vector(s.loop_var, n, start, None, {s.loop_var})
            lo = const_int(s.min)
            if lo is not None:
                self.ranges[s.loop_var] = (lo + offset, lo + offset + n - 1)
            try:
                self.stmt(s.body)
            finally:
                stats, self.vec = self.vec.stats, None
                self.ranges.pop(s.loop_var, None)
            for key, count in stats.items():  # summed over chunks
                total[key] = total.get(key, 0) + count
        detail = dict(sorted(total.items()))
        if len(chunks) > 1:
            detail["chunks"] = "+".join(str(n) for _, n in chunks)
        self.ctx.report(LoopReport(s.loop_var.name, "vectorized", lanes, f"SIMD x{lanes}", detail))
