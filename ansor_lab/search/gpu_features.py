"""GPU terms of the cost model's features, for programs of CUDA tasks.

A CUDA task's feature vector is the CPU vector of ``features.program_features`` (every
store's computation, loops and accesses: unchanged, the CPU tasks' vectors stay exactly
as they were) followed by ``GPU_FEATURE_NAMES``, read from the program's kernel form
(``codegen.kernel_form``): per program the number of kernels, then for the kernel doing
the most work and as the work-weighted mean over kernels:

* launch shape: threads per block, blocks, warps per block, whether the block is a whole
  number of warps, blocks that fit on one SM by threads (an occupancy proxy);
* memory: shared bytes per block, local (register) bytes per thread, virtual threads,
  barriers, the longest vectorized loop (float2 / float4 fetches), the unroll budget;
* global traffic: bytes each thread loads and stores, and how coalesced the accesses are:
  the stride of each global access in ``threadIdx.x`` (consecutive threads reading
  consecutive elements share memory transactions) — the share of accesses with stride
  0 or 1 and the mean log stride, weighted by how often each runs.

Counts are compressed with log2(1 + x), as the CPU features are.
"""

from __future__ import annotations

import math

import numpy as np

from ..codegen.kernel_form import KernelProgram, split_kernels
from ..dsl import dtypes, expr as E
from ..ir import gpu, nodes as N
from ..ir.visitor import walk_stmts
from .gpu_check import check_state, local_bytes, vthread_extent
from .loopnest import LoopInfo, LoopNestWalker

_KERNEL_FIELDS = (
    "threads_per_block",
    "blocks",
    "warps_per_block",
    "whole_warps",
    "blocks_per_sm_by_threads",
    "shared_bytes",
    "local_bytes_per_thread",
    "vthreads",
    "barriers",
    "vector_len",
    "auto_unroll",
    "global_load_bytes_per_thread",
    "global_store_bytes_per_thread",
    "shared_access_per_thread",
    "coalesced_share",
    "mean_log_stride_tx",
    "flops_per_thread",
)
#: Names of the GPU features appended to a CUDA program's CPU features, in order.
GPU_FEATURE_NAMES = (
    ("n_kernels",)
    + tuple(f"gpu.top.{n}" for n in _KERNEL_FIELDS)
    + tuple(f"gpu.mean.{n}" for n in _KERNEL_FIELDS)
)
#: Threads one SM can hold (every GPU since Volta holds at least 1024; 2048 on most).
THREADS_PER_SM = 2048


def _log(x: float) -> float:
    return math.log2(1.0 + max(0.0, x))


def _flat(buf: N.Buffer, indices: tuple) -> E.PrimExpr | None:
    total = None
    for idx, stride in zip(indices, buf.strides):
        t = idx if stride == 1 else E.Mul(idx, E.IntImm(stride), idx.dtype)
        total = t if total is None else E.Add(total, t, "int32")
    return total


_INT_OPS = {
    E.Add: lambda a, b: a + b,
    E.Sub: lambda a, b: a - b,
    E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: a // b if b else None,
    E.FloorMod: lambda a, b: a % b if b else None,
    E.Min: min,
    E.Max: max,
}


def _eval_int(e: E.PrimExpr, env: dict) -> int | None:
    """The integer value of an index expression under ``env`` (None if it is not one)."""
    if isinstance(e, E.IntImm):
        return int(e.value)
    if isinstance(e, E.Var):
        return env.get(e)
    op = _INT_OPS.get(type(e))
    if op is None:
        return None
    a, b = _eval_int(e.a, env), _eval_int(e.b, env)
    if a is None or b is None:
        return None
    return op(a, b)


