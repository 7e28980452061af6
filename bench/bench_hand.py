"""Best-known hand schedules, written with ansor_lab's primitives, against numpy.

Workloads: matmul 512 and 1024, the chain C = A @ B, D = exp(C), F = D @ E (512),
conv2d of ResNet-50's last 3x3 layer (N=1, C=K=512, 7x7, pad 1, stride 1; NHWC data, HWIO
weights) and a depthwise conv2d (N=1, C=256, 56x56, 3x3, pad 1; NCHW). Every schedule is
checked against numpy before it is timed. Printed, as one table: our GFLOPS on 1 and 2
threads, numpy's GFLOPS on 1 and 2 BLAS threads (threadpoolctl), the ratios, and the time
to lower + build each schedule. Then the targets, PASS/FAIL.

    python bench/bench_hand.py              # the table (about a minute)
    python bench/bench_hand.py --explore    # also try tile sizes for every workload
    python bench/bench_hand.py --only matmul1024 --rounds 5

Timing: ours is ``time_evaluator(number=1, repeat, min_repeat_ms)`` (a native loop; the
median of the repeats); numpy is timed the same way from Python (median of repeats, each
>= min_repeat_ms). Ours and numpy are measured alternately for ``--rounds`` rounds and the
best round of each is reported: on a shared machine a burst of load from other jobs only
ever slows a round down, and alternating spreads it over both sides. Build time is the
median of three lower + build runs of the 1-thread module (wall and CPU seconds).

On a machine busy with other jobs wall-clock figures mean little (a process may get a
third of a core), so three CPU-clock columns follow: ours and numpy on 1 thread timed with
``time.thread_time`` (time descheduled does not count), and "2T eff", the 2-thread
module's FLOPs per second of process CPU time (both threads, spin-waits included) over the
1-thread figure. With efficiency e, two threads on an idle machine run about 2 x e times as
fast as one; when the load average exceeds the core count, the targets accept these.

What we found exploring tile sizes (2-core AVX-512 VM shared with other jobs, so ranked on
the 1-thread CPU clock, 4 interleaved rounds; the defaults below are the winners):
- matmul: a register tile of ti rows x tj columns (tj lanes vectorized, rows unrolled,
  accumulators in a cache_write "local" tile that LLVM keeps in zmm registers) with B's
  column panel packed contiguously (cache_read at j0). 1024: 8x48 (24 accumulators) 80,
  4x64 78, 8x32 73, 6x64 68, 12x32 41 (spills) GFLOPS; without packing B, 15. 512: 8x48 70,
  4x64 68, 8x32 63, 4x32 60; 4x64 is kept at 512 because its 8 panels split evenly over
  2 threads (parallel(j0)), where 48-wide panels give 11.
- chain: both matmuls as above (4x64 for the even split); exp is applied to C's register
  tile as it is written out (reverse_compute_inline of D into C's write-back), so C never
  reaches memory: 66 vs 57 GFLOPS with exp as a separate vectorized pass.
- conv2d 3x3 (NHWC) is a matmul in disguise: the 7 pixels of an output row x vk output
  channels in registers, weights packed per vk-channel block (cache_read at the channel
  block), reduction ordered ry, rx, rc. vk = 16: 32, 32: 41, 48: 46, 64: 50 GFLOPS
  (7 x 4 = 28 zmm accumulators).
- depthwise (NCHW): vectorize along the 56-wide row (emitted as 32 + 16 + 8 lanes), ty
  output rows per register tile, padding computed per channel (compute_at c), taps
  unrolled: ty = 1, 2, 4 and 16-lane tiles all land at 23-27 GFLOPS (ty = 2 best); numpy has
  no good depthwise, its shift-and-add is memory-bound below 1 GFLOPS.

With 32-byte SIMD (AVX2: 16 ymm registers, e.g. AMD Zen 3) a register tile must stay near 8
vectors of accumulators, so the schedules take their ``narrow_params`` (picked the same way
on a 2-core EPYC, 2 rounds): matmul 1024 4x16 83 GFLOPS (8x16 25 and 4x24 28: spills; 6x16
43-50: 1024 rows do not split by 6, the tail is guarded; without packing 35), matmul 512
2x32 63-76, chain 4x16 85 (exp as a separate pass 68), conv vk = 8 (7 x 1 accumulators) 47
against 28-29 for vk = 16 or 32; depthwise as on AVX-512 (vx = 56 is 7 ymm per row).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

import ansor_lab as tvm
from ansor_lab import te, tir, topi
from ansor_lab.runtime.ndarray import aligned_copy

# -- workloads --------------------------------------------------------------------------


@dataclass
class Workload:
    """A computation, its FLOP count, a schedule family and a numpy peer."""

    name: str
    flops: float
    make: Callable[[], list]  # tensors: inputs then the output
    schedule: Callable[..., None]  # (sch, **params) -> None, in place
    params: dict  # the best-known parameters (AVX-512: 32 registers of 64 bytes)
    variants: list = field(default_factory=list)  # parameter sets tried by --explore
    numpy_fn: Callable[..., np.ndarray] | None = None  # inputs -> output (numpy peer)
    numpy_desc: str = ""
    rtol: float = 1e-4
    # for 32-byte SIMD (AVX2: 16 registers of 32 bytes) a register tile holds a quarter of
    # the AVX-512 one; None: the same parameters fit both
    narrow_params: dict | None = None
    narrow_variants: list | None = None

    def params_for(self, vector_bytes: int) -> dict:
        """The best-known parameters for this SIMD width."""
        return self.narrow_params if vector_bytes < 64 and self.narrow_params else self.params

    def variants_for(self, vector_bytes: int) -> list:
        """The parameter sets --explore tries for this SIMD width."""
        if vector_bytes < 64 and self.narrow_variants:
            return self.narrow_variants
        return self.variants


def _loops(sch: tir.Schedule, block: str) -> dict:
    return {sch.get(lp).name: lp for lp in sch.get_loops(sch.get_block(block))}


def matmul_args(n: int) -> list:
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]


def tile_matmul(
    sch: tir.Schedule,
    block: str,
    panel: str,
    ti: int,
    tj: int,
    pack: bool = True,
    parallel: bool = True,
    write_back: bool = True,
) -> tuple:
    """Register tile ``ti x tj`` (tj lanes vectorized, ti rows unrolled), accumulators in a
    local tile, the ``panel`` operand's column block packed contiguously (cache_read at j0).
    Returns (j0, i0, write-back block)."""
    c = sch.get_block(block)
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, ti])
    j0, j1 = sch.split(j, [None, tj])
    sch.reorder(j0, i0, k, i1, j1)
    cl = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cl, i0)
    sch.unroll(i1)
    sch.vectorize(j1)
    if write_back:
        sch.vectorize(sch.get_loops(cl)[-1])
    if pack:
        bb = sch.cache_read(sch.get_block(block), panel, "global")
        sch.compute_at(bb, j0)
        sch.vectorize(sch.get_loops(bb)[-1])
    if parallel:
        sch.parallel(j0)
    return j0, i0, cl


def sched_matmul(
    sch: tir.Schedule, ti: int = 4, tj: int = 64, pack: bool = True, parallel: bool = True
) -> None:
    tile_matmul(sch, "C", "B", ti, tj, pack, parallel)


def np_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a @ b


def chain_args(n: int = 512) -> list:
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    E = te.placeholder((n, n), name="E")
    k1 = te.reduce_axis((0, n), name="k1")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k1] * B[k1, j], axis=k1), name="C")
    D = te.compute((n, n), lambda i, j: te.exp(C[i, j]), name="D")
    k2 = te.reduce_axis((0, n), name="k2")
    F = te.compute((n, n), lambda i, j: te.sum(D[i, k2] * E[k2, j], axis=k2), name="F")
    return [A, B, E, F]


def sched_chain(
    sch: tir.Schedule, ti: int = 4, tj: int = 64, fuse_exp: bool = True, parallel: bool = True
) -> None:
    """Both matmuls register-tiled; exp applied to C's register tile as it is written out
    (reverse_compute_inline: C never reaches memory), or as a separate vectorized pass."""
    tile_matmul(sch, "C", "B", ti, tj, parallel=parallel, write_back=not fuse_exp)
    d = sch.get_block("D")
    if fuse_exp:
        sch.reverse_compute_inline(d)  # the write-back of C's tile now computes D
        sch.vectorize(sch.get_loops(sch.get_block("D"))[-1])
    else:
        i, j = sch.get_loops(d)
        sch.vectorize(j)
        if parallel:
            sch.parallel(i)
    tile_matmul(sch, "F", "E", ti, tj, parallel=parallel)


def np_chain(a: np.ndarray, b: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.exp(a @ b) @ e


def conv_args() -> list:
    data = te.placeholder((1, 7, 7, 512), name="data")
    wt = te.placeholder((3, 3, 512, 512), name="wt")
    return [data, wt, topi.nn.conv2d_nhwc(data, wt, 1, 1, 1)]


def sched_conv(sch: tir.Schedule, vk: int = 64, parallel: bool = True) -> None:
    """7 pixels of an output row x ``vk`` output channels in registers; weights packed per
    channel block; reduction ry, rx, rc innermost-but-two."""
    out = "Conv2dOutput"
    cb = sch.get_block(out)
    L = _loops(sch, out)
    ko, ki = sch.split(L["ff"], [None, vk])
    sch.reorder(L["nn"], ko, L["yy"], L["ry"], L["rx"], L["rc"], L["xx"], ki)
    cl = sch.cache_write(cb, 0, "local")
    sch.reverse_compute_at(cl, L["yy"])
    sch.unroll(L["xx"])
    sch.vectorize(ki)
    sch.vectorize(sch.get_loops(cl)[-1])
    wb = sch.cache_read(cb, "wt", "global")
    sch.compute_at(wb, ko)
    sch.vectorize(sch.get_loops(wb)[-1])
    sch.vectorize(sch.get_loops(sch.get_block("PaddedInput"))[-1])
    if parallel:
        sch.parallel(ko)


def np_conv_im2col(data: np.ndarray, wt: np.ndarray) -> np.ndarray:
    """im2col + one sgemm: [49, 9*512] @ [9*512, 512]."""
    n, h, w, c = data.shape
    kh, kw, _, k = wt.shape
    p = np.pad(data, ((0, 0), (1, 1), (1, 1), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(p, (kh, kw), axis=(1, 2))  # n,h,w,c,kh,kw
    cols = np.ascontiguousarray(win.transpose(0, 1, 2, 4, 5, 3)).reshape(n * h * w, -1)
    return (cols @ wt.reshape(-1, k)).reshape(n, h, w, k)


def dw_args() -> list:
    data = te.placeholder((1, 256, 56, 56), name="data")
    wt = te.placeholder((256, 1, 3, 3), name="wt")
    return [data, wt, topi.nn.depthwise_conv2d_nchw(data, wt, 1, 1, 1)]


def sched_dw(sch: tir.Schedule, ty: int = 2, vx: int = 56, parallel: bool = True) -> None:
    """``ty`` output rows x ``vx`` lanes in registers, padding per channel, taps unrolled."""
    out = "DepthwiseConv2d"
    cb = sch.get_block(out)
    pad = sch.get_block("PaddedInput")
    b, c, y, x, di, dj = sch.get_loops(cb)
    y0, y1 = sch.split(y, [None, ty])
    if vx < 56:
        x0, x1 = sch.split(x, [None, vx])
        sch.reorder(b, c, y0, x0, di, dj, y1, x1)
        anchor = x0
    else:
        x1 = x
        sch.reorder(b, c, y0, di, dj, y1, x1)
        anchor = y0
    cl = sch.cache_write(cb, 0, "local")
    sch.reverse_compute_at(cl, anchor)
    sch.unroll(di)
    sch.unroll(dj)
    sch.unroll(y1)
    sch.vectorize(x1)
    sch.vectorize(sch.get_loops(cl)[-1])
    sch.compute_at(pad, c)
    sch.vectorize(sch.get_loops(pad)[-1])
    if parallel:
        sch.parallel(c)


def np_dw_shift_add(data: np.ndarray, wt: np.ndarray) -> np.ndarray:
    """Nine shifted multiply-adds over the padded input (numpy's best for depthwise)."""
    n, c, h, w = data.shape
    p = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros_like(data)
    for dy in range(3):
        for dx in range(3):
            out += p[:, :, dy : dy + h, dx : dx + w] * wt[None, :, 0, dy, dx, None, None]
    return out


#: Register tiles tried for both matmuls on a 256-bit (AVX2) target: 16 ymm registers hold
#: at most ti x tj / 8 accumulators plus the row of B and the broadcast of A.
NARROW_MATMUL_VARIANTS = [
    dict(ti=4, tj=16),
    dict(ti=2, tj=32),
    dict(ti=8, tj=8),
    dict(ti=6, tj=16),
    dict(ti=4, tj=24),
    dict(ti=8, tj=16),
    dict(ti=4, tj=16, pack=False),
]

WORKLOADS = {
    "matmul512": Workload(
        "matmul512",
        2 * 512**3,
        lambda: matmul_args(512),
        sched_matmul,
        dict(ti=4, tj=64),
        [
            dict(ti=4, tj=32),
            dict(ti=4, tj=64),
            dict(ti=6, tj=64),
            dict(ti=8, tj=32),
            dict(ti=8, tj=48),
            dict(ti=2, tj=128),
            dict(ti=4, tj=64, pack=False),
        ],
        np_matmul,
        "sgemm (OpenBLAS)",
        narrow_params=dict(ti=2, tj=32),
        narrow_variants=NARROW_MATMUL_VARIANTS,
    ),
    "matmul1024": Workload(
        "matmul1024",
        2 * 1024**3,
        lambda: matmul_args(1024),
        sched_matmul,
        dict(ti=8, tj=48),
        [
            dict(ti=4, tj=32),
            dict(ti=4, tj=64),
            dict(ti=6, tj=64),
            dict(ti=8, tj=32),
            dict(ti=8, tj=48),
            dict(ti=4, tj=64, pack=False),
        ],
        np_matmul,
        "sgemm (OpenBLAS)",
        narrow_params=dict(ti=4, tj=16),
        narrow_variants=NARROW_MATMUL_VARIANTS,
    ),
    "chain512": Workload(
        "chain512",
        2 * 2 * 512**3,
        chain_args,
        sched_chain,
        dict(ti=4, tj=64, fuse_exp=True),
        [
            dict(ti=4, tj=64, fuse_exp=True),
            dict(ti=4, tj=64, fuse_exp=False),
            dict(ti=6, tj=64, fuse_exp=True),
            dict(ti=8, tj=48, fuse_exp=True),
        ],
        np_chain,
        "sgemm, np.exp, sgemm",
        narrow_params=dict(ti=4, tj=16, fuse_exp=True),
        narrow_variants=[
            dict(ti=4, tj=16, fuse_exp=True),
            dict(ti=4, tj=16, fuse_exp=False),
            dict(ti=2, tj=32, fuse_exp=True),
            dict(ti=8, tj=8, fuse_exp=True),
        ],
    ),
    "conv2d_resnet_last": Workload(
        "conv2d_resnet_last",
        2 * 7 * 7 * 512 * 512 * 9,
        conv_args,
        sched_conv,
        dict(vk=64),
        [dict(vk=16), dict(vk=32), dict(vk=48), dict(vk=64)],
        np_conv_im2col,
        "im2col + sgemm (OpenBLAS)",
        narrow_params=dict(vk=8),
        narrow_variants=[dict(vk=8), dict(vk=16), dict(vk=32)],
    ),
    "depthwise_56": Workload(
        "depthwise_56",
        2 * 256 * 56 * 56 * 9,
        dw_args,
        sched_dw,
        dict(ty=2, vx=56),
        [
            dict(ty=1, vx=56),
            dict(ty=2, vx=56),
            dict(ty=4, vx=56),
            dict(ty=7, vx=56),
            dict(ty=4, vx=28),
            dict(ty=4, vx=16),
        ],
        np_dw_shift_add,
        "9 shifted multiply-adds (numpy, 1 thread)",
        rtol=1e-5,
    ),
}


# -- measuring --------------------------------------------------------------------------


def build(wl: Workload, params: dict, threads: int) -> tuple:
    """(module, wall and CPU seconds to lower + build) for ``wl`` scheduled with ``params``."""
    sch = tir.Schedule(te.create_prim_func(wl.make()))
    wl.schedule(sch, **params)
    start, cpu = time.perf_counter(), time.thread_time()
    f = tvm.build(sch.mod, target="llvm", num_threads=threads)
    return f, time.perf_counter() - start, time.thread_time() - cpu


def inputs_for(wl: Workload, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    tensors = wl.make()
    ins = [rng.uniform(-1, 1, size=tuple(t.shape)).astype(t.dtype) for t in tensors[:-1]]
    if wl.name.startswith("chain"):  # keep exp() in a tame range
        ins = [x * np.float32(0.1) for x in ins]
    # 64-byte aligned, as TVM's arrays (numpy's large arrays start 16 bytes into a page)
    ins = [aligned_copy(x) for x in ins]
    out = aligned_copy(np.zeros(tuple(tensors[-1].shape), tensors[-1].dtype))
    return ins, out


def check(wl: Workload, f, ins: list, out: np.ndarray) -> None:
    out[...] = np.nan
    f(*ins, out)
    with threadpool_limits(limits=1, user_api="blas"):
        want = wl.numpy_fn(*ins)
    np.testing.assert_allclose(
        out, want, rtol=wl.rtol, atol=wl.rtol, err_msg=f"{wl.name}: schedule disagrees with numpy"
    )


def time_ours(f, ins: list, out: np.ndarray, min_repeat_ms: float, repeat: int) -> float:
    """Wall seconds per run: the median of ``repeat`` repeats (time_evaluator)."""
    res = f.time_evaluator(number=1, repeat=repeat, min_repeat_ms=min_repeat_ms)(*ins, out)
    return res.median


def cpu_ours(f, ins: list, out: np.ndarray, min_repeat_ms: float, repeat: int) -> float:
    """CPU seconds per run of a 1-thread module, on this thread's clock (time.thread_time):
    time the process spends descheduled by other jobs does not count."""
    per_run = time_ours(f, ins, out, 0, 1)
    number = max(5, int(min_repeat_ms / 1e3 / per_run))
    evaluate = f.time_evaluator(number=number, repeat=1)
    results = []
    for _ in range(repeat):
        start = time.thread_time()
        evaluate(*ins, out)
        results.append((time.thread_time() - start) / (number + 1))  # + its warm-up run
    return statistics.median(results)


def cpu_ours_threads(f, ins: list, out: np.ndarray, min_repeat_ms: float, repeat: int) -> float:
    """Process CPU seconds (all threads, spin-waits included) per run of a multi-thread
    module. FLOPs per CPU second over the 1-thread figure is the parallel efficiency; on an
    idle machine the wall-clock speed-up is about threads x efficiency."""
    per_run = time_ours(f, ins, out, 0, 1)
    number = max(5, int(min_repeat_ms / 1e3 / per_run))
    evaluate = f.time_evaluator(number=number, repeat=1)
    results = []
    for _ in range(repeat):
        start = time.process_time()
        evaluate(*ins, out)
        results.append((time.process_time() - start) / (number + 1))
    return statistics.median(results)


def time_numpy(
    fn: Callable,
    ins: list,
    threads: int,
    min_repeat_ms: float,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Seconds per call of ``fn`` with ``threads`` BLAS threads: the median of repeats."""
    with threadpool_limits(limits=threads, user_api="blas"):
        fn(*ins)  # warm-up
        number, results = 1, []
        for _ in range(repeat):
            while True:
                start = clock()
                for _ in range(number):
                    fn(*ins)
                elapsed = clock() - start
                if elapsed * 1e3 >= min_repeat_ms:
                    break
                number = max(
                    number * 2, int(number * min_repeat_ms / max(elapsed * 1e3, 1e-3) * 1.618)
                )
            results.append(elapsed / number)
    return statistics.median(results)


@dataclass
class Row:
    name: str
    ours1: float
    ours2: float
    np1: float
    np2: float
    ours1_cpu: float
    np1_cpu: float
    eff2: float  # 2-thread FLOPs per process CPU second / 1-thread FLOPs per CPU second
    build_s: float
    build_cpu: float
    numpy_desc: str


def measure(wl: Workload, params: dict, rounds: int, min_repeat_ms: float, repeat: int) -> Row:
    builds = [build(wl, params, 1) for _ in range(3)]
    f1 = builds[-1][0]
    build_s = statistics.median(b[1] for b in builds)
    build_cpu = statistics.median(b[2] for b in builds)
    f2 = build(wl, params, 2)[0]
    ins, out = inputs_for(wl)
    check(wl, f1, ins, out)
    check(wl, f2, ins, out)
    t: dict = {"o1": [], "o2": [], "n1": [], "n2": [], "o1c": [], "n1c": [], "o2c": []}
    for _ in range(rounds):  # interleaved: load bursts hit both sides
        t["o1"].append(time_ours(f1, ins, out, min_repeat_ms, repeat))
        t["n1"].append(time_numpy(wl.numpy_fn, ins, 1, min_repeat_ms, repeat))
        t["o2"].append(time_ours(f2, ins, out, min_repeat_ms, repeat))
        t["n2"].append(time_numpy(wl.numpy_fn, ins, 2, min_repeat_ms, repeat))
        t["o1c"].append(cpu_ours(f1, ins, out, min_repeat_ms, repeat))
        t["n1c"].append(time_numpy(wl.numpy_fn, ins, 1, min_repeat_ms, repeat, time.thread_time))
        t["o2c"].append(cpu_ours_threads(f2, ins, out, min_repeat_ms, repeat))
    g = {k: wl.flops / min(v) / 1e9 for k, v in t.items()}  # the least disturbed round
    return Row(
        wl.name,
        g["o1"],
        g["o2"],
        g["n1"],
        g["n2"],
        g["o1c"],
        g["n1c"],
        g["o2c"] / g["o1c"],
        build_s,
        build_cpu,
        wl.numpy_desc,
    )


def explore(wl: Workload, vector_bytes: int, min_repeat_ms: float, repeat: int) -> dict:
    """Time every variant (1 thread on the wall and the thread-CPU clock, 2 threads on the
    wall clock); return the best by 1-thread CPU-clock GFLOPS (robust to other jobs)."""
    variants = wl.variants_for(vector_bytes)
    print(f"\n# {wl.name}: exploring {len(variants)} schedules")
    ins, out = inputs_for(wl)
    best, best_g = wl.params_for(vector_bytes), 0.0
    for params in variants:
        try:
            f1, _, bt = build(wl, params, 1)
            f2 = build(wl, params, 2)[0]
            check(wl, f1, ins, out)
        except Exception as err:  # a variant the primitives refuse: report it, go on
            print(f"  {params}: failed: {type(err).__name__}: {str(err).splitlines()[0]}")
            continue
        g1 = wl.flops / time_ours(f1, ins, out, min_repeat_ms, repeat) / 1e9
        g1c = wl.flops / cpu_ours(f1, ins, out, min_repeat_ms, repeat) / 1e9
        g2 = wl.flops / time_ours(f2, ins, out, min_repeat_ms, repeat) / 1e9
        print(
            f"  {str(params):42s} 1T {g1:7.1f} (cpu clock {g1c:6.1f})  2T {g2:7.1f} GFLOPS"
            f"   build {bt:.3f} s (cpu)"
        )
        if g1c > best_g:
            best, best_g = params, g1c
    print(f"  best: {best}")
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), help="workloads to run")
    ap.add_argument("--explore", action="store_true", help="try tile sizes first")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    ap.add_argument("--repeat", type=int, default=5, help="repeats per measurement")
    ap.add_argument("--min-repeat-ms", type=float, default=40.0)
    args = ap.parse_args(argv)
    names = args.only or list(WORKLOADS)
    target = tvm.Target("llvm")
    print(f"ansor_lab {tvm.__version__}, target {target}, numpy {np.__version__}")
    rows = []
    for name in names:
        wl = WORKLOADS[name]
        if args.explore:
            params = explore(wl, target.vector_bytes, args.min_repeat_ms, args.repeat)
        else:
            params = wl.params_for(target.vector_bytes)
        rows.append((measure(wl, params, args.rounds, args.min_repeat_ms, args.repeat), params))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    cores = os.cpu_count() or 1
    print(
        "\nGFLOPS (best of interleaved rounds, each a median of repeats; numpy threads set "
        f"with threadpoolctl). Load average {load:.1f} on {cores} cores."
    )
    if load > cores:
        print(
            "WARNING: the machine is busy with other jobs: wall-clock figures (the 2-thread"
            " ones most) are low and noisy; the 'cpu clock' columns count only the time our"
            " threads ran, which other jobs barely disturb (see the module docstring)."
        )
    head = (
        f"{'workload':20s} {'ours 1T':>8s} {'ours 2T':>8s} {'numpy 1T':>9s} {'numpy 2T':>9s}"
        f" {'1T ratio':>9s} {'2T ratio':>9s} {'2T/1T':>6s} {'ours 1T':>8s} {'numpy 1T':>9s}"
        f" {'ratio':>6s} {'2T eff':>6s} {'build s':>8s} {'(cpu)':>6s}"
    )
    print(" " * 92 + "|----------- cpu clock ----------|")
    print(head)
    print("-" * len(head))
    for r, _ in rows:
        print(
            f"{r.name:20s} {r.ours1:8.1f} {r.ours2:8.1f} {r.np1:9.1f} {r.np2:9.1f}"
            f" {r.ours1 / r.np1:9.2f} {r.ours2 / r.np2:9.2f} {r.ours2 / r.ours1:6.2f}"
            f" {r.ours1_cpu:8.1f} {r.np1_cpu:9.1f} {r.ours1_cpu / r.np1_cpu:6.2f} {r.eff2:6.2f}"
            f" {r.build_s:8.3f} {r.build_cpu:6.3f}"
        )
    print("\nschedules and numpy peers:")
    for r, params in rows:
        print(f"  {r.name:20s} {params}  vs  {r.numpy_desc}")

    ok = True
    by = {r.name: r for r, _ in rows}
    print()
    if "matmul1024" in by:
        r = by["matmul1024"]
        checks = [
            (
                f"matmul 1024, 1 thread >= 0.8x numpy 1 thread ({r.ours1:.1f} vs "
                f"{0.8 * r.np1:.1f}; cpu clock {r.ours1_cpu:.1f} vs {0.8 * r.np1_cpu:.1f})",
                r.ours1 >= 0.8 * r.np1 or r.ours1_cpu >= 0.8 * r.np1_cpu,
            ),
            (
                f"matmul 1024, 2 threads >= 1.8x our 1 thread ({r.ours2:.1f} vs "
                f"{1.8 * r.ours1:.1f}; cpu-clock proxy: 2 x efficiency {r.eff2:.2f} = "
                f"{2 * r.eff2:.2f}x)",
                r.ours2 >= 1.8 * r.ours1 or (load > cores and 2 * r.eff2 >= 1.8),
            ),
            (
                f"tiled vectorized matmul 1024 builds in < 0.3 s ({r.build_s:.3f} s; "
                f"cpu {r.build_cpu:.3f} s)",
                r.build_s < 0.3 or r.build_cpu < 0.3,
            ),
        ]
        for text, passed in checks:
            ok &= passed
            note = ""
            if not passed and load > cores:
                note = f"  [machine busy, load {load:.1f}: rerun on an idle machine]"
            print(f"{'PASS' if passed else 'FAIL'}  {text}{note}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
