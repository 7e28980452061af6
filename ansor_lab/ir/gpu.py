"""GPU vocabulary of the loop IR: thread tags and the block barrier.

A CUDA-scheduled program stays ordinary loop IR (the "kernel form"):

- a loop bound to a hardware index is ``For(kind="thread_binding", thread_tag=TAG)`` with
  ``min == 0``; its body runs for the threads whose index ``TAG`` is below the loop's
  extent, with the loop variable equal to that index (a loop shorter than the launch
  extent of its tag is therefore guarded, never wrapped);
- ``"vthread"`` loops are virtual threads: they run serially inside one thread;
- ``Allocate`` of a ``"shared"`` buffer belongs to a thread block (one copy per block),
  of a ``"local"`` buffer to one thread;
- :func:`barrier` is ``__syncthreads()``: every thread of the block waits there.

``codegen.kernel_form`` cuts such a function into kernels (launch extents, parameters,
shared buffers); the CUDA C generator and the GPU emulator both read that form.
"""

from __future__ import annotations

from ..dsl import expr as E
from . import nodes as N

BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
THREAD_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
VTHREAD_TAGS = ("vthread", "vthread.x", "vthread.y", "vthread.z")
#: every tag a loop may be bound to
ALL_TAGS = BLOCK_TAGS + THREAD_TAGS + VTHREAD_TAGS

#: the intrinsic name of the block barrier (TVM's ``tvm_storage_sync("shared")``)
BARRIER_OP = "tvm_storage_sync"


def barrier() -> N.Evaluate:
    """The statement ``__syncthreads()`` (TVM prints ``T.tvm_storage_sync("shared")``)."""
    return N.Evaluate(E.Call(BARRIER_OP, (), "int32"))


def is_barrier(s: object) -> bool:
    """True for the statement made by :func:`barrier`."""
    return isinstance(s, N.Evaluate) and isinstance(s.value, E.Call) and s.value.op == BARRIER_OP


def is_block_tag(tag: str) -> bool:
    """True for ``blockIdx.*``."""
    return tag in BLOCK_TAGS


def is_thread_tag(tag: str) -> bool:
    """True for ``threadIdx.*``."""
    return tag in THREAD_TAGS


def is_vthread_tag(tag: str) -> bool:
    """True for virtual-thread tags (run serially inside a thread)."""
    return tag in VTHREAD_TAGS
