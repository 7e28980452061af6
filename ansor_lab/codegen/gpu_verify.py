"""GPU legality of a CUDA-scheduled function: what a GPU could not run as written.

``check_gpu_program(func, target)`` raises ``errors.GPUScheduleError`` saying why and
what to write instead for:

- a stage not bound to GPU indices (``kernel_form.split_kernels`` finds it);
- more threads per block than ``target.max_threads_per_block`` (the product of the
  threadIdx launch extents);
- more static shared memory per block than ``target.max_shared_memory_per_block``;
- a shared buffer allocated outside every kernel (it would belong to no block; at the
  root of a kernel without blockIdx loops, launched as one block, it is that block's);
- a thread axis bound twice on one path (two nested loops of one stage bound to the
  same tag; a stage computed inside another stage's thread loop may bind its own loop to
  the same tag: that is cooperative fetching, the loop variable *is* the thread index);
- a cross-thread reduction on fewer threads than its kernel launches (the others would
  skip its barriers);
- a reduction raced across threads: a statement accumulating into a shared or global
  element (``X[i] = X[i] + ...``) inside a threadIdx loop whose index does not pick the
  element, so every thread of that loop adds into the same one at once (bind a reduction
  loop to threads only through the cross-thread reduction, or rfactor first).

It returns the ``KernelProgram`` so callers (``build``, the tuner's builder) need not cut
the function again.
"""

from __future__ import annotations

from typing import Any

from ..dsl import expr as E
from ..errors import GPUScheduleError
from ..ir import gpu, nodes as N
from ..ir.visitor import walk_stmts
from .kernel_form import KernelProgram, split_kernels
from .target import as_target


def check_gpu_program(func: N.PrimFunc, target: Any = None) -> KernelProgram:
    """Raise GPUScheduleError if ``func`` cannot run on ``target`` (a CUDA target)."""
    tgt = as_target(target if target is not None else "cuda")
    _check_shared_outside(func)
    program = split_kernels(func)
    for k in program.kernels:
        where = f"kernel {k.name} (stages {', '.join(k.stage_names) or '?'})"
        limit = tgt.max_threads_per_block or 1024
        if k.threads_per_block > limit:
            raise GPUScheduleError(
                f"{where} launches {k.threads_per_block} threads per block "
                f"(threadIdx extents {k.block[0]} x {k.block[1]} x {k.block[2]}), over the "
                f"target's max_threads_per_block {limit} ({tgt}): split the loops bound to "
                "threadIdx by smaller factors, or bind fewer of them"
            )
        shared_limit = tgt.max_shared_memory_per_block or 49152
        if k.shared_bytes() > shared_limit:
            sizes = ", ".join(f"{b.name} {tuple(b.shape)}" for b in k.shared)
            raise GPUScheduleError(
                f"{where} needs {k.shared_bytes()} bytes of shared memory per block ({sizes}), "
                f"over the target's max_shared_memory_per_block {shared_limit}: make the "
                "shared tiles smaller (smaller block tiles or reduction tile), or cache "
                "into 'local' instead"
            )
        _check_paths(k.body, where)
        _check_cross_thread(k, where)
    return program


def _check_cross_thread(k, where: str) -> None:
    """A cross-thread reduction must run on every thread its kernel launches on its tag."""
    for blk in walk_stmts(k.body):
        if not isinstance(blk, N.Block):
            continue
        names = dict(blk.annotations).get("cross_thread_reduction")
        if not names:
            continue
        for s in walk_stmts(blk.body):
            if not (isinstance(s, N.For) and s.loop_var.name in names.split(",")):
                continue
            launched = k.extent(s.thread_tag)
            if isinstance(s.extent, E.IntImm) and s.extent.value != launched:
                raise GPUScheduleError(
                    f"{where}: the cross-thread reduction of stage {blk.name!r} runs on "
                    f"{s.extent.value} of the {launched} {s.thread_tag} threads the kernel "
                    "launches; the others would skip its barriers. Split its reduction "
                    f"loop by {launched} (the same thread count as the other stages of the "
                    "kernel)"
                )


