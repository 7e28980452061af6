"""What one kernel does per warp: its memory accesses, their coalescing and bank conflicts,
and its FLOPs — the inputs of the analytic GPU model (``gpu_model``).

The kernel body (kernel form, ``codegen.kernel_form``) is walked once. For every load and
store the walk knows the loops around it: block loops, thread loops (``threadIdx.*``), a
vectorized loop (one wide access per thread), and the serial/unrolled loops whose extents
multiply how often it runs. The index is evaluated for the 32 lanes of the first warp that
executes it (numpy over lanes; every other loop variable at 0):

- a *global* access touches ``sectors`` distinct 32-byte sectors per warp instruction (1
  for a broadcast, 4 for 32 consecutive floats, 32 for a stride of 8 floats or more);
- a *shared* access needs ``degree`` wavefronts, the largest number of distinct 4-byte
  words any of the 32 banks (word address mod 32) must serve (a broadcast word counts
  once);
- a *local* access is a register (or, past the register budget, spilled memory).

Lanes whose thread index is past the extent of the loop bound to it are inactive (the
guard of a short thread loop); a statement outside every loop of a thread tag runs on all
threads along it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..dsl import expr as E
from ..ir import gpu, nodes as N
from ..ir.index_values import evaluate

WARP = 32
SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4


def dtype_bytes(dtype: str) -> int:
    """Bytes of one element of ``dtype``."""
    if dtype == "bool":
        return 1
    digits = "".join(ch for ch in dtype if ch.isdigit())
    return max(1, int(digits or 32) // 8)


@dataclass(frozen=True)
class Access:
    """One load or store site of a kernel, summarised per warp instruction."""

    buffer: str
    scope: str  # "global", "shared" or "local"
    is_store: bool
    elem_bytes: int
    vector: int  # elements per thread per instruction (a vectorized loop's extent)
    warp_instructions: float  # executions of this site, in warp instructions, whole grid
    active_lanes: float  # threads active per warp instruction (average)
    distinct: int  # distinct elements one warp instruction touches
    sectors: int  # distinct 32-byte sectors per warp instruction (global)
    degree: int  # shared-memory wavefronts per warp instruction (bank conflicts)
    min_degree: int = 1  # the fewest wavefronts its distinct words could take

    @property
    def conflict(self) -> int:
        """How many times more wavefronts than the words need (1: no bank conflict)."""
        return max(1, self.degree // max(1, self.min_degree))

    @property
    def useful_bytes(self) -> float:
        """Distinct bytes the threads asked for (a broadcast element counts once)."""
        return self.warp_instructions * self.distinct * self.elem_bytes

    @property
    def moved_bytes(self) -> float:
        """Bytes moved in whole sectors (global memory)."""
        return self.warp_instructions * self.sectors * SECTOR_BYTES


@dataclass(frozen=True)
class KernelWork:
    """Everything the model needs about one kernel's body."""

    accesses: tuple
    flops: float
    local_words: int  # 4-byte words of the per-thread local buffers (registers)
    global_footprint: int  # bytes of the distinct global buffers it touches


class _Loop:
    __slots__ = ("var", "extent", "kind", "tag")

    def __init__(self, var: E.Var, extent: int, kind: str, tag: str) -> None:
        self.var, self.extent, self.kind, self.tag = var, extent, kind, tag


def _const(e: E.PrimExpr) -> int:
    v = evaluate(e, {})
    return int(v) if np.ndim(v) == 0 else int(np.max(v))


def _flops(e: E.PrimExpr) -> int:
    """Arithmetic operations of a floating-point value expression (loads excluded)."""
    if isinstance(e, (N.BufferLoad, E.Var, E.IntImm, E.FloatImm)):
        return 0
    own = 0
    if isinstance(e, (E.Add, E.Sub, E.Mul, E.Div, E.Min, E.Max)) and e.dtype.startswith("float"):
        own = 1
    elif isinstance(e, E.Call) and e.dtype.startswith("float"):
        own = 1
    kids = 0
    for name in E.node_fields(e):
        v = getattr(e, name)
        if isinstance(v, E.PrimExpr):
            kids += _flops(v)
        elif isinstance(v, tuple):
            kids += sum(_flops(x) for x in v if isinstance(x, E.PrimExpr))
    return own + kids


def _loads(e: object, out: list) -> None:
    if isinstance(e, N.BufferLoad):
        out.append(e)
    if isinstance(e, E.PrimExpr):
        for name in E.node_fields(e):
            v = getattr(e, name)
            if isinstance(v, E.PrimExpr):
                _loads(v, out)
            elif isinstance(v, tuple):
                for x in v:
                    _loads(x, out)


