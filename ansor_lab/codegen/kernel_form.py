"""Cut a CUDA-scheduled PrimFunc into kernels: the one form CUDA C and the emulator read.

The lowered function (see ``ir.gpu`` for the conventions) is host code that allocates
global temporaries and launches one kernel per root statement whose loops are bound to
GPU indices. ``split_kernels`` returns that launch sequence:

    main(A, B, C):
        B_tmp = T.alloc_buffer(...)           -> KernelProgram.temporaries
        for bx in T.thread_binding(..., "blockIdx.x"):   -> Kernel 0 (grid, block, body)
            ...
        for bx in T.thread_binding(..., "blockIdx.x"):   -> Kernel 1
            ...

A kernel's launch extent for a tag is the largest extent of any loop bound to it; a
shorter loop is guarded by its consumers (``if threadIdx.x < extent``). Virtual threads
(``vthread``) become serial loops here, as TVM's InjectVirtualThread makes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dsl import expr as E
from ..errors import GPUScheduleError
from ..ir import gpu, nodes as N
from ..ir.simplify import substitute_stmt
from ..ir.visitor import IRMutator, post_order_visit, walk_stmts


@dataclass(frozen=True)
class Kernel:
    """One ``__global__`` function and its launch configuration.

    ``grid`` and ``block`` are (x, y, z) extents; ``params`` are the global buffers it
    touches, in the order of the function's parameters then the temporaries; ``shared``
    the shared buffers allocated in it (one copy per block); ``body`` is loop IR whose
    thread-bound loops are read as described in ``ir.gpu``.
    """

    name: str
    grid: tuple
    block: tuple
    params: tuple
    shared: tuple
    body: N.Stmt
    stage_names: tuple = ()

    @property
    def threads_per_block(self) -> int:
        """Threads in one block."""
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def num_blocks(self) -> int:
        """Blocks in the grid."""
        return self.grid[0] * self.grid[1] * self.grid[2]

    def shared_bytes(self) -> int:
        """Static shared memory of one block, in bytes."""
        return sum(b.size * _dtype_bytes(b.dtype) for b in self.shared)

    def extent(self, tag: str) -> int:
        """The launch extent of ``tag`` ("blockIdx.x", "threadIdx.y"...)."""
        axis = "xyz".index(tag[-1])
        return (self.grid if gpu.is_block_tag(tag) else self.block)[axis]


@dataclass(frozen=True)
class KernelProgram:
    """The host side: global temporaries to allocate, then kernels launched in order."""

    func: N.PrimFunc
    temporaries: tuple
    kernels: tuple


def _dtype_bytes(dtype: str) -> int:
    if dtype == "bool":
        return 1
    digits = "".join(ch for ch in dtype if ch.isdigit())
    return max(1, int(digits or 32) // 8)


class _VThreadToSerial(IRMutator):
    def stmt_For(self, s: N.For) -> N.Stmt:
        s = self.default_stmt(s)
        if s.kind == "thread_binding" and gpu.is_vthread_tag(s.thread_tag):
            return N.For(s.loop_var, s.min, s.extent, "serial", s.body, "", s.annotations)
        return s


def _bound_loops(stmt: N.Stmt) -> list[N.For]:
    return [s for s in walk_stmts(stmt) if isinstance(s, N.For) and s.kind == "thread_binding"]


def _stage_names(stmt: N.Stmt) -> tuple:
    return tuple(s.name for s in walk_stmts(stmt) if isinstance(s, N.Block))


def _launch_extents(stmt: N.Stmt, where: str) -> tuple[tuple, tuple]:
    extents: dict[str, int] = {}
    for loop in _bound_loops(stmt):
        if not isinstance(loop.extent, E.IntImm) or not (
            isinstance(loop.min, E.IntImm) and loop.min.value == 0
        ):
            raise GPUScheduleError(
                f"{where}: loop {loop.loop_var.name} bound to {loop.thread_tag} must start at 0 "
                "and have a constant extent; split it by a constant factor before binding"
            )
        extents[loop.thread_tag] = max(extents.get(loop.thread_tag, 1), loop.extent.value)
    grid = tuple(extents.get(t, 1) for t in gpu.BLOCK_TAGS)
    block = tuple(extents.get(t, 1) for t in gpu.THREAD_TAGS)
    return grid, block


def _global_buffers(stmt: N.Stmt) -> set:
    used: set = set()

    def visit(node: object) -> None:
        if isinstance(node, (N.BufferLoad, N.BufferStore)):
            used.add(node.buffer)

    post_order_visit(stmt, visit)
    return {b for b in used if b.scope == "global"}


def _peel_temporaries(body: N.Stmt) -> tuple[list, N.Stmt]:
    temps = []
    while isinstance(body, N.Allocate) and body.buffer.scope == "global":
        temps.append(body.buffer)
        body = body.body
    return temps, body


def _shared_buffers(stmt: N.Stmt) -> tuple:
    return tuple(
        s.buffer
        for s in walk_stmts(stmt)
        if isinstance(s, N.Allocate) and s.buffer.scope == "shared"
    )


#: the most iterations of a host loop (a serial loop around bound loops, e.g. te.scan's
#: time loop) expanded into launches
MAX_HOST_ITERATIONS = 1024


def _host_roots(body: N.Stmt, temps: list) -> list[N.Stmt]:
    """The statements launched in order: ``body``'s root statements, with every serial
    loop that encloses other stages' bound loops run on the host, as TVM does (TVM's host code runs
    whatever lies outside the thread bindings): one launch sequence per iteration, the
    loop variable a constant in each (the steps of a ``te.scan`` see each other's
    writes, which threads of one kernel would not). Global buffers allocated in such a
    loop become temporaries."""
    if isinstance(body, N.SeqStmt):
        return [r for item in body.seq for r in _host_roots(item, temps)]
    if isinstance(body, N.Allocate) and body.buffer.scope == "global" and _bound_loops(body):
        temps.append(body.buffer)
        return _host_roots(body.body, temps)
    inner = body.body if isinstance(body, N.Block) and not body.axes else body
    if not (
        isinstance(inner, N.For)
        and inner.kind != "thread_binding"
        and _bound_loops(inner)
        # stages nested in the loop (a scan's cell): each iteration reads what the last
        # one wrote. One stage's own serial loop stays in its kernel, as before: its
        # iterations are independent per thread
        and any(isinstance(s, N.Block) for s in walk_stmts(inner.body))
    ):
        return [body]
    if not isinstance(inner.extent, E.IntImm) or not isinstance(inner.min, E.IntImm):
        raise GPUScheduleError(
            f"loop {inner.loop_var.name} runs on the host around GPU kernels and needs a "
            "constant extent"
        )
    if inner.extent.value > MAX_HOST_ITERATIONS:
        raise GPUScheduleError(
            f"loop {inner.loop_var.name} runs on the host around GPU kernels, one launch "
            f"sequence per iteration, and has {inner.extent.value} iterations (at most "
            f"{MAX_HOST_ITERATIONS}); bind it to GPU indices, or split the work so that "
            "fewer steps run one after another"
        )
    out: list[N.Stmt] = []
    for k in range(inner.extent.value):
        step = substitute_stmt(inner.body, {inner.loop_var: E.IntImm(inner.min.value + k)})
        for r in _host_roots(step, temps):
            out.append(N.Block(body.name, r) if inner is not body else r)
    return out


def split_kernels(func: N.PrimFunc) -> KernelProgram:
    """The launch sequence of a CUDA-scheduled function (see the module docstring).

    Raises GPUScheduleError for a root stage that is not bound to GPU indices (TVM's
    "Did you forget to bind?") or a bound loop without a constant extent.
    """
    temps, body = _peel_temporaries(func.body)
    body = _VThreadToSerial().visit_stmt(body)
    roots = _host_roots(body, temps)
    order = {b: i for i, b in enumerate(func.params)}
    order.update({b: len(func.params) + i for i, b in enumerate(temps)})
    kernels = []
    for root in roots:
        names = _stage_names(root)
        where = f"stage {names[0]!r}" if names else f"function {func.name!r}"
        if not _bound_loops(root):
            if not any(isinstance(s, N.BufferStore) for s in walk_stmts(root)):
                continue  # nothing to run (an empty statement)
            raise GPUScheduleError(
                f"{where} is not bound to GPU threads: a CUDA program runs every stage in a "
                "kernel. Bind its outer loops, e.g. sch.bind(i, 'blockIdx.x') and "
                "sch.bind(j, 'threadIdx.x') (te: s[C].bind(i, te.thread_axis('blockIdx.x')))"
            )
        grid, block = _launch_extents(root, where)
        params = tuple(sorted(_global_buffers(root), key=lambda b: order.get(b, 1 << 30)))
        kernels.append(
            Kernel(
                name=f"{func.name}_kernel{len(kernels)}",
                grid=grid,
                block=block,
                params=params,
                shared=_shared_buffers(root),
                body=root,
                stage_names=names,
            )
        )
    return KernelProgram(func, tuple(temps), tuple(kernels))
