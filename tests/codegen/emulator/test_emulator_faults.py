"""Planted faults: each caught by the emulator's check mode with the right report."""

from __future__ import annotations

import numpy as np
import pytest
from emu_programs import block_sum, bound, short_loop_kernel, tiled_matmul, transpose_shared

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.emulator import emulate
from ansor_lab.dsl import expr as E
from ansor_lab.errors import (
    GPUBarrierError,
    GPUEmulationError,
    GPUOutOfBoundsError,
    GPURaceError,
    KernelRuntimeError,
)
from ansor_lab.ir import gpu, nodes as N
from ansor_lab.ir.visitor import IRMutator

RNG = np.random.default_rng(3)


def mm_arrays(n: int = 32) -> list:
    a = RNG.uniform(-1, 1, (n, n)).astype("float32")
    b = RNG.uniform(-1, 1, (n, n)).astype("float32")
    return [a, b, np.zeros((n, n), "float32")]


def catch(func, arrays, cls=GPUEmulationError) -> GPUEmulationError:
    with pytest.raises(cls) as info:
        emulate(func, arrays, check=True)
    err = info.value
    assert isinstance(err, KernelRuntimeError)
    return err


def test_missing_barrier_between_fill_and_use():
    err = catch(tiled_matmul(first_barrier=False), mm_arrays(), GPURaceError)
    # thread 0 read A_shared[0, 1] before thread (1, 0, 0) wrote it, in one phase
    assert (err.kernel, err.block, err.thread) == ("tiled_matmul_kernel0", (0, 0, 0), (1, 0, 0))
    assert (err.buffer, err.index) == ("A_shared", (0, 1))
    assert "writes another value into it after thread (0, 0, 0) read it" in str(err)
    assert "block (0, 0, 0), thread (1, 0, 0)" in str(err)


def test_missing_barrier_between_use_and_next_fill():
    err = catch(tiled_matmul(second_barrier=False), mm_arrays(), GPURaceError)
    # the next tile's fill overwrites A_shared[0, 0] while the others still read it
    assert (err.thread, err.buffer, err.index) == ((0, 0, 0), "A_shared", (0, 0))
    assert "after several other threads read it" in str(err)


def test_racing_shared_write():
    err = catch(tiled_matmul(racing_write=True), mm_arrays(), GPURaceError)
    assert (err.thread, err.buffer, err.index) == ((1, 0, 0), "A_shared", (0, 0))
    assert "writes another value into it after thread (0, 0, 0) wrote it" in str(err)


def test_missing_barrier_in_a_transpose_tile():
    err = catch(
        transpose_shared(barrier=False),
        [np.ones((32, 32), "float32"), np.zeros((32, 32), "float32")],
        GPURaceError,
    )
    assert (err.buffer, err.thread) == ("T", (0, 1, 0))


def test_out_of_bounds_read():
    err = catch(tiled_matmul(a_shift=1), mm_arrays(), GPUOutOfBoundsError)
    # the last column of the first tile row reads A[0, 32] in block (0, 0), on ko = 3
    assert (err.block, err.thread, err.buffer, err.index) == ((0, 0, 0), (7, 0, 0), "A", (0, 32))
    assert "out-of-bounds read of global buffer 'A' (shape (32, 32)) at index (0, 32)" in str(err)
    assert isinstance(err, IndexError)


def test_out_of_bounds_write_from_a_schedule():
    """A te schedule whose store index runs past the output (a hand-written index bug)."""
    n = 40
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i], name="B")
    s = te.create_schedule(B.op)
    bo, ti = s[B].split(B.op.axis[0], factor=8)
    s[B].bind(bo, te.thread_axis("blockIdx.x"))
    s[B].bind(ti, te.thread_axis("threadIdx.x"))
    func = tvm.lower(s, [A, B])["main"]
    # plant the bug: B[i + 1] = A[i]
    shifted = _shift_store(func.body)
    err = catch(
        func.with_body(shifted),
        [np.ones(n, "float32"), np.zeros(n, "float32")],
        GPUOutOfBoundsError,
    )
    assert (err.block, err.thread, err.buffer, err.index) == ((4, 0, 0), (7, 0, 0), "B", (40,))
    assert "out-of-bounds write" in str(err)


def _shift_store(s):
    class Shift(IRMutator):
        def stmt_BufferStore(self, st):
            return N.BufferStore(st.buffer, st.value, (st.indices[0] + 1,))

    return Shift().visit_stmt(s)


def test_divergent_barrier_found_before_running():
    err = catch(
        block_sum(divergent="static"),
        [np.ones((4, 32), "float32"), np.zeros(4, "float32")],
        GPUBarrierError,
    )
    assert err.thread == (16, 0, 0) and err.block is None
    assert "threadIdx_x < 16" in str(err) and "thread (16, 0, 0) gets False" in str(err)


def test_divergent_barrier_found_at_run_time():
    x = np.ones((4, 32), "float32")
    x[2, 5] = 3.0  # thread 5 of block 2 skips the barrier
    err = catch(block_sum(divergent="dynamic"), [x, np.zeros(4, "float32")], GPUBarrierError)
    assert (err.kernel, err.block, err.thread) == ("block_sum_kernel0", (2, 0, 0), (5, 0, 0))
    assert "not reached by every thread" in str(err)


def test_barrier_inside_a_short_thread_loop_is_divergent():
    with pytest.raises(GPUBarrierError) as info:
        emulate(
            short_loop_kernel(barrier_inside=True),
            [np.ones((2, 32), "float32"), np.zeros((2, 32), "float32")],
        )
    assert info.value.thread == (24, 0, 0)
    assert "threadIdx.x >= 24" in str(info.value)


def test_barrier_in_a_loop_with_a_thread_dependent_trip_count():
    X = N.Buffer("X", (8,), "float32")
    sh = N.Buffer("sh", (8,), "float32", "shared")

    def body(t):
        k = E.Var("k", "int32")
        loop = N.For(k, E.IntImm(0, "int32"), t + 1, "serial", gpu.barrier())
        return N.seq(N.BufferStore(sh, X[t], (t,)), loop, N.BufferStore(X, sh[t], (t,)))

    func = N.PrimFunc(
        (X,),
        bound("b", 1, "blockIdx.x", lambda b: N.Allocate(sh, bound("t", 8, "threadIdx.x", body))),
        "trip",
    )
    err = catch(func, [np.ones(8, "float32")], GPUBarrierError)
    assert err.thread == (1, 0, 0)
