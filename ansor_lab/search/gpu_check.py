"""Is a sampled GPU program valid on the target? The search's filter for GPU candidates.

Random annotation draws each axis's tiles independently, so some programs ask for more
threads, virtual threads or shared memory per block than the target has. Ansor drops
them before measuring (TVM's ``verify_gpu_code``); here every candidate of a CUDA task is
lowered, cut into kernels (``codegen.kernel_form.split_kernels``) and checked against
the task's ``HardwareParams``. A candidate that fails is dropped and counted by the
policy (``SketchPolicy.invalid_counts``), never measured and never a crash.
"""

from __future__ import annotations

import math
from typing import Any

from ..codegen.gpu_verify import check_gpu_program
from ..codegen.kernel_form import KernelProgram, split_kernels
from ..dsl.dtypes import itemsize
from ..errors import AnsorLabError
from ..ir import gpu, nodes as N
from ..ir.visitor import walk_stmts
from ..schedule.loop_kinds import ThreadBinding
from ..schedule.lower import lower_state
from ..schedule.state import derive_extents

#: CUDA's launch limits on the grid (x, y, z).
MAX_GRID = (2**31 - 1, 65535, 65535)
#: CUDA's limits on the block's extents (x, y, z).
MAX_BLOCK = (1024, 1024, 64)


def vthread_extent(kernel_body: N.Stmt) -> int:
    """Product of the extents of the distinct virtual-thread tags in a (lowered) kernel."""
    extents: dict[str, int] = {}
    for s in walk_stmts(kernel_body):
        if isinstance(s, N.For) and s.kind == "thread_binding" and gpu.is_vthread_tag(s.thread_tag):
            ext = s.extent.value if hasattr(s.extent, "value") else 1
            extents[s.thread_tag] = max(extents.get(s.thread_tag, 1), int(ext))
    total = 1
    for e in extents.values():
        total *= e
    return total


def local_bytes(kernel_body: N.Stmt) -> int:
    """Bytes of "local" buffers one thread allocates (its registers, at best)."""
    total = 0
    for s in walk_stmts(kernel_body):
        if isinstance(s, N.Allocate) and s.buffer.scope == "local":
            total += s.buffer.nbytes
    return total


def program_problems(func: N.PrimFunc, hw: Any) -> tuple[list[str], KernelProgram | None]:
    """What keeps the lowered ``func`` from running on ``hw`` (empty when nothing), and
    its kernel form when it has one."""
    try:
        program = split_kernels(func)
    except AnsorLabError as err:
        return [f"kernels: {err}"], None
    problems = []
    roots = func.body
    while isinstance(roots, N.Allocate) and roots.buffer.scope == "global":
        roots = roots.body
    # the kernels' bodies have their vthreads made serial: read them off the roots the
    # kernels were cut from (a kernel is named by the stages it runs)
    vthreads = {
        _stage_names(root): vthread_extent(root)
        for root in (roots.seq if isinstance(roots, N.SeqStmt) else (roots,))
    }
    for k in program.kernels:
        where = f"{k.name} ({', '.join(k.stage_names)})"
        if k.threads_per_block > hw.max_threads_per_block:
            problems.append(
                f"{where}: {k.threads_per_block} threads per block > {hw.max_threads_per_block}"
            )
        for axis, (b, limit) in enumerate(zip(k.block, MAX_BLOCK)):
            if b > limit:
                problems.append(f"{where}: threadIdx.{'xyz'[axis]} extent {b} > {limit}")
        for axis, (g, limit) in enumerate(zip(k.grid, MAX_GRID)):
            if g > limit:
                problems.append(f"{where}: blockIdx.{'xyz'[axis]} extent {g} > {limit}")
        if k.shared_bytes() > hw.max_shared_memory_per_block:
            problems.append(
                f"{where}: {k.shared_bytes()} shared bytes per block > "
                f"{hw.max_shared_memory_per_block}"
            )
        vt = vthreads.get(tuple(k.stage_names), 1)
        if vt > hw.max_vthread_extent:
            problems.append(f"{where}: {vt} virtual threads > {hw.max_vthread_extent}")
        local = local_bytes(k.body)
        if local * k.threads_per_block > hw.max_local_memory_per_block:
            problems.append(
                f"{where}: {local} local bytes per thread x {k.threads_per_block} threads > "
                f"{hw.max_local_memory_per_block}"
            )
        inner_global = [
            s.buffer.name
            for s in walk_stmts(k.body)
            if isinstance(s, N.Allocate) and s.buffer.scope == "global"
        ]
        if inner_global:
            problems.append(
                f"{where}: global buffers {inner_global} allocated inside the kernel "
                "(a kernel cannot allocate global memory)"
            )
    return problems, program


def _stage_names(stmt: N.Stmt) -> tuple:
    return tuple(s.name for s in walk_stmts(stmt) if isinstance(s, N.Block))


def state_problems(state: Any, hw: Any) -> list[str]:
    """The limits a schedule state breaks, read from the state alone (no lowering): per
    kernel (a root stage and what is computed inside it) the threads and virtual threads
    of its bound loops and the bytes of its shared stages (their regions, which the state
    keeps relaxed over the block's threads). The search's cheap first filter: a uniform
    tile draw breaks a limit often (most draws of a large convolution ask for too much
    shared memory), and lowering each of them would cost more than the rest of the search.
    """
    kernels: dict[str, dict] = {}
    for st in state.compute_stages():
        if st.is_inlined:
            continue
        root = st
        while not root.is_root:
            root = state.stage(root.attach.block)
        k = kernels.setdefault(root.name, {"tags": {}, "shared": 0})
        extents = derive_extents(st)
        for leaf, ann in st.annotations.items():
            if isinstance(ann, ThreadBinding):
                k["tags"][ann.tag] = max(k["tags"].get(ann.tag, 1), extents[leaf])
        if st.scope == "shared":
            k["shared"] += math.prod(it.extent for it in st.root if it.kind == "spatial") * (
                itemsize(st.op.dtype)
            )
    problems = []
    for name, k in kernels.items():
        tags = k["tags"]
        threads = math.prod(v for t, v in tags.items() if gpu.is_thread_tag(t))
        vthreads = math.prod(v for t, v in tags.items() if gpu.is_vthread_tag(t))
        if threads > hw.max_threads_per_block:
            problems.append(f"{name}: {threads} threads per block > {hw.max_threads_per_block}")
        if vthreads > hw.max_vthread_extent:
            problems.append(f"{name}: {vthreads} virtual threads > {hw.max_vthread_extent}")
        if k["shared"] > hw.max_shared_memory_per_block:
            problems.append(
                f"{name}: {k['shared']} shared bytes per block > {hw.max_shared_memory_per_block}"
            )
    return problems


def check_state(
    state: Any, args: list, hw: Any, target: Any = None
) -> tuple[N.PrimFunc | None, list[str]]:
    """Lower a schedule state and check it (see ``program_problems``), then with the
    lowering's own GPU legality checks (``codegen.gpu_verify``: a tag bound twice, a
    reduction raced across threads, divergent barriers...) for ``target``: (func, problems).
    """
    problems = state_problems(state, hw)
    if problems:
        return None, problems
    try:
        func = lower_state(state, args)
    except (AnsorLabError, RecursionError) as err:
        return None, [f"lowering: {err}"]
    problems, _ = program_problems(func, hw)
    if not problems:
        try:
            check_gpu_program(func, target)
        except AnsorLabError as err:
            problems.append(f"verify: {err}")
    return func, problems
