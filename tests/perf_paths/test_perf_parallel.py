"""Parallel loops are outlined and run on libgomp's thread pool: two threads really run
them (the ``record_thread_ids`` debug hook), results are right, and misuse is refused."""

from __future__ import annotations

import ctypes
import os
import re

import numpy as np
import pytest
from tiled_matmul import matmul_schedule, tile_matmul

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.codegen.llvm import load_openmp
from ansor_lab.dsl import expr as E
from ansor_lab.errors import IRError, ScheduleError
from ansor_lab.ir import nodes as N

pytestmark = pytest.mark.skipif(not load_openmp(), reason="libgomp is not installed")


def _scale(n: int = 64):
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[i, j] * 3.0 + i, name="B")
    return A, B, tir.Schedule(te.create_prim_func([A, B]))


def _expected(a: np.ndarray) -> np.ndarray:
    return a * np.float32(3.0) + np.arange(a.shape[0], dtype=np.float32)[:, None]


def test_two_threads_run_the_parallel_loop(rand):
    _, _, sch = _scale()
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    f = tvm.build(sch.mod, target="llvm", num_threads=2, record_thread_ids=True)
    assert f.threads_seen() == []  # nothing ran yet
    a = rand((64, 64))
    b = np.empty_like(a)
    f(a, b)
    assert f.threads_seen() == [0, 1]
    np.testing.assert_allclose(b, _expected(a), rtol=1e-6, atol=1e-6)
    assert "i (extent 64): parallel -> 2 threads (libgomp)" in f.loop_report()
    assert "GOMP_parallel" in f.get_source("ll")


def test_parallel_inner_loop_captures_outer_variables(rand):
    """A parallel loop under a serial one: the outer loop variable travels in the closure."""
    _, _, sch = _scale()
    _, j = sch.get_loops(sch.get_block("B"))
    sch.parallel(j)
    f = tvm.build(sch.mod, target="llvm", num_threads=2, record_thread_ids=True)
    a = rand((64, 64))
    b = np.empty_like(a)
    f(a, b)
    assert f.threads_seen() == [0, 1]
    np.testing.assert_allclose(b, _expected(a), rtol=1e-6, atol=1e-6)


def test_fewer_iterations_than_threads(rand):
    """Extent 1 with 2 threads: one thread gets an empty range, the result is still whole."""
    A = te.placeholder((1, 300), name="A")
    B = te.compute((1, 300), lambda i, j: A[i, j] + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    f = tvm.build(sch.mod, target="llvm", num_threads=2)
    a = rand((1, 300))
    b = np.zeros_like(a)
    f(a, b)
    np.testing.assert_array_equal(b, a + np.float32(1.0))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 64, 1001])
@pytest.mark.parametrize("threads", [2, 3])
def test_each_iteration_runs_once_whatever_the_extent(n, threads):
    """Each thread's contiguous block: an in-place increment shows an iteration that ran
    twice (2) or never (0)."""
    buf = N.Buffer("B", (n,), "float32")
    i = E.Var("i", "int32")
    bump = N.BufferStore(buf, N.BufferLoad(buf, (i,), "float32") + E.FloatImm(1.0, "float32"), (i,))
    func = N.PrimFunc((buf,), N.For(i, 0, n, "parallel", bump))
    f = tvm.build(func, target="llvm", num_threads=threads)
    b = np.zeros(n, np.float32)
    for _ in range(3):  # the counter starts afresh on every call
        f(b)
    np.testing.assert_array_equal(b, np.full(n, 3.0, np.float32))


