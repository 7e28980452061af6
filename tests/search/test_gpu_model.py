"""The analytic GPU model: its directions, and one case computed by hand."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.search.gpu_model import LAUNCH_S, estimate

# an H100-like GPU pinned here, so the numbers do not move with the named targets
H100 = SimpleNamespace(
    arch="sm_90",
    model="test-H100",
    sm_count=132,
    max_threads_per_sm=2048,
    max_blocks_per_sm=32,
    registers_per_sm=65536,
    registers_per_block=65536,
    max_shared_memory_per_sm=233472,
    memory_bandwidth_gbs=3350,
    peak_gflops_fp32=66900,
    l2_bytes=50 << 20,
    clock_ghz=1.98,
)


def program(s, args):
    return split_kernels(tvm.lower(s, args)["main"])


def scale(n: int, block: int, per_thread: int = 1):
    """B = 2 * A over n elements, ``per_thread`` elements per thread in a serial loop."""
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    outer, inner = s[B].split(B.op.axis[0], factor=block * per_thread)
    serial, tx = s[B].split(inner, factor=block)
    s[B].bind(outer, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    s[B].reorder(outer, tx, serial)
    return program(s, [A, B])


def copy(n: int, transposed: bool, shared: bool = False):
    """B = A or A^T, 32x32 blocks with one thread per element (optionally through shared)."""
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), (lambda i, j: A[j, i]) if transposed else (lambda i, j: A[i, j]))
    s = te.create_schedule(B.op)
    i, j = B.op.axis
    bi, ti = s[B].split(i, factor=32)
    bj, tj = s[B].split(j, factor=32)
    s[B].reorder(bi, bj, ti, tj)
    s[B].bind(bi, te.thread_axis("blockIdx.y"))
    s[B].bind(bj, te.thread_axis("blockIdx.x"))
    s[B].bind(ti, te.thread_axis("threadIdx.y"))
    s[B].bind(tj, te.thread_axis("threadIdx.x"))
    if shared:
        S = s.cache_read(A, "shared", [B])
        s[S].compute_at(s[B], bj)
        a0, a1 = s[S].op.axis
        s[S].bind(a0, te.thread_axis("threadIdx.y"))
        s[S].bind(a1, te.thread_axis("threadIdx.x"))
    return program(s, [A, B])


def matmul(n: int, shared: bool):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    bi, ti = s[C].split(i, factor=16)
    bj, tj = s[C].split(j, factor=16)
    s[C].reorder(bi, bj, ti, tj)
    for ax, tag in (
        (bi, "blockIdx.y"),
        (bj, "blockIdx.x"),
        (ti, "threadIdx.y"),
        (tj, "threadIdx.x"),
    ):
        s[C].bind(ax, te.thread_axis(tag))
    if shared:
        ko, _ = s[C].split(s[C].op.reduce_axis[0], factor=16)
        s[C].reorder(ko, ti, tj)
        for X in (s.cache_read(A, "shared", [C]), s.cache_read(B, "shared", [C])):
            s[X].compute_at(s[C], ko)
            a0, a1 = s[X].op.axis
            s[X].bind(a0, te.thread_axis("threadIdx.y"))
            s[X].bind(a1, te.thread_axis("threadIdx.x"))
    return program(s, [A, B, C])


def test_hand_computed_elementwise_kernel():
    # 2^20 floats, 256 threads per block: 4096 blocks; 8 blocks/SM (2048 threads per SM)
    est = estimate(scale(1 << 20, 256), H100)
    (k,) = est.breakdown
    assert (k.grid, k.block, k.blocks_per_sm, k.limiter) == (
        (4096, 1, 1),
        (256, 1, 1),
        8,
        "threads",
    )
    assert k.flops == 1 << 20
    # each warp reads 32 floats = 4 sectors and writes 4: 8 bytes per element, no waste
    assert k.global_bytes == k.useful_bytes == 8 << 20
    assert k.dram_bytes == 8 << 20 and k.l2_bytes == 0  # 8 MiB fits the 50 MiB L2
    assert k.waves == 4  # ceil(4096 / (132 SMs x 8 blocks))
    tail = 4096 / (4 * 132 * 8)
    assert k.occupancy == 1.0
    # 64 warps x 4 loads x 128 B in flight >= 3350 GB/s / 132 SMs x 600 ns: full bandwidth
    assert k.t_memory == pytest.approx((8 << 20) / (3350e9 * tail))
    assert k.t_compute == pytest.approx((1 << 20) / (66900e9 * tail))
    assert k.t_shared == 0.0
    assert est.seconds == pytest.approx(k.t_memory + LAUNCH_S)  # 2.58 us + 5 us launch
    assert est.seconds == pytest.approx(7.582e-6, rel=1e-3)
    assert k.bound == "memory" and k.registers == 16


def test_coalesced_beats_strided():
    straight, strided = copy(1024, False), copy(1024, True)
    a, b = estimate(straight, H100).breakdown[0], estimate(strided, H100).breakdown[0]
    assert a.coalescing == 1.0
    # the transposed read: 32 lanes 1024 floats apart touch 32 sectors for 128 useful bytes
    assert b.global_bytes == pytest.approx(a.global_bytes / 2 + a.global_bytes / 2 * 8)
    assert b.coalescing == pytest.approx(2 / 9)
    # big enough to leave L2: the wasted sectors are DRAM traffic
    big = SimpleNamespace(**{**vars(H100), "l2_bytes": 1 << 20})
    slow, fast = estimate(strided, big).breakdown[0], estimate(straight, big).breakdown[0]
    assert slow.t_memory == pytest.approx(4.5 * fast.t_memory)  # 9 sectors where 2 do
    assert estimate(strided, H100).seconds > estimate(straight, H100).seconds


def test_shared_tiling_reduces_global_traffic():
    naive, tiled = estimate(matmul(256, False), H100), estimate(matmul(256, True), H100)
    (n,), (t,) = naive.breakdown, tiled.breakdown
    assert n.flops == t.flops == 2 * 256**3
    # naive: every thread reads A and B from global memory for each k (A's row is a
    # broadcast within a warp); tiled: each element once per 16x16 tile of its block
    naive_ab = {b: v for b, v in n.by_buffer if b in ("A", "B")}
    tiled_ab = {b: v for b, v in t.by_buffer if b in ("A", "B")}
    # a warp is 16x2 threads. Naive, for each of 256 k: A[i, k] is 2 rows (2 sectors) and
    # B[k, j] 16 floats (2 sectors). Tiled, for each of 16 k tiles, each thread fetches one
    # element of each tile: 2 rows of 16 floats (4 sectors): 8x less traffic

    warps = 16 * 16 * 8
    assert naive_ab == {"A": warps * 256 * 2 * 32, "B": warps * 256 * 2 * 32}
    assert tiled_ab == {"A": warps * 16 * 4 * 32, "B": warps * 16 * 4 * 32}
    assert t.global_bytes < n.global_bytes
    assert t.shared_wavefronts > 0 and n.shared_wavefronts == 0
    assert t.shared_bytes == 2 * 16 * 16 * 4 + 1024  # two tiles + the per-block reserve
    assert tiled.seconds < naive.seconds


def test_more_occupancy_helps_a_latency_bound_kernel():
    n = 132 * 256
    few = estimate(scale(n, 32, per_thread=8), H100).breakdown[0]  # 1 warp per SM
    many = estimate(scale(n, 256), H100).breakdown[0]  # 8 warps per SM
    assert few.global_bytes == many.global_bytes and few.flops == many.flops
    assert few.occupancy < many.occupancy
    # Little's law: 1 vs 8 warps x 4 loads x 128 bytes in flight, of the ~15 KB an SM needs
    assert few.t_memory == pytest.approx(8 * many.t_memory)
    assert few.seconds > many.seconds


def test_bank_conflicts_are_slower():
    plain, conflicted = copy(1024, False, shared=True), copy(1024, True, shared=True)
    p, c = estimate(plain, H100).breakdown[0], estimate(conflicted, H100).breakdown[0]
    assert p.worst_bank_conflict == 1
    # reading S[tx, ty]: 32 lanes 32 words apart all hit one bank
    assert c.worst_bank_conflict == 32
    assert p.global_bytes == c.global_bytes  # the global side is coalesced in both
    assert c.t_shared > 10 * p.t_shared
    assert c.seconds > p.seconds and c.bound == "shared"


def test_a_block_that_cannot_be_resident_is_infinitely_slow():
    small = SimpleNamespace(**{**vars(H100), "max_shared_memory_per_sm": 1024})
    est = estimate(copy(64, False, shared=True), small)
    assert est.breakdown[0].blocks_per_sm == 0 and est.seconds == float("inf")
    assert "occupancy" in str(estimate(copy(64, False, shared=True), H100))


def test_ptxas_registers_replace_the_estimate():
    prog = scale(1 << 20, 256)
    own = estimate(prog, H100).breakdown[0]
    ptxas = estimate(prog, H100, {"main_kernel0": 255}).breakdown[0]
    assert own.registers == 16 and ptxas.registers == 255
    # 255 registers x 256 threads (rounded up per warp to 8192 per warp): 1 block per SM
    assert (ptxas.blocks_per_sm, ptxas.limiter) == (1, "registers")
    assert ptxas.occupancy < own.occupancy and ptxas.seconds > own.seconds
