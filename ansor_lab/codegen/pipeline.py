"""The pass pipeline: a lowered PrimFunc and a target -> the form a code generator receives.

``prepare`` is the one path from lowering to code generation: ``tvm.build`` and the
tuner's builder workers both call it, so the tuner measures exactly what ``build``
returns. Lowering has already simplified the function; ``prepare`` then

1. verifies it for the target (once: ``build`` lowers without the target-free check)
   and refuses an access that is provably out of bounds (``ir.bound_check``),
2. for the CPU, splits a serial loop where its guards are decided (``ir.loop_partition``:
   an inlined padding's tests leave the middle iterations), then applies
   ``pragma_auto_unroll_max_step`` (loops become ``T.unroll``),
3. legalises loops for the LLVM backend: every vectorized loop is annotated with how it
   will be emitted (``"llvm.vectorize"``: its width, its chunks, and for
   each memory access whether it is a vector (``contiguous``), a broadcast ``scalar`` or a
   ``gather``/scatter, and whether it is ``masked``), and every unrolled loop with whether
   it is unrolled (``"llvm.unroll"``).

The annotations are computed by the same analysis the code generator uses
(``codegen.access``, ``transpose_copy.match``). ``vector_view`` (``codegen.vector_form``)
turns the prepared function into what will run: every SIMD loop as its vector statements
(``Ramp`` / ``Broadcast`` accesses, one per chunk, lane masks as vector
conditions), the other marks kept; ``mod.get_source("tir")`` prints it. The generator
still receives ``prepare``'s loop form; the tests hold the two to each other (lanes,
chunks, the kind of every access). ``tvm.lower`` stays the schedule's view, before
legalisation.

Unrolling is visible without marks where it is a loop kind: ``unroll_by_pragma`` makes
the loops it unrolls ``T.unroll`` loops; the ``"llvm.unroll"`` mark then says whether
the generator really unrolls them (``x4``) or keeps a loop (bounds not constant, or an
extent over ``MAX_UNROLL``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..ir import nodes as N
from ..ir.bound_check import check_bounds
from ..ir.inline_lets import inline_index_lets
from ..ir.loop_partition import partition_guarded_loops
from ..ir.passes import unroll_by_pragma, widest_store_bytes
from ..ir.private_alloc import privatize_parallel_allocs
from ..ir.storage_sync import insert_barriers
from ..ir.verify import verify
from ..ir.visitor import IRMutator
from . import access as A, transpose_copy
from .gpu_verify import check_gpu_program
from .intrin_lowering import apply_lowering_rules
from .kept_results import keep_unread_results
from .llvm_types import MAX_UNROLL
from .target import Target, as_target
from .vector_form import vector_view

__all__ = [
    "UNROLL_KEY",
    "VECTORIZE_KEY",
    "VectorPlan",
    "prepare",
    "vector_plan",
    "vector_view",
]

#: Annotation key of a vectorized loop's plan, and of an unrolled loop's.
VECTORIZE_KEY = "llvm.vectorize"
UNROLL_KEY = "llvm.unroll"


def prepare(
    func: N.PrimFunc, target: Any = None, *, bounds: bool = True, partition: bool = True
) -> N.PrimFunc:
    """``func`` (lowered) in the form the code generator for ``target`` receives.

    ``bounds=False`` skips the refusal of provably out-of-bounds accesses, for a caller
    whose program checks every access itself at run time (the GPU emulator's check mode,
    which reports the block and thread of the access). ``partition=False`` skips loop
    partitioning, which only makes the code faster: for a program compiled to be checked
    once (the emulator's check mode), where it cost a third of the compile time.
    """
    tgt: Target = as_target(target)
    func = apply_lowering_rules(func, tgt.kind)
    verify(func, tgt.kind)
    if bounds:
        check_bounds(func)
    func = inline_index_lets(func)
    if tgt.kind == "cuda":
        # idempotent on what lowering made; puts the barriers into hand-written kernels
        func = insert_barriers(func)
        check_gpu_program(func, tgt)
    if tgt.kind == "llvm":
        func = privatize_parallel_allocs(func)  # a thread's scratch is its own
    # unrolled first: the partitioner splits an unrolled loop at any depth (its iterations
    # are copies already), so a padded tile's guard on its unrolled vectors is decided too
    func = unroll_by_pragma(func, tgt.vector_bytes)
    if tgt.kind == "llvm" and partition:
        func = partition_guarded_loops(func)
    if tgt.kind == "llvm":
        func = keep_unread_results(func)
        func = func.with_body(_Legalize(tgt.vector_bytes).visit_stmt(func.body))
    return func


@dataclass(frozen=True)
class VectorPlan:
    """How a vectorized loop is emitted: SIMD of ``lanes`` in ``chunks``, or not."""

    lanes: int | None
    chunks: tuple = ()
    accesses: tuple = ()
    fallback: str = ""  # why it stays a scalar loop, or "transposed copy LxL"

    def __str__(self) -> str:
        if self.fallback:
            return self.fallback
        widths = "+".join(str(n) for _, n in self.chunks)
        head = f"x{self.lanes}" + (f" ({widths})" if len(self.chunks) > 1 else "")
        return head + ": " + ", ".join(str(a) for a in self.accesses)


def vector_plan(loop: N.For, vector_bytes: int = 0) -> VectorPlan:
    """The plan of one vectorized loop (not part of a transposed copy); with the target's
    ``vector_bytes``, its row is cut at the register's width (``access.vector_chunks``)."""
    extent = A.const_int(loop.extent)
    reason = A.not_vectorizable(loop, extent)
    if reason is not None:
        return VectorPlan(extent, fallback=f"scalar loop ({reason})")
    chunks = tuple(A.vector_chunks(extent, _register_lanes(loop, vector_bytes)))
    walker = A.AccessWalker(loop.loop_var, lanes=max(n for _, n in chunks))
    walker.stmt(loop.body, False)
    return VectorPlan(extent, chunks, tuple(walker.found))


def _register_lanes(loop: N.For, vector_bytes: int) -> int:
    """Elements of the widest type ``loop`` stores that one vector register holds (no
    limit without ``vector_bytes``)."""
    if vector_bytes <= 0:
        return A.MAX_WHOLE_LANES
    return max(1, vector_bytes // widest_store_bytes(loop.body))


class _Legalize(IRMutator):
    """Annotates vectorized and unrolled loops with how the LLVM generator emits them."""

    def __init__(self, vector_bytes: int = 0) -> None:
        self.vector_bytes = vector_bytes

    def stmt_For(self, s: N.For) -> N.Stmt:
        if s.kind in ("serial", "unrolled"):
            copy = transpose_copy.match(s, A.flat_index)
            if copy is not None:  # the generator emits the whole nest as one copy
                mark = f"transposed copy {copy.lanes}x{copy.lanes}"
                return _mark(s, _mark_inner(s, copy.vector, VECTORIZE_KEY, mark))
        if s.kind == "vectorized":
            # the body is emitted lane-wise (or, on fallback, as a plain loop nest)
            plan = vector_plan(s, self.vector_bytes)
            body = self.visit_stmt(s.body) if plan.fallback else s.body
            return _with(s, body, VECTORIZE_KEY, str(plan))
        body = self.visit_stmt(s.body)
        if s.kind == "unrolled":
            return _with(s, body, UNROLL_KEY, _unroll_mark(s))
        return s if body is s.body else replace(s, body=body)


def _unroll_mark(s: N.For) -> str:
    extent, lo = A.const_int(s.extent), A.const_int(s.min)
    if extent is None or lo is None:
        return "kept as a loop (bounds not constant)"
    if extent > MAX_UNROLL:
        return f"kept as a loop (extent {extent} > {MAX_UNROLL})"
    return f"x{extent}"


def _with(s: N.For, body: N.Stmt, key: str, value: str) -> N.For:
    notes = tuple(sorted({**dict(s.annotations), key: value}.items()))
    return replace(s, body=body, annotations=notes)


def _mark(s: N.For, body: N.Stmt) -> N.For:
    return s if body is s.body else replace(s, body=body)


def _mark_inner(s: N.For, target: N.For, key: str, value: str) -> N.Stmt:
    """``s``'s body with loop ``target`` (somewhere in the perfect nest) annotated."""
    body = s.body
    if body is target:
        return _with(target, target.body, key, value)
    return _mark(body, _mark_inner(body, target, key, value))