class _Walker:
    def __init__(self, block: tuple) -> None:
        self.block = block
        n = block[0] * block[1] * block[2]
        tid = np.arange(n)
        # the thread indices of every thread of a block, x fastest (CUDA's linear order)
        self.tidx = {
            "threadIdx.x": tid % block[0],
            "threadIdx.y": (tid // block[0]) % block[1],
            "threadIdx.z": tid // (block[0] * block[1]),
        }
        self.n_threads = n
        self.accesses: list[Access] = []
        self.flops = 0.0
        self.local_words = 0
        self.globals: dict = {}
        self.lets: dict = {}

    def stmt(self, s: N.Stmt, loops: list) -> None:
        if isinstance(s, N.For):
            extent = max(0, _const(s.extent))
            tag = s.thread_tag if s.kind == "thread_binding" else ""
            self.stmt(s.body, [*loops, _Loop(s.loop_var, extent, s.kind, tag)])
        elif isinstance(s, N.SeqStmt):
            for x in s.seq:
                self.stmt(x, loops)
        elif isinstance(s, N.Allocate):
            if s.buffer.scope == "local":
                self.local_words += math.ceil(
                    s.buffer.size * dtype_bytes(s.buffer.dtype) / BANK_BYTES
                )
            self.stmt(s.body, loops)
        elif isinstance(s, N.IfThenElse):
            self.exprs([s.condition], loops)
            self.stmt(s.then_case, loops)
            if s.else_case is not None:
                self.stmt(s.else_case, loops)
        elif isinstance(s, N.LetStmt):
            self.lets[s.var] = s.value
            self.exprs([s.value], loops)
            self.stmt(s.body, loops)
        elif isinstance(s, N.Block):
            self.stmt(s.body, loops)
        elif isinstance(s, N.BufferStore):
            self.exprs([s.value, *s.indices], loops)
            self.access(s.buffer, s.indices, True, loops)
            if s.value.dtype.startswith("float"):
                self.flops += _flops(s.value) * self.count(loops)
        elif isinstance(s, N.Evaluate):
            self.exprs([s.value], loops)

    def exprs(self, es: list, loops: list) -> None:
        found: list = []
        for e in es:
            _loads(e, found)
        for ld in found:
            self.access(ld.buffer, ld.indices, False, loops)

    def count(self, loops: list) -> float:
        """Executions of a statement in the whole grid (every thread, every iteration)."""
        total = 1.0
        enclosing = {lp.tag for lp in loops if gpu.is_thread_tag(lp.tag)}
        for lp in loops:
            total *= lp.extent
        for tag in gpu.THREAD_TAGS:  # outside every loop of a tag: all its threads run it
            if tag not in enclosing:
                total *= self.block["xyz".index(tag[-1])]
        return total

    def access(self, buf: N.Buffer, indices: tuple, is_store: bool, loops: list) -> None:
        scope = buf.scope
        if scope == "global":
            self.globals[buf.name] = buf.size * dtype_bytes(buf.dtype)
        if scope == "local":  # a register (spills are the model's business)
            return
        vec = loops[-1] if loops and loops[-1].kind == "vectorized" else None
        lanes_vec = vec.extent if vec is not None else 1
        # which threads run it: a thread loop shorter than its launch extent guards the rest
        active = np.ones(self.n_threads, dtype=bool)
        env: dict = {}
        for lp in loops:
            if gpu.is_thread_tag(lp.tag):
                idx = self.tidx[lp.tag]
                active &= idx < lp.extent
                env[lp.var] = idx
        outer = 1.0  # executions per thread: every loop but thread loops and the vector loop
        for lp in loops:
            if not gpu.is_thread_tag(lp.tag) and lp is not vec:
                outer *= lp.extent
        warp_of = np.arange(self.n_threads) // WARP
        warps = np.unique(warp_of[active])
        if not len(warps) or outer == 0:
            return
        first = active & (warp_of == warps[0])
        env = {v: a[first] for v, a in env.items()}
        for var, value in self.lets.items():
            env.setdefault(var, evaluate(value, env))
        if vec is not None:  # every element of the vector, for every lane
            env = {v: np.repeat(np.asarray(a), lanes_vec) for v, a in env.items()}
            n_lanes = int(first.sum())
            env[vec.var] = np.tile(np.arange(lanes_vec), n_lanes)
        flat = 0
        for idx, stride in zip(indices, buf.strides):
            flat = flat + np.asarray(evaluate(idx, env)) * stride
        addr = np.atleast_1d(np.asarray(flat, dtype=np.int64)) * dtype_bytes(buf.dtype)
        sectors = len(np.unique(addr // SECTOR_BYTES))
        degree, min_degree = 0, 1
        if scope == "shared":
            words = np.unique(addr // BANK_BYTES)
            # (a wide access's words spread over the banks: float4 by 32 lanes is 4 per bank)
            degree = int(np.bincount(words % BANKS, minlength=BANKS).max())
            min_degree = math.ceil(len(words) / BANKS)
        n_active = int(active.sum())
        self.accesses.append(
            Access(
                buf.name,
                scope,
                is_store,
                dtype_bytes(buf.dtype),
                lanes_vec,
                outer * len(warps),
                n_active / len(warps),
                len(np.unique(addr)),
                sectors,
                degree,
                min_degree,
            )
        )


def kernel_work(kernel: object) -> KernelWork:
    """Walk one ``codegen.kernel_form.Kernel`` (see the module docstring)."""
    w = _Walker(tuple(kernel.block))
    w.stmt(kernel.body, [])
    return KernelWork(tuple(w.accesses), w.flops, w.local_words, sum(w.globals.values()))
