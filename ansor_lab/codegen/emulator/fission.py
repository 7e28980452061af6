"""Thread-loop fission: a block's per-thread program as one CPU loop nest (MCUDA style).

The statements between two barriers run for every thread of the block before any thread
goes past the second barrier, so each barrier-free region becomes a loop over the threads
(``threadIdx.z`` / ``y`` / ``x``, x innermost) and the barriers become the boundaries
between those loops. What holds a barrier stays outside the thread loops and runs once
per block, so it must be the same for every thread:

- a loop or ``if`` around a barrier keeps the bounds or condition of thread (0, 0, 0);
  when they depend on the thread, ``uniform`` proves them equal for every thread (or
  raises ``GPUBarrierError`` before running), or, in check mode, every thread compares
  its own value at run time and a difference is reported;
- a thread's private state that lives across a barrier gets one copy per thread: a
  ``local`` Allocate gets a leading thread dimension, a thread-dependent ``let`` becomes a
  per-thread array written in the region before it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...dsl import expr as E
from ...errors import GPUBarrierError
from ...ir import gpu, nodes as N
from ...ir.visitor import IRMutator
from .report import BARRIER, EPOCH_SCALE, Reporter
from .spmd import Indices, has_barrier, unlinear
from .uniform import static_values, thread_dependent


class _Expand(IRMutator):
    """Accesses of ``old`` become accesses of ``new`` with the thread number in front."""

    def __init__(self, old: N.Buffer, new: N.Buffer, thread: E.PrimExpr) -> None:
        self.old, self.new, self.thread = old, new, thread

    def expr_BufferLoad(self, e: N.BufferLoad) -> E.PrimExpr:
        indices = tuple(self.visit_expr(i) for i in e.indices)
        if e.buffer is self.old:
            return N.BufferLoad(self.new, (self.thread, *indices), e.dtype)
        return N.BufferLoad(e.buffer, indices, e.dtype)

    def stmt_BufferStore(self, s: N.BufferStore) -> N.Stmt:
        indices = tuple(self.visit_expr(i) for i in s.indices)
        value = self.visit_expr(s.value)
        buf = s.buffer
        if buf is self.old:
            buf, indices = self.new, (self.thread, *indices)
        return N.BufferStore(buf, value, indices)


class _Subst(IRMutator):
    """A variable replaced by an expression everywhere in a statement."""

    def __init__(self, var: E.Var, value: E.PrimExpr) -> None:
        self.var, self.value = var, value

    def expr_Var(self, e: E.Var) -> E.PrimExpr:
        return self.value if e is self.var else e


class Fission:
    """Turns one kernel's per-thread program into its block-level loop nest."""

    def __init__(
        self,
        idx: Indices,
        kernel: str,
        reporter: Reporter | None,
        epoch: tuple | None,
    ) -> None:
        self.idx = idx
        self.kernel = kernel
        self.rep = reporter  # check mode only
        #: check mode: (epoch buffer, epoch variable, block's first epoch variable); the
        #: buffer holds the current epoch at 0 and the block's first at 1
        self.epoch = epoch
        #: per-thread copies to allocate around the block loop
        self.allocs: list = []
        self.thread = idx.thread_linear()

    # -- the pieces -------------------------------------------------------------------
    def region(self, s: N.Stmt) -> N.Stmt:
        """Run barrier-free ``s`` for every thread of the block."""
        if isinstance(s, N.SeqStmt) and not s.seq:
            return s
        for axis in range(3):
            var, n = self.idx.thread[axis], self.idx.launch[axis]
            if n == 1:
                s = N.LetStmt(var, E.IntImm(0, "int32"), s)
            else:
                s = N.For(var, E.IntImm(0, "int32"), E.IntImm(n, "int32"), "serial", s)
        if self.epoch is not None:
            buf, var, first = self.epoch
            s = N.LetStmt(var, N.BufferLoad(buf, (E.IntImm(0, "int32"),), "int64"), s)
            s = N.LetStmt(first, N.BufferLoad(buf, (E.IntImm(1, "int32"),), "int64"), s)
        return s

    def sync(self) -> N.Stmt:
        """A barrier: the next phase starts (a new epoch for the race checks)."""
        if self.epoch is None:
            return N.NOP
        buf = self.epoch[0]
        zero = (E.IntImm(0, "int32"),)
        step = N.BufferStore(
            buf, N.BufferLoad(buf, zero, "int64") + E.IntImm(EPOCH_SCALE, "int64"), zero
        )
        return N.seq(self.rep.pending(), step)

    def block_start(self) -> N.Stmt:
        """A block starts: a new epoch, its first."""
        if self.epoch is None:
            return N.NOP
        buf = self.epoch[0]
        now = N.BufferLoad(buf, (E.IntImm(0, "int32"),), "int64")
        return N.seq(self.sync(), N.BufferStore(buf, now, (E.IntImm(1, "int32"),)))

    def uniform(self, e: E.PrimExpr, what: str) -> tuple[list, E.PrimExpr]:
        """(checks to run first, the block-level value) of a bound or condition around a
        barrier."""
        tv = self.idx.thread
        if not thread_dependent(e, tv):
            return [], e
        t = np.arange(self.idx.threads, dtype=np.int64)
        dims = self.idx.launch
        values = {
            tv[0]: t % dims[0],
            tv[1]: (t // dims[0]) % dims[1],
            tv[2]: t // (dims[0] * dims[1]),
        }
        vals = static_values(e, values)
        if vals is not None:
            bad = np.nonzero(vals != vals[0])[0]
            if bad.size:
                thread = unlinear(int(bad[0]), dims)
                raise GPUBarrierError(
                    f"kernel {self.kernel!r}: a barrier (__syncthreads) sits inside {what} "
                    f"{e} whose value differs between threads of a block: thread "
                    f"(0, 0, 0) gets {vals[0]}, thread {thread} gets {vals[bad[0]]}, so "
                    "not every thread reaches the barrier (a divergent barrier deadlocks or "
                    "corrupts a GPU); make it the same for every thread of a block",
                    kernel=self.kernel,
                    thread=thread,
                )
            return [], E.IntImm(int(vals[0]), e.dtype)
        zero = E.IntImm(0, "int32")
        e0 = E.substitute(e, {v: zero for v in tv})
        if self.rep is None:
            return [], e0
        differs = E.NE(e, e0, "bool")
        return [self.region(N.IfThenElse(differs, self.rep.fail(BARRIER)))], e0

    # -- the walk ---------------------------------------------------------------------
    def level(self, s: N.Stmt) -> N.Stmt:
        """``s`` (per-thread code) run by a whole block."""
        if not has_barrier(s):
            return self.region(s)
        if gpu.is_barrier(s):
            return self.sync()
        if isinstance(s, N.SeqStmt):
            out: list = []
            pending: list = []
            for item in s.seq:
                if has_barrier(item):
                    if pending:
                        out.append(self.region(N.seq(*pending)))
                        pending = []
                    out.append(self.level(item))
                else:
                    pending.append(item)
            if pending:
                out.append(self.region(N.seq(*pending)))
            return N.seq(*out)
        if isinstance(s, N.For):
            where = f"loop {s.loop_var.name!r} with range"
            pre1, lo = self.uniform(s.min, where)
            pre2, ext = self.uniform(s.extent, where)
            loop = N.For(s.loop_var, lo, ext, "serial", self.level(s.body))
            return N.seq(*pre1, *pre2, loop)
        if isinstance(s, N.IfThenElse):
            pre, cond = self.uniform(s.condition, "an if with condition")
            els = None if s.else_case is None else self.level(s.else_case)
            return N.seq(*pre, N.IfThenElse(cond, self.level(s.then_case), els))
        if isinstance(s, N.Block):
            return dataclasses.replace(s, body=self.level(s.body))
        if isinstance(s, N.LetStmt):
            return self._let(s)
        if isinstance(s, N.Allocate):
            old = s.buffer
            strides = (old.size, *old.padded_strides) if old.padded_strides else ()
            new = N.Buffer(
                f"{old.name}_per_thread",
                (self.idx.threads, *old.shape),
                old.dtype,
                "local",
                strides,
            )
            self.allocs.append(new)
            return self.level(_Expand(old, new, self.thread).visit_stmt(s.body))
        raise TypeError(f"emulator: a barrier inside {type(s).__name__} is not supported")

    def _let(self, s: N.LetStmt) -> N.Stmt:
        if not thread_dependent(s.value, self.idx.thread):
            return N.LetStmt(s.var, s.value, self.level(s.body))
        tmp = N.Buffer(f"{s.var.name}_per_thread", (self.idx.threads,), s.var.dtype, "local")
        self.allocs.append(tmp)
        store = self.region(N.BufferStore(tmp, s.value, (self.thread,)))
        load = N.BufferLoad(tmp, (self.thread,), s.var.dtype)
        return N.seq(store, self.level(_Subst(s.var, load).visit_stmt(s.body)))