def _check_shared_outside(func: N.PrimFunc) -> None:
    def visit(s: N.Stmt, in_kernel: bool) -> None:
        if isinstance(s, N.For) and s.kind == "thread_binding":
            return  # inside a kernel from here on
        if (
            isinstance(s, N.Allocate)
            and s.buffer.scope.startswith("shared")
            # a kernel with no blockIdx loop (a reduction to a scalar over threadIdx) is
            # launched as one block: the buffer allocated at its root is that block's
            and any(_is_block_loop(x) for x in walk_stmts(s.body))
        ):
            raise GPUScheduleError(
                f"shared buffer {s.buffer.name!r} is allocated outside every kernel: shared "
                "memory belongs to one thread block. compute_at its stage under the loops "
                "bound to blockIdx (e.g. at the consumer's reduction loop), or use 'global'"
            )
        for name in ("body", "then_case", "else_case"):
            child = getattr(s, name, None)
            if isinstance(child, N.Stmt):
                visit(child, in_kernel)
        if isinstance(s, N.SeqStmt):
            for child in s.seq:
                visit(child, in_kernel)

    visit(func.body, False)


def _is_block_loop(s: N.Stmt) -> bool:
    return isinstance(s, N.For) and s.kind == "thread_binding" and gpu.is_block_tag(s.thread_tag)


def _check_paths(body: N.Stmt, where: str) -> None:
    """Tags bound twice within one stage, and accumulations raced across threads."""

    def visit(s: N.Stmt, stage: str, own: dict, threads: dict) -> None:
        if isinstance(s, N.Block):
            stage, own = s.name, {}
        if isinstance(s, N.For) and s.kind == "thread_binding":
            tag = s.thread_tag
            if tag in own:
                raise GPUScheduleError(
                    f"{where}: stage {stage!r} binds {tag} twice on one path (loops "
                    f"{own[tag]} and {s.loop_var.name}); a thread index can number one loop "
                    "of a stage: fuse the two loops and bind the fused loop, or bind the "
                    "other one to another axis (threadIdx.y, vthread)"
                )
            own = {**own, tag: s.loop_var.name}
            if gpu.is_thread_tag(tag) and isinstance(s.extent, E.IntImm) and s.extent.value > 1:
                threads = {**threads, tag: threads.get(tag, frozenset()) | {s.loop_var}}
        if isinstance(s, N.BufferStore) and s.buffer.scope != "local" and threads:
            _check_race(s, stage, threads, where)
        for name in ("body", "then_case", "else_case"):
            child = getattr(s, name, None)
            if isinstance(child, N.Stmt):
                visit(child, stage, own, threads)
        if isinstance(s, N.SeqStmt):
            for child in s.seq:
                visit(child, stage, own, threads)

    visit(body, "", {}, {})


def _check_race(s: N.BufferStore, stage: str, threads: dict, where: str) -> None:
    reads_itself = any(
        isinstance(n, N.BufferLoad)
        and n.buffer == s.buffer
        and len(n.indices) == len(s.indices)
        and all(E.structural_equal(a, b) for a, b in zip(n.indices, s.indices))
        for n in E.post_order(s.value)
    )
    if not reads_itself:
        return
    used: set = set()
    for i in s.indices:
        used |= E.free_vars(i)
    for tag, vars_ in threads.items():
        if not vars_ & used:
            raise GPUScheduleError(
                f"{where}: stage {stage!r} accumulates into {s.buffer.name}"
                f"[{', '.join(map(str, s.indices))}] inside a loop bound to {tag} that does "
                f"not pick the element: all {tag} threads add into it at once (a reduction "
                "raced across threads). Bind a spatial loop to the thread instead, or bind "
                "the reduction loop itself to threadIdx (lowered as a cross-thread "
                "reduction), e.g. after rfactor"
            )