class _KernelWalker(LoopNestWalker):
    """Per store: its global/shared accesses, their stride in threadIdx.x, its flops —
    counted per thread (a loop bound to a thread or block index runs once per thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.load_bytes = self.store_bytes = self.shared = self.flops = 0.0
        self.coalesced = self.weighted = self.log_stride = 0.0
        self.vector_len = 0
        self.auto_unroll = 0
        self.tags: dict[int, str] = {}

    def _trips(self) -> float:
        # a loop bound to a thread or block index is run once per thread, not per store
        t = 1.0
        for lp in self.loops:
            if lp.kind != "thread_binding":
                t *= lp.extent
        return t

    def _tx(self) -> E.Var | None:
        for lp in reversed(self.loops):
            if lp.kind == "thread_binding" and self.tags.get(id(lp)) == "threadIdx.x":
                return lp.var
        return None

    def _tx_stride(self, flat: E.PrimExpr | None) -> float:
        """How far apart (in elements) two neighbouring threads' accesses are: the index
        at threadIdx.x = t + 1 minus at t, the other loops at a few fixed points (fused
        loops index with // and %, which a linear form cannot read); 1e6 when unknown."""
        tx = self._tx()
        if tx is None or flat is None:
            return 0.0
        others = [lp for lp in self.loops if lp.var is not tx]
        worst = 0.0
        for k in range(3):
            env = {lp.var: (k * 7 + 3 * i) % max(1, lp.extent) for i, lp in enumerate(others)}
            text = self._tx_extent() - 1
            t0 = (k * 5) % max(1, text)
            env[tx] = t0
            a = _eval_int(flat, env)
            env[tx] = t0 + 1
            b = _eval_int(flat, env)
            if a is None or b is None:
                return 1e6
            worst = max(worst, float(abs(b - a)))
        return worst

    def _tx_extent(self) -> int:
        for lp in reversed(self.loops):
            if self.tags.get(id(lp)) == "threadIdx.x":
                return lp.extent
        return 1

    def _access(self, buf: N.Buffer, indices: tuple, trips: float, is_load: bool) -> None:
        item = dtypes.itemsize(buf.dtype)
        if buf.scope == "shared":
            self.shared += trips
            return
        if buf.scope != "global":
            return
        if is_load:
            self.load_bytes += trips * item
        else:
            self.store_bytes += trips * item
        stride = self._tx_stride(_flat(buf, indices))
        self.weighted += trips
        self.coalesced += trips if stride <= 1 else 0.0
        self.log_stride += trips * _log(stride)

    def store(self, s: N.BufferStore) -> None:
        trips = self._trips()
        for lp in self.loops:
            if lp.kind == "vectorized":
                self.vector_len = max(self.vector_len, lp.extent)
            self.auto_unroll = max(self.auto_unroll, lp.unroll_budget)
        self._access(s.buffer, s.indices, trips, False)
        ops = 0
        for n in E.post_order(s.value):
            if isinstance(n, N.BufferLoad):
                self._access(n.buffer, n.indices, trips, True)
            elif isinstance(n, (E.Add, E.Sub, E.Mul, E.Div, E.Min, E.Max)) and dtypes.is_float(
                n.dtype.split("x")[0]
            ):
                ops += 1
            elif isinstance(n, E.Call) and n.op != "if_then_else":
                ops += 1
        self.flops += ops * trips

    def visit(self, s: N.Stmt) -> None:
        """Walk ``s``; a thread-bound loop's entry remembers its tag (the base walker
        records only the kind)."""
        if isinstance(s, N.For) and s.kind == "thread_binding":
            extent = s.extent.value if isinstance(s.extent, E.IntImm) else 1
            budget = s.annotation("pragma_auto_unroll_max_step")
            outer = self.loops[-1].unroll_budget if self.loops else 0
            lp = LoopInfo(s.loop_var, extent, s.kind, int(budget) if budget is not None else outer)
            self.tags[id(lp)] = s.thread_tag
            self.loops.append(lp)
            self.visit(s.body)
            self.loops.pop()
            return
        super().visit(s)


def kernel_features(kernel, vthreads: int, warp: int) -> tuple[float, list[float]]:
    """(work, feature row) of one kernel (see ``_KERNEL_FIELDS``)."""
    w = _KernelWalker()
    w.visit(kernel.body)
    threads = max(1, kernel.threads_per_block)
    blocks = max(1, kernel.num_blocks)
    barriers = sum(1 for s in walk_stmts(kernel.body) if gpu.is_barrier(s))
    row = [
        _log(threads),
        _log(blocks),
        _log(math.ceil(threads / max(1, warp))),
        float(threads % max(1, warp) == 0),
        _log(THREADS_PER_SM // threads),
        _log(kernel.shared_bytes()),
        _log(local_bytes(kernel.body)),
        _log(vthreads),
        _log(barriers),
        float(w.vector_len),
        _log(w.auto_unroll),
        _log(w.load_bytes),
        _log(w.store_bytes),
        _log(w.shared),
        w.coalesced / w.weighted if w.weighted else 1.0,
        w.log_stride / w.weighted if w.weighted else 0.0,
        _log(w.flops),
    ]
    work = max(w.flops, w.load_bytes + w.store_bytes, 1.0) * threads * blocks
    return work, row


def gpu_features(func: N.PrimFunc, program: KernelProgram, warp: int = 32) -> np.ndarray:
    """The GPU terms of a lowered CUDA program (see ``GPU_FEATURE_NAMES``)."""
    roots = func.body
    while isinstance(roots, N.Allocate) and roots.buffer.scope == "global":
        roots = roots.body
    vthreads = {}
    for root in roots.seq if isinstance(roots, N.SeqStmt) else (roots,):
        names = tuple(s.name for s in walk_stmts(root) if isinstance(s, N.Block))
        vthreads[names] = vthread_extent(root)
    width = len(_KERNEL_FIELDS)
    if not program.kernels:
        return np.zeros(len(GPU_FEATURE_NAMES))
    works, rows = [], []
    for k in program.kernels:
        work, row = kernel_features(k, vthreads.get(tuple(k.stage_names), 1), warp)
        works.append(work)
        rows.append(row)
    weights = np.array(works)
    table = np.array(rows, dtype=float)
    top = table[int(np.argmax(weights))]
    mean = (weights[:, None] * table).sum(axis=0) / weights.sum()
    out = np.concatenate([[float(len(program.kernels))], top, mean])
    assert out.shape[0] == 1 + 2 * width
    return out


def cuda_features(state, args: list, hw, target=None) -> tuple[np.ndarray | None, list[str], float]:
    """(features, problems, prior score) of a CUDA candidate: lowered, cut into kernels,
    checked against ``hw`` (``gpu_check``). Features are None when it has a problem; the
    vector is the CPU one (``features.program_features``, whose last entry is replaced by
    the GPU prior) followed by ``gpu_features``."""
    from .features import program_features  # noqa: PLC0415 - features imports nothing GPU

    func, problems = check_state(state, args, hw, target)
    if problems or func is None:
        return None, problems, 0.0
    program = split_kernels(func)
    cpu = program_features(func, hw.vector_unit_bytes, max(1, hw.num_cores))
    prior = gpu_prior(program, hw, target)
    cpu[-1] = prior  # the CPU prior's register-tile score means nothing on a GPU
    return np.concatenate([cpu, gpu_features(func, program, hw.warp_size)]), [], prior


def gpu_prior(program: KernelProgram, hw, target=None) -> float:
    """A score of the program before the model can rank (higher = predicted faster).

    The analytic GPU model (``search.gpu_model.estimate``, built beside this module) is
    used where it is present: its estimated time's inverse. Without it, a rough occupancy
    and coalescing score: the share of the heaviest kernel's global accesses that are
    coalesced, times how well its blocks fill a multiple of a warp and an SM's threads.
    """
    try:
        from .gpu_model import estimate  # noqa: PLC0415 - optional sibling module

        if target is None:
            raise LookupError("no target to estimate for")
        est = estimate(program, target)
        for name in ("seconds", "time_s", "time", "cost", "mean_cost"):
            value = getattr(est, name, None)
            if isinstance(value, (int, float)) and value > 0:
                return 1.0 / float(value)
    except Exception:  # noqa: BLE001 - a missing or failing model leaves the rough score
        pass
    best = 0.0
    for k in program.kernels:
        threads = max(1, k.threads_per_block)
        w = _KernelWalker()
        w.visit(k.body)
        coalesced = w.coalesced / w.weighted if w.weighted else 1.0
        fill = min(1.0, threads / 128) * (1.0 if threads % hw.warp_size == 0 else 0.5)
        blocks = min(1.0, k.num_blocks / 64)
        best = max(best, coalesced * fill * blocks)
    return best