@pytest.mark.parametrize("n, threads", [(4, 2), (7, 2), (9, 3), (8, 3), (1, 2)])
def test_each_thread_runs_one_contiguous_block(n, threads):
    """Thread t runs the t-th block of ceil(n / threads) iterations, the same on every
    call: the outlined body, called as thread t alone, bumps exactly that block. (Handed
    out one by one, neighbouring iterations ran on two cores at once: a depthwise conv
    whose iterations were the two 14-column halves of the same rows shared a cache line
    per row between the cores, and ran 2-7x slower when the threads' timing met.)"""
    buf = N.Buffer("B", (n,), "float32")
    i = E.Var("i", "int32")
    bump = N.BufferStore(buf, N.BufferLoad(buf, (i,), "float32") + E.FloatImm(1.0, "float32"), (i,))
    func = N.PrimFunc((buf,), N.For(i, 0, n, "parallel", bump))
    f = tvm.build(func, target="llvm", num_threads=threads)
    assert "atomicrmw add" not in f.get_source("ll")  # no shared counter
    addr = f.compiled.engine.get_function_address("main__par1_body")
    body = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)(addr)
    size = -(-n // threads)
    for t in range(threads):
        b = np.zeros(n, np.float32)
        assert body(threads, t, b.ctypes.data) == 0
        want = np.zeros(n, np.float32)
        want[t * size : (t + 1) * size] = 1.0
        np.testing.assert_array_equal(b, want)


def test_parallel_tiled_matmul_with_heap_buffer_per_iteration(rand):
    """The numpy-speed matmul schedule with ``parallel(j0)``: its packed copy of B (32 KiB,
    on the heap) is allocated inside the outlined body, once per iteration per thread."""
    n = 128
    sch = tile_matmul(matmul_schedule(n, n, n), 4, 64, parallel=True)
    f = tvm.build(sch.mod, target="llvm", num_threads=2, record_thread_ids=True)
    assert "aligned_alloc" in f.get_source("ll")
    a, b = rand((n, n)), rand((n, n))
    out = np.empty_like(a)
    f(a, b, out)
    assert f.threads_seen() == [0, 1]
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


def test_outlined_body_keeps_noalias_buffers():
    """Pointers read from the closure carry no aliasing facts; the body function takes the
    buffers as ``noalias`` arguments, so LLVM can keep an accumulator in a register."""
    n = 64
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i, j0, kk, j1)
    sch.vectorize(j1)
    sch.parallel(i)
    f = tvm.build(sch.mod, target="llvm", num_threads=2)
    ll = f.get_source("ll-unopt")
    header = re.search(r"define i32 @\"?main__par1_body\"?\((.*)\)", ll)
    assert header is not None, ll[:3000]
    assert header.group(1).count("noalias") == 3  # A, B and C


def test_one_thread_runs_the_loop_serially(rand):
    _, _, sch = _scale()
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    f = tvm.build(sch.mod, target="llvm", num_threads=1)
    assert "GOMP_parallel" not in f.get_source("ll")
    assert "parallel -> serial (one thread)" in f.loop_report()
    a = rand((64, 64))
    b = np.empty_like(a)
    f(a, b)
    np.testing.assert_allclose(b, _expected(a), rtol=1e-6, atol=1e-6)


def test_default_thread_count_is_the_targets_cores():
    _, _, sch = _scale()
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    cores = tvm.Target("llvm").num_cores
    report = tvm.build(sch.mod, target="llvm").loop_report()
    expected = f"{cores} threads (libgomp)" if cores > 1 else "serial (one thread)"
    assert expected in report


@pytest.mark.parametrize("order", ["parallel_after_compute_at", "compute_at_after_parallel"])
def test_nested_parallel_is_rejected_with_a_clear_error(order):
    """A parallel loop inside another (here via compute_at under a parallel loop) is refused,
    by the schedule primitive or at the latest by build's IR verifier, saying what to do."""
    n = 64
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[i, j] * 3.0, name="B")
    C = te.compute((n, n), lambda i, j: B[i, j] + 1.0, name="C")
    sch = tir.Schedule(te.create_prim_func([A, C]))
    b, c = sch.get_block("B"), sch.get_block("C")
    i, _ = sch.get_loops(c)
    with pytest.raises((ScheduleError, IRError)) as err:
        if order == "parallel_after_compute_at":
            sch.parallel(i)
            sch.compute_at(b, i)
            sch.parallel(sch.get_loops(b)[-1])
        else:
            sch.parallel(sch.get_loops(b)[-1])
            sch.parallel(i)
            sch.compute_at(b, i)
        tvm.build(sch.mod, target="llvm", num_threads=2)
    msg = str(err.value)
    assert "parallel" in msg and "inside" in msg and "parallelize only the outer one" in msg


def test_parallel_reduction_loop_is_refused():
    n = 32
    A = te.placeholder((n, n), name="A")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, C]))
    _, kk = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="cannot parallelize a reduction loop"):
        sch.parallel(kk)


_CALL_THEN_EXIT = """
import os, numpy as np, ansor_lab as tvm
from ansor_lab import te
A = te.placeholder((128, 768), name="A")
B = te.compute((128, 768), lambda i, j: A[i, j] * 2.0, name="B")
s = te.create_schedule(B.op)
s[B].parallel(s[B].op.axis[0])
f = tvm.build(s, [A, B], target="llvm -num-cores=2", num_threads=2)
a = np.ones((128, 768), "float32")
b = np.empty_like(a)
for _ in range(200):
    f(a, b)
assert (b == 2).all()
print(os.environ["OMP_WAIT_POLICY"], os.environ["GOMP_SPINCOUNT"])
"""


def test_idle_pool_threads_spin_briefly_and_the_process_exits_cleanly():
    # libgomp's threads spin a little before they sleep (a futex wake-up per call made
    # a 7.7 us kernel take 33 us on two threads); the process must still exit with 0
    # right after a burst of calls (a long spin crashed the exit every time)
    import subprocess  # noqa: PLC0415 - this test's need
    import sys  # noqa: PLC0415

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    for _ in range(4):
        out = subprocess.run(
            [sys.executable, "-c", _CALL_THEN_EXIT], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.split() == ["PASSIVE", "20000"]
