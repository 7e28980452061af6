"""Program features for the cost model, extracted per innermost store, Ansor-style.

For every store statement (the innermost computation of a loop nest) the extractor
reads its enclosing loops and its memory accesses from the lowered program and records:

* computation: float add/sub, mul, div, min/max/compare, math calls, int ops, selects
  — counts per execution times the trip count of the enclosing loops;
* loops: how many, trip count, outer-loop product, and the vectorized / unrolled /
  parallel lengths (innermost vectorized extent, unroll product, auto-unroll budget);
* up to ``TOP_ACCESSES`` buffer accesses (largest first): read/write, element bytes,
  unique bytes touched, cache lines touched, stride of the innermost loop, the
  loop-carried reuse (distance in iterations, bytes in between, count), and whether
  the buffer is a small local one (a register tile);
* arithmetic intensity (flops per unique byte) and local allocation bytes;
* whether the store is a horizontal step combined as a tree (``pragma_horizontal_reduce``);
* for the program, the bytes of large buffers streamed: each root loop nest walks every
  large buffer it touches, so a row fusion (a softmax's statistics computed inside the
  output's row loop) streams its input once where separate passes stream it three times.

The program vector ends with the analytic prior's score (``search/prior.py``: the share of
peak its register tiles allow on the target's vector unit). The forest could in principle
learn it from the store features, but not from the few hundred programs one search
measures: with it, the pairwise accuracy on the last 30% of tuning logs (what the search
faces) rose on all four bench workloads (0.80 -> 0.81 matmul512, 0.78 -> 0.80 matmul1024,
0.58 -> 0.62 conv, 0.82 -> 0.83 chain) and the top-10% recall on the matmuls doubled.

Counts are compressed with log2(1 + x). A program's vector aggregates its stores: the
flop-weighted mean and the maximum of every store feature, plus totals. A random forest
cannot learn Ansor's per-store "pack-sum" loss (it fits one target per sample), so the
program, not the store, is the sample: aggregation keeps the dominant store's features
(weighted mean) and the worst-case ones (max) in a fixed-length vector.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..codegen.target import Target
from ..dsl import dtypes, expr as E
from ..ir import nodes as N
from ..ir.simplify import linear_form
from ..measure.bandwidth import bandwidth_levels, machine_balance
from .loopnest import LoopNestWalker
from .prior import analytic_score, compulsory_bytes

TOP_ACCESSES = 5
_ACCESS_FIELDS = (
    "is_read",
    "is_write",
    "elem_bytes",
    "unique_bytes",
    "lines",
    "stride",
    "reuse_iters",
    "reuse_bytes",
    "reuse_count",
    "is_local",
)
_STORE_FIELDS = (
    "float_addsub",
    "float_mul",
    "float_div",
    "float_cmp",
    "float_math",
    "int_ops",
    "selects",
    "n_loops",
    "trips",
    "outer_prod",
    "vec_len",
    "vec_is_inner",
    "unroll_prod",
    "auto_unroll",
    "parallel_prod",
    "guarded",
    "intensity",
    "alloc_bytes",
    "horizontal",
) + tuple(f"acc{k}_{f}" for k in range(TOP_ACCESSES) for f in _ACCESS_FIELDS)

#: Names of the per-store features, in order.
STORE_FEATURE_NAMES = _STORE_FIELDS
#: Names of the program features (what the cost model sees), in order.
FEATURE_NAMES = (
    tuple(f"mean.{n}" for n in _STORE_FIELDS)
    + tuple(f"max.{n}" for n in _STORE_FIELDS)
    + ("total_flops", "n_stores", "total_alloc_bytes", "streamed_bytes", "prior_score")
)
#: A buffer larger than this is streamed from beyond L1 by each root loop nest touching it.
STREAM_BYTES = 48 << 10


def _log(x: float) -> float:
    return math.log2(1.0 + max(0.0, x))


def _count_ops(e: E.PrimExpr) -> list[float]:
    out = [0.0] * 7
    for n in E.post_order(e):
        if isinstance(n, (N.BufferLoad,)):
            continue
        is_f = dtypes.is_float(n.dtype.split("x")[0]) if isinstance(n, E.PrimExpr) else False
        if isinstance(n, (E.Add, E.Sub)):
            out[0 if is_f else 5] += 1
        elif isinstance(n, E.Mul):
            out[1 if is_f else 5] += 1
        elif isinstance(n, (E.Div, E.FloorDiv, E.Mod, E.FloorMod)):
            out[2 if is_f else 5] += 1
        elif isinstance(n, (E.Min, E.Max, E.CmpOp)):
            operand = n.a.dtype if isinstance(n, E.CmpOp) else n.dtype
            out[3 if dtypes.is_float(operand) else 5] += 1
        elif isinstance(n, E.Call):
            if n.op == "if_then_else":
                out[6] += 1
            else:  # bit operations (x & m, x << k, popcount) are integer arithmetic
                out[5 if dtypes.is_int(n.dtype) else 4] += 1
        elif isinstance(n, E.Select):
            out[6] += 1
    return out


def _flat_index(buf: N.Buffer, indices: tuple) -> E.PrimExpr | None:
    total = None
    for idx, stride in zip(indices, buf.strides):
        t = idx if stride == 1 else E.Mul(idx, E.IntImm(stride), idx.dtype)
        total = t if total is None else E.Add(total, t, "int32")
    return total


def _access(
    buf: N.Buffer, indices: tuple, loops: list, is_read: bool, is_write: bool, local_sizes: dict
) -> list[float]:
    item = dtypes.itemsize(buf.dtype)
    flat = _flat_index(buf, indices)
    form = linear_form(flat) if flat is not None else ({}, 0)
    coeffs: dict = {}
    nonlinear: set = set()
    if form is not None:
        for term, c in form[0].items():
            if isinstance(term, E.Var):
                coeffs[term] = coeffs.get(term, 0) + c
            else:
                nonlinear |= E.free_vars(term)
    unique = 1
    for lp in loops:
        if coeffs.get(lp.var, 0) != 0 or lp.var in nonlinear:
            unique *= lp.extent
    unique = min(unique, buf.size)
    inner = loops[-1] if loops else None
    if inner is None:
        stride = 0
    elif inner.var in nonlinear:
        stride = 1e6
    else:
        stride = abs(coeffs.get(inner.var, 0))
    unique_bytes = unique * item
    lines = math.ceil(unique_bytes / 64) if stride * item < 64 else unique
    # loop-carried reuse: the innermost loop the access does not depend on
    reuse_iters = reuse_bytes = reuse_count = 0.0
    inner_trips = 1
    for lp in reversed(loops):
        if coeffs.get(lp.var, 0) == 0 and lp.var not in nonlinear and lp.extent > 1:
            reuse_iters = inner_trips
            reuse_bytes = inner_trips * item  # bytes this access streams between reuses
            reuse_count = lp.extent
            break
        inner_trips *= lp.extent
    is_local = 1.0 if buf in local_sizes and buf.nbytes <= 4096 else 0.0
    return [
        float(is_read),
        float(is_write),
        float(item),
        _log(unique_bytes),
        _log(lines),
        _log(stride),
        _log(reuse_iters),
        _log(reuse_bytes),
        _log(reuse_count),
        is_local,
    ]


class _Extractor(LoopNestWalker):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[float, list[float]]] = []
        self.streams: set = set()  # (root loop, buffer): see ``streamed_bytes``

    def streamed_bytes(self) -> float:
        """Bytes of the large buffers walked, once per root loop nest touching each: what
        fusing rows saves (the prior prices the same streams, ``prior.CACHE_TIERS``)."""
        return float(sum(b.nbytes for _, b in self.streams if b.nbytes > STREAM_BYTES))

    def store(self, s: N.BufferStore) -> None:
        root = self.loops[0].var if self.loops else None
        self.streams.add((root, s.buffer))
        loops = [lp for lp in self.loops if lp.extent > 1]
        trips = 1.0
        for lp in loops:
            trips *= lp.extent
        ops = _count_ops(s.value)
        flops = sum(ops[:5]) * trips
        vec = [lp for lp in loops if lp.kind == "vectorized"]
        vec_len = vec[-1].extent if vec else 0
        vec_inner = 1.0 if loops and loops[-1].kind == "vectorized" else 0.0
        unroll = 1.0
        par = 1.0
        for lp in loops:
            if lp.kind == "unrolled":
                unroll *= lp.extent
            elif lp.kind == "parallel":
                par *= lp.extent
        outer = trips / loops[-1].extent if loops else 1.0
        auto = self.loops[-1].unroll_budget if self.loops else 0
        accesses = [(0.0, _access(s.buffer, s.indices, loops, False, True, self.local_sizes))]
        reads_store = False
        for n in E.post_order(s.value):
            if isinstance(n, N.BufferLoad):
                if n.buffer is s.buffer:
                    reads_store = True
                    continue
                self.streams.add((root, n.buffer))
                acc = _access(n.buffer, n.indices, loops, True, False, self.local_sizes)
                accesses.append((acc[3], acc))
        if reads_store:
            accesses[0][1][0] = 1.0
        head, rest = accesses[0], sorted(accesses[1:], key=lambda a: -a[0])
        chosen = [head[1]] + [a[1] for a in rest][: TOP_ACCESSES - 1]
        unique_total = sum(2 ** a[3] - 1 for a in chosen)
        alloc = sum(self.local_sizes.values())
        row = [_log(x * trips) for x in ops] + [
            float(len(loops)),
            _log(trips),
            _log(outer),
            float(vec_len),
            vec_inner,
            _log(unroll),
            _log(auto),
            _log(par),
            float(self.guards > 0),
            _log(flops / max(unique_total, 1.0)),
            _log(alloc),
            float(bool(self.loops) and self.loops[-1].horizontal),  # a tree, not a chain
        ]
        for k in range(TOP_ACCESSES):
            row += chosen[k] if k < len(chosen) else [0.0] * len(_ACCESS_FIELDS)
        self.rows.append((max(flops, trips), row))


def store_features(func: N.PrimFunc) -> list[list[float]]:
    """One feature row per store statement (see STORE_FEATURE_NAMES)."""
    ex = _Extractor()
    ex.visit(func.body)
    return [row for _, row in ex.rows]


def _balance(num_cores: int, nbytes: int) -> float | None:
    """This machine's measured bytes per peak flop for ``num_cores`` threads and a working
    set of ``nbytes`` (the cache level that holds it), read once per process and level
    from the cache (``measure.bandwidth.machine_balance``; None when not measured): every
    feature vector of a process uses the same figures, so the model's training and its
    predictions agree."""
    if not _LEVELS:
        _LEVELS.extend(bandwidth_levels())
    level = next((n for n, s in _LEVELS if nbytes <= s), _LEVELS[-1][0])
    if (num_cores, level) not in _BALANCE:
        _BALANCE[num_cores, level] = machine_balance(num_cores, nbytes=nbytes)
    return _BALANCE[num_cores, level]


_BALANCE: dict = {}
_LEVELS: list = []


def program_features(
    func: N.PrimFunc, vector_bytes: int | None = None, num_cores: int = 1
) -> np.ndarray:
    """The fixed-length feature vector of a program (see FEATURE_NAMES).

    ``vector_bytes`` and ``num_cores`` describe the target for the prior's score (the last
    feature); by default this machine's vector width and one core. The prior's memory
    bound uses this machine's measured balance when it is cached (``_balance``).
    """

    vector_bytes = host_vector_bytes() if vector_bytes is None else vector_bytes
    cores = max(1, num_cores)
    balance = _balance(cores, compulsory_bytes(func))
    prior = analytic_score(func, vector_bytes, cores, balance=balance)
    ex = _Extractor()
    ex.visit(func.body)
    width = len(_STORE_FIELDS)
    if not ex.rows:
        out = np.zeros(len(FEATURE_NAMES))
        out[-1] = prior
        return out
    weights = np.array([w for w, _ in ex.rows], dtype=float)
    rows = np.array([r for _, r in ex.rows], dtype=float)
    mean = (weights[:, None] * rows).sum(axis=0) / max(weights.sum(), 1e-9)
    mx = rows.max(axis=0)
    total_flops = _log(float(weights.sum()))
    alloc = rows[:, _STORE_FIELDS.index("alloc_bytes")].max()
    streamed = _log(ex.streamed_bytes())
    out = np.concatenate([mean, mx, [total_flops, float(len(ex.rows)), alloc, streamed, prior]])
    assert out.shape[0] == 2 * width + 5
    return out


@functools.lru_cache(maxsize=1)
def host_vector_bytes() -> int:
    """This machine's SIMD register width in bytes."""

    return Target("llvm").vector_bytes
