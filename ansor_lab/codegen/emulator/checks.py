"""Check mode: every access of a per-thread program checked, as loop IR.

``Instrument`` puts, before each statement, the checks of the accesses it makes (in the
order they are evaluated; an access inside a lazy ``if_then_else`` branch only when the
branch is taken):

- bounds: an index outside its dimension fills the report (block, thread, buffer, index)
  and stops the program (``GPUOutOfBoundsError``);
- races on shared memory: each shared buffer has two shadow arrays (int64, one entry per
  element) holding ``epoch * EPOCH_SCALE + thread`` of the last writer and of the last
  reader (``MANY_READERS`` when several threads read it). The epoch grows at every
  barrier and at every block's start, so an entry of the current epoch was made between
  the same two barriers. Threads of a phase run one after another, so checking each access
  against the entries left by the threads before it finds every pair: a read of an element
  another thread wrote, a write of one another thread wrote or read (``GPURaceError``).
  A write of the value the element already holds is benign and not reported (as
  compute-sanitizer's racecheck does): a cooperative fetch bound to fewer thread axes
  than the block has makes every row of threads write the same tile, which is legal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...dsl import expr as E
from ...ir import gpu, nodes as N
from .. import failures
from .report import (
    EPOCH_SCALE,
    MANY_READERS,
    OUT_OF_BOUNDS,
    RACE,
    READ_AFTER_WRITE,
    WRITE_AFTER_READ,
    WRITE_AFTER_WRITE,
    Reporter,
    i64,
)


@dataclass(frozen=True)
class Shadow:
    """The shadow arrays of one shared buffer."""

    writer: N.Buffer
    reader: N.Buffer

    @staticmethod
    def of(buf: N.Buffer) -> Shadow:
        """Fresh shadows for shared buffer ``buf`` (flat, one entry per element)."""
        return Shadow(
            N.Buffer(f"{buf.name}__writer", (buf.size,), "int64"),
            N.Buffer(f"{buf.name}__reader", (buf.size,), "int64"),
        )


def _and(a: E.PrimExpr | None, b: E.PrimExpr) -> E.PrimExpr:
    return b if a is None else E.And(a, b, "bool")


def _guard(cond: E.PrimExpr | None, s: N.Stmt) -> N.Stmt:
    return s if cond is None else N.IfThenElse(cond, s)


def _is_fail(s: N.Stmt) -> bool:
    return (
        isinstance(s, N.Evaluate) and isinstance(s.value, E.Call) and s.value.op == failures.FAIL_OP
    )


class Instrument:
    """Adds the bounds and race checks to a per-thread program (see the module doc)."""

    def __init__(self, reporter: Reporter, shadows: dict, epoch: E.Var) -> None:
        self.rep = reporter
        self.shadows = shadows  # shared Buffer -> Shadow
        self.epoch = epoch  # the current epoch (bound around every thread loop)
        self.thread = i64(reporter.idx.thread_linear())

    # -- statements -------------------------------------------------------------------
    def stmt(self, s: N.Stmt) -> N.Stmt:
        """``s`` with its checks."""
        if isinstance(s, N.SeqStmt):
            return N.seq(*(self.stmt(x) for x in s.seq))
        if isinstance(s, N.BufferStore):
            pre = []
            for ix in s.indices:
                pre += self.reads(ix)
            pre += self.reads(s.value)
            pre.append(self.bounds(s.buffer, s.indices, write=True))
            if s.buffer not in self.shadows:
                return N.seq(*pre, s)
            # the value once, for the check and the store
            value = E.Var("stored", s.value.dtype)
            race = self.race_write(s.buffer, s.indices, value)
            store = N.BufferStore(s.buffer, value, s.indices)
            return N.seq(*pre, N.LetStmt(value, s.value, N.seq(race, store)))
        if isinstance(s, N.For):
            pre = self.reads(s.min) + self.reads(s.extent)
            return N.seq(*pre, replace(s, body=self.stmt(s.body)))
        if isinstance(s, N.IfThenElse):
            els = None if s.else_case is None else self.stmt(s.else_case)
            return N.seq(
                *self.reads(s.condition),
                replace(s, then_case=self.stmt(s.then_case), else_case=els),
            )
        if isinstance(s, N.LetStmt):
            return N.seq(*self.reads(s.value), replace(s, body=self.stmt(s.body)))
        if isinstance(s, (N.Allocate, N.Block)):
            return replace(s, body=self.stmt(s.body))
        if isinstance(s, N.Evaluate):
            if gpu.is_barrier(s) or _is_fail(s):
                return s
            return N.seq(*self.reads(s.value), s)
        raise TypeError(f"emulator: no check for statement {type(s).__name__}")

    # -- expressions ------------------------------------------------------------------
    def reads(self, e: E.PrimExpr, cond: E.PrimExpr | None = None) -> list:
        """The checks of the loads ``e`` makes, in evaluation order."""
        out: list = []
        self._visit(e, cond, out)
        return out

    def _visit(self, e: E.PrimExpr, cond: E.PrimExpr | None, out: list) -> None:
        if isinstance(e, E.Call) and e.op == "if_then_else":
            c = e.args[0]
            self._visit(c, cond, out)
            self._visit(e.args[1], _and(cond, c), out)
            self._visit(e.args[2], _and(cond, E.Not(c, "bool")), out)
            return
        for child in E.children(e):
            self._visit(child, cond, out)
        if isinstance(e, N.BufferLoad):
            out.append(_guard(cond, self.bounds(e.buffer, e.indices, write=False)))
            if e.buffer in self.shadows:
                out.append(_guard(cond, self.race_read(e.buffer, e.indices)))

    # -- the checks -------------------------------------------------------------------
    def bounds(self, buf: N.Buffer, indices: tuple, write: bool) -> N.Stmt:
        """Report and stop when an index leaves its dimension."""
        outside = None
        for ix, extent in zip(indices, buf.shape):
            bad = E.Or(
                E.LT(ix, E.IntImm(0, ix.dtype), "bool"),
                E.GE(ix, E.IntImm(extent, ix.dtype), "bool"),
                "bool",
            )
            outside = bad if outside is None else E.Or(outside, bad, "bool")
        if outside is None:
            return N.NOP
        return N.IfThenElse(outside, self.rep.fail(OUT_OF_BOUNDS, buf, indices, kind=int(write)))

    def _flat(self, buf: N.Buffer, indices: tuple) -> E.PrimExpr:
        flat: E.PrimExpr | None = None
        for ix, stride in zip(indices, buf.strides):
            term = i64(ix) if stride == 1 else i64(ix) * E.IntImm(stride, "int64")
            flat = term if flat is None else flat + term
        return flat if flat is not None else E.IntImm(0, "int64")

    def _entry_is_other(self, entry: E.PrimExpr) -> E.PrimExpr:
        scale = E.IntImm(EPOCH_SCALE, "int64")
        same_epoch = E.EQ(E.FloorDiv(entry, scale, "int64"), self.epoch, "bool")
        other = E.NE(E.FloorMod(entry, scale, "int64"), self.thread, "bool")
        return E.And(same_epoch, other, "bool")

    def _mine(self) -> E.PrimExpr:
        return self.epoch * E.IntImm(EPOCH_SCALE, "int64") + self.thread

    def race_read(self, buf: N.Buffer, indices: tuple) -> N.Stmt:
        """A read of an element another thread wrote in this phase is a race; note the
        reader."""
        sh = self.shadows[buf]
        flat = E.Var("flat", "int64")
        w, r = E.Var("writer", "int64"), E.Var("reader", "int64")
        scale = E.IntImm(EPOCH_SCALE, "int64")
        who = E.FloorMod(w, scale, "int64")
        many = self.epoch * scale + E.IntImm(MANY_READERS, "int64")
        noted = E.Select(self._entry_is_other(r), many, self._mine(), "int64")
        body = N.seq(
            N.IfThenElse(
                self._entry_is_other(w),
                self.rep.fail(RACE, buf, indices, other=who, kind=READ_AFTER_WRITE),
            ),
            N.LetStmt(
                r,
                N.BufferLoad(sh.reader, (flat,), "int64"),
                N.BufferStore(sh.reader, noted, (flat,)),
            ),
        )
        load_w = N.LetStmt(w, N.BufferLoad(sh.writer, (flat,), "int64"), body)
        return N.LetStmt(flat, self._flat(buf, indices), load_w)

    def race_write(self, buf: N.Buffer, indices: tuple, value: E.Var) -> N.Stmt:
        """A write of a new value into an element another thread wrote or read in this
        phase is a race; note the writer."""
        sh = self.shadows[buf]
        changes = E.NE(N.BufferLoad(buf, indices, buf.dtype), value, "bool")
        flat = E.Var("flat", "int64")
        w, r = E.Var("writer", "int64"), E.Var("reader", "int64")
        scale = E.IntImm(EPOCH_SCALE, "int64")
        body = N.seq(
            N.IfThenElse(
                E.And(self._entry_is_other(w), changes, "bool"),
                self.rep.fail(
                    RACE, buf, indices, other=E.FloorMod(w, scale, "int64"), kind=WRITE_AFTER_WRITE
                ),
            ),
            N.IfThenElse(
                E.And(self._entry_is_other(r), changes, "bool"),
                self.rep.fail(
                    RACE, buf, indices, other=E.FloorMod(r, scale, "int64"), kind=WRITE_AFTER_READ
                ),
            ),
            N.BufferStore(sh.writer, self._mine(), (flat,)),
        )
        loads = N.LetStmt(
            w,
            N.BufferLoad(sh.writer, (flat,), "int64"),
            N.LetStmt(r, N.BufferLoad(sh.reader, (flat,), "int64"), body),
        )
        return N.LetStmt(flat, self._flat(buf, indices), loads)
