"""The report an emulated program writes before it stops, and the error it becomes.

Check mode compiles each check as loop IR: when one fails, the program stores what it saw
into the ``report`` buffer (int64, ``REPORT_SIZE`` slots, see the ``SLOT_*`` numbers) and
stops with ``failures.REPORTED``; ``raise_report`` turns the buffer into the
``GPUEmulationError`` subclass it describes.
"""

from __future__ import annotations

import numpy as np

from ...dsl import expr as E
from ...errors import (
    GPUBarrierError,
    GPUEmulationError,
    GPUOutOfBoundsError,
    GPURaceError,
)
from ...ir import nodes as N
from .. import failures
from .spmd import Indices, unlinear

REPORT_SIZE = 32
MAX_DIMS = REPORT_SIZE - 8
SLOT_CODE, SLOT_KERNEL, SLOT_BLOCK, SLOT_THREAD = 0, 1, 2, 3
SLOT_BUFFER, SLOT_OTHER, SLOT_KIND, SLOT_NDIM, SLOT_INDEX = 4, 5, 6, 7, 8

OUT_OF_BOUNDS, RACE, BARRIER = 1, 2, 3
#: race kinds: what the reporting thread did / what another thread did before it
READ_AFTER_WRITE, WRITE_AFTER_WRITE, WRITE_AFTER_READ = 1, 2, 3
#: the shadow's "reader" when several threads read an element in one phase
MANY_READERS = 0xFFFF
#: shadow entries pack (epoch, thread) as epoch * EPOCH_SCALE + thread
EPOCH_SCALE = 0x10000


def report_buffer() -> N.Buffer:
    """A fresh report buffer (a parameter of the emulated program)."""
    return N.Buffer("__emulator_report", (REPORT_SIZE,), "int64")


def i64(e: E.PrimExpr | int) -> E.PrimExpr:
    """``e`` as an int64 expression."""
    if isinstance(e, int):
        return E.IntImm(e, "int64")
    return e if e.dtype == "int64" else E.Cast(e, "int64")


class Reporter:
    """Makes the statements that fill the report and stop (one per kernel)."""

    def __init__(self, report: N.Buffer, kernel_no: int, idx: Indices, buffers: list) -> None:
        self.report = report
        self.kernel_no = kernel_no
        self.idx = idx
        #: buffers by report number (shared across the kernels of a program)
        self.buffers = buffers

    def buffer_id(self, buf: N.Buffer) -> int:
        """The number of ``buf`` in the report."""
        for k, b in enumerate(self.buffers):
            if b is buf:
                return k
        self.buffers.append(buf)
        return len(self.buffers) - 1

    def fail(
        self,
        code: int,
        buf: N.Buffer | None = None,
        indices: tuple = (),
        other: E.PrimExpr | int = -1,
        kind: int = 0,
    ) -> N.Stmt:
        """Fill the report (the current block and thread) and stop."""
        slots = {
            SLOT_CODE: i64(code),
            SLOT_KERNEL: i64(self.kernel_no),
            SLOT_BLOCK: i64(self.idx.block_linear()),
            SLOT_THREAD: i64(self.idx.thread_linear()),
            SLOT_BUFFER: i64(-1 if buf is None else self.buffer_id(buf)),
            SLOT_OTHER: i64(other),
            SLOT_KIND: i64(kind),
            SLOT_NDIM: i64(min(len(indices), MAX_DIMS)),
        }
        for d, ix in enumerate(indices[:MAX_DIMS]):
            slots[SLOT_INDEX + d] = i64(ix)
        stores = [N.BufferStore(self.report, v, (E.IntImm(k, "int32"),)) for k, v in slots.items()]
        stores.append(N.Evaluate(E.Call(failures.FAIL_OP, (), "int32")))
        return N.seq(*stores)


def raise_report(report: np.ndarray, kernels: tuple, buffers: list) -> None:
    """Raise the error the report describes (called after a run returned REPORTED)."""
    code = int(report[SLOT_CODE])
    kernel = kernels[int(report[SLOT_KERNEL])]
    block = unlinear(int(report[SLOT_BLOCK]), kernel.grid)
    thread = unlinear(int(report[SLOT_THREAD]), kernel.block)
    nb = int(report[SLOT_BUFFER])
    buf = buffers[nb] if 0 <= nb < len(buffers) else None
    index = tuple(int(report[SLOT_INDEX + d]) for d in range(int(report[SLOT_NDIM])))
    where = f"kernel {kernel.name!r}, block {block}, thread {thread}"
    info = dict(kernel=kernel.name, block=block, thread=thread)
    if code == OUT_OF_BOUNDS:
        kind = "write" if int(report[SLOT_KIND]) else "read"
        raise GPUOutOfBoundsError(
            f"{where}: out-of-bounds {kind} of {buf.scope} buffer {buf.name!r} (shape "
            f"{tuple(buf.shape)}) at index {index}: a GPU would fault with an illegal "
            "address or read garbage; fix the index, guard the access (te.if_then_else), "
            "or make the loop bound to threads no longer than the data",
            buffer=buf.name,
            index=index,
            **info,
        )
    if code == RACE:
        other_n = int(report[SLOT_OTHER])
        other = (
            "several other threads"
            if other_n == MANY_READERS
            else f"thread {unlinear(other_n, kernel.block)}"
        )
        what = {
            READ_AFTER_WRITE: f"reads it after {other} wrote it",
            WRITE_AFTER_WRITE: f"writes another value into it after {other} wrote it",
            WRITE_AFTER_READ: f"writes another value into it after {other} read it",
        }[int(report[SLOT_KIND])]
        raise GPURaceError(
            f"{where}: shared-memory race on {buf.name}{list(index)}: this thread {what} "
            "with no barrier (__syncthreads) between them, so the result depends on the "
            "order threads run in; insert a barrier between the write and the other "
            "threads' accesses, or give each thread its own elements",
            buffer=buf.name,
            index=index,
            **info,
        )
    if code == BARRIER:
        raise GPUBarrierError(
            f"{where}: a barrier (__syncthreads) is not reached by every thread of the "
            "block: this thread evaluates the bound or condition of the loop/if around it "
            "differently from thread (0, 0, 0) (a divergent barrier deadlocks or corrupts "
            "a GPU); make that loop or condition the same for every thread of a block",
            **info,
        )
    raise GPUEmulationError(f"{where}: unknown emulator report code {code}", **info)
