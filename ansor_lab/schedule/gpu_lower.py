"""The GPU steps of lowering: shared buffers at block level, barriers, the launch check.

A "shared" stage computed under thread loops is sized by bound inference for the whole
block (``BoundInference.thread_ranges``); here its ``Allocate`` moves out of the thread
loops to block level (just outside the outermost threadIdx/vthread loop around it,
inside the blockIdx loops), so that one buffer serves every thread of the block, and
``ir.storage_sync`` puts the barriers in. "local" buffers stay where they are: one per
thread.
"""

from __future__ import annotations

from ..ir import gpu, nodes as N
from ..ir.storage_sync import SHARED_SCOPES, insert_barriers
from ..ir.visitor import IRMutator, walk_stmts


def is_gpu_func(func: N.PrimFunc) -> bool:
    """Whether ``func`` has loops bound to GPU indices (a CUDA-scheduled program)."""
    return any(isinstance(s, N.For) and s.kind == "thread_binding" for s in walk_stmts(func.body))


class _Strip(IRMutator):
    """Removes the shared Allocates below a statement, keeping their buffers in order."""

    def __init__(self) -> None:
        self.buffers: list = []

    def stmt_Allocate(self, s: N.Allocate) -> N.Stmt:
        body = self.visit_stmt(s.body)
        if s.buffer.scope in SHARED_SCOPES:
            if s.buffer not in self.buffers:
                self.buffers.append(s.buffer)
            return body
        return s if body is s.body else N.Allocate(s.buffer, body)


class _Hoist(IRMutator):
    def stmt_For(self, s: N.For) -> N.Stmt:
        if s.kind == "thread_binding" and not gpu.is_block_tag(s.thread_tag):
            strip = _Strip()
            out = strip.visit_stmt(s)
            for buf in reversed(strip.buffers):
                out = N.Allocate(buf, out)
            return out
        return self.default_stmt(s)


def hoist_shared_allocations(func: N.PrimFunc) -> N.PrimFunc:
    """Shared buffers allocated inside thread loops move out to block level."""
    body = _Hoist().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


def lower_gpu(func: N.PrimFunc) -> N.PrimFunc:
    """The GPU form of a lowered function: block-level shared buffers, then barriers."""
    if not is_gpu_func(func):
        return func
    return insert_barriers(hoist_shared_allocations(func))
