"""A kernel's body as the program one thread runs (SPMD form).

In the kernel form (``ir.gpu``) a loop bound to ``TAG`` is not a loop: each thread runs
its body when its index ``TAG`` is below the loop's extent, with the loop variable equal
to that index. ``to_spmd`` rewrites a kernel body into that per-thread program over six
canonical variables (``blockIdx.x`` ... ``threadIdx.z``):

- a bound loop becomes its body with the loop variable replaced by the canonical index,
  guarded by ``if index < extent`` when the extent is below the launch extent;
- shared ``Allocate``s are taken out (the emulator allocates one copy per block around
  the whole kernel: blocks run one after another on a CPU thread);
- with ``check``, vectorized loops become serial (each access is then checked on its own;
  the result is the same) and any ``parallel`` loop is serial (a GPU thread is serial).

A guard that hides a barrier from some threads of every block is a divergent barrier:
``GPUBarrierError`` names the first thread that would not reach it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...dsl import expr as E
from ...errors import GPUBarrierError
from ...ir import gpu, nodes as N
from ...ir.visitor import IRMutator, walk_stmts


@dataclass(frozen=True)
class Indices:
    """The canonical block and thread index variables of one kernel."""

    block: tuple  # (bx, by, bz) Vars
    thread: tuple  # (tx, ty, tz) Vars
    grid: tuple
    launch: tuple  # threads per block along x, y, z

    @staticmethod
    def make(grid: tuple, block: tuple) -> Indices:
        """Fresh variables for a launch of ``grid`` blocks of ``block`` threads."""
        return Indices(
            tuple(E.Var(f"blockIdx_{a}", "int32") for a in "xyz"),
            tuple(E.Var(f"threadIdx_{a}", "int32") for a in "xyz"),
            tuple(grid),
            tuple(block),
        )

    @property
    def threads(self) -> int:
        """Threads per block."""
        return self.launch[0] * self.launch[1] * self.launch[2]

    def thread_linear(self) -> E.PrimExpr:
        """``tx + bx_dim * (ty + by_dim * tz)`` (CUDA's linear thread number)."""
        return _linear(self.thread, self.launch)

    def block_linear(self) -> E.PrimExpr:
        """The linear block number."""
        return _linear(self.block, self.grid)

    def var_of(self, tag: str) -> E.Var:
        """The canonical variable of a tag."""
        axis = "xyz".index(tag[-1])
        return (self.block if gpu.is_block_tag(tag) else self.thread)[axis]

    def launch_of(self, tag: str) -> int:
        """The launch extent of a tag."""
        axis = "xyz".index(tag[-1])
        return (self.grid if gpu.is_block_tag(tag) else self.launch)[axis]


def _linear(vars3: tuple, dims: tuple) -> E.PrimExpr:
    # ((z * dy) + y) * dx + x, leaving out the axes of extent 1 (their index is 0)
    out = None
    for axis in (2, 1, 0):
        if dims[axis] == 1 and axis != 0:
            continue
        out = vars3[axis] if out is None else out * dims[axis] + vars3[axis]
    return out


def unlinear(n: int, dims: tuple) -> tuple:
    """(x, y, z) of linear number ``n`` in ``dims``."""
    x = n % dims[0]
    y = (n // dims[0]) % dims[1]
    z = n // (dims[0] * dims[1])
    return (x, y, z)


def has_barrier(s: N.Stmt) -> bool:
    """True when ``s`` holds a barrier."""
    return any(gpu.is_barrier(x) for x in walk_stmts(s))


class _ToSPMD(IRMutator):
    def __init__(self, idx: Indices, kernel: str, check: bool) -> None:
        self.idx = idx
        self.kernel = kernel
        self.check = check
        self.vmap: dict = {}
        self.shared: list = []

    def expr_Var(self, e: E.Var) -> E.PrimExpr:
        return self.vmap.get(e, e)

    def stmt_For(self, s: N.For) -> N.Stmt:
        if s.kind != "thread_binding":
            body = self.visit_stmt(s.body)
            kind = s.kind
            if kind == "parallel" or (self.check and kind == "vectorized"):
                kind = "serial"
            return replace(
                s,
                min=self.visit_expr(s.min),
                extent=self.visit_expr(s.extent),
                body=body,
                kind=kind,
            )
        var = self.idx.var_of(s.thread_tag)
        self.vmap[s.loop_var] = var
        body = self.visit_stmt(s.body)
        del self.vmap[s.loop_var]
        extent = s.extent.value  # split_kernels checked: constant, min 0
        launch = self.idx.launch_of(s.thread_tag)
        if extent >= launch:
            return body
        if gpu.is_thread_tag(s.thread_tag) and has_barrier(s.body):
            axis = "xyz".index(s.thread_tag[-1])
            thread = tuple(extent if a == axis else 0 for a in range(3))
            raise GPUBarrierError(
                f"kernel {self.kernel!r}: a barrier (__syncthreads) inside loop "
                f"{s.loop_var.name!r} bound to {s.thread_tag} with extent {extent} is not "
                f"reached by threads with {s.thread_tag} >= {extent} (the block has "
                f"{launch}), e.g. thread {thread}, in every block; a divergent barrier "
                "deadlocks or corrupts a GPU. Move the barrier out of the guarded loop, or "
                "make the loop as long as the block",
                kernel=self.kernel,
                block=None,
                thread=thread,
            )
        return N.IfThenElse(E.LT(var, E.IntImm(extent, "int32"), "bool"), body)

    def stmt_Allocate(self, s: N.Allocate) -> N.Stmt:
        if s.buffer.scope == "shared":
            self.shared.append(s.buffer)
            return self.visit_stmt(s.body)
        return self.default_stmt(s)


def to_spmd(body: N.Stmt, idx: Indices, kernel: str, check: bool) -> tuple[N.Stmt, list]:
    """(per-thread program, shared buffers taken out of it) of one kernel body."""
    m = _ToSPMD(idx, kernel, check)
    out = m.visit_stmt(body)
    return out, m.shared
