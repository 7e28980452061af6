"""The MLC course's GPU chapter (scripts/mlc_gpu_acceleration.py) without a GPU: each of
its schedules, written as the chapter writes them, built for CUDA and run on the GPU
emulator against numpy (its GEMMs at 128 instead of 1024, so the emulator stays quick)."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab.script import from_source

VEC_ADD = """
@tvm.script.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer[(1024,), "float32"], B: T.Buffer[(1024,), "float32"]) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + 1.0
"""

WINDOW_SUM = """
@tvm.script.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer[(1027,), "float32"], B: T.Buffer[(1024,), "float32"]) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
"""

MATMUL = """
@tvm.script.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer[(128, 128), "float32"], B: T.Buffer[(128, 128), "float32"],
             C: T.Buffer[(128, 128), "float32"]) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def blocking(sch, tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k):
    block_C = sch.get_block("C")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2 = sch.split(loop=i, factors=[None, tile_block_y, tile_local_y])
    j0, j1, j2 = sch.split(loop=j, factors=[None, tile_block_x, tile_local_x])
    k0, k1 = sch.split(loop=k, factors=[None, tile_k])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    sch.decompose_reduction(block_C, k0)
    return sch


def cache_read_and_coop_fetch(sch, block, nthread, read_idx, read_loc):
    read_cache = sch.cache_read(block=block, read_buffer_index=read_idx, storage_scope="shared")
    sch.compute_at(block=read_cache, loop=read_loc)
    inner0, inner1 = sch.get_loops(block=read_cache)[-2:]
    inner = sch.fuse(inner0, inner1)
    _, tx, vec = sch.split(loop=inner, factors=[None, nthread, 4])
    sch.vectorize(vec)
    sch.bind(tx, "threadIdx.x")


def blocking_with_shared(sch, tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k):
    block_C = sch.get_block("C")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2 = sch.split(loop=i, factors=[None, tile_block_y, tile_local_y])
    j0, j1, j2 = sch.split(loop=j, factors=[None, tile_block_x, tile_local_x])
    k0, k1 = sch.split(loop=k, factors=[None, tile_k])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    tx = sch.fuse(i1, j1)
    sch.bind(tx, "threadIdx.x")
    nthread = tile_block_y * tile_block_x
    cache_read_and_coop_fetch(sch, block_C, nthread, 0, k0)
    cache_read_and_coop_fetch(sch, block_C, nthread, 1, k0)
    sch.decompose_reduction(block_C, k0)
    return sch


def built(sch):
    mod = tvm.build(sch.mod, target="cuda")
    src = mod.imported_modules[0].get_source()
    assert "__global__" in src
    return mod, src


def test_the_vector_add_bound_to_blocks_and_threads():
    sch = tvm.tir.Schedule(from_source(VEC_ADD))
    (i,) = sch.get_loops(block=sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    mod, src = built(sch)
    assert "dim3(8, 1, 1), dim3(128, 1, 1)" in src
    a = np.random.default_rng(0).random(1024, dtype="float32")
    b = np.zeros(1024, "float32")
    mod.emulate(a, b)
    np.testing.assert_allclose(b, a + 1)


def test_the_window_sum_fills_its_shared_cache_cooperatively():
    sch = tvm.tir.Schedule(from_source(WINDOW_SUM))
    block_C = sch.get_block("C")
    (i,) = sch.get_loops(block=block_C)
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    A_shared = sch.cache_read(block_C, read_buffer_index=0, storage_scope="shared")
    sch.compute_at(A_shared, i1)
    ax = sch.get_loops(A_shared)[-1]
    _, ax1 = sch.split(ax, [None, 128])
    sch.bind(ax1, "threadIdx.x")
    mod, src = built(sch)
    assert "__shared__" in src and "__syncthreads()" in src
    a = np.random.default_rng(1).random(1027, dtype="float32")
    b = np.zeros(1024, "float32")
    mod.emulate(a, b)  # a race or a read past the cache would be reported here
    np.testing.assert_allclose(b, a[:1024] + a[1:1025] + a[2:1026], rtol=1e-6)


@pytest.mark.parametrize("schedule", [blocking, blocking_with_shared])
def test_the_blocked_gemms_equal_numpy(schedule):
    sch = schedule(tvm.tir.Schedule(from_source(MATMUL)), 8, 8, 8, 8, 4)
    mod, src = built(sch)
    assert ("__shared__" in src) == (schedule is blocking_with_shared)
    rng = np.random.default_rng(2)
    a, b = rng.random((128, 128), dtype="float32"), rng.random((128, 128), dtype="float32")
    c = np.zeros((128, 128), "float32")
    mod.emulate(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
