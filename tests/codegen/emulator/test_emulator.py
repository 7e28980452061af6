"""The GPU emulator: CUDA schedules run on the CPU equal to numpy, in both modes."""

from __future__ import annotations

import numpy as np
import pytest
from emu_programs import block_sum, short_loop_kernel, tiled_matmul, transpose_shared

import ansor_lab as tvm
from ansor_lab import te, topi
from ansor_lab.codegen.emulator import compile_program, emulate
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.errors import RuntimeArgumentError

RNG = np.random.default_rng(7)


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype("float32")


def bind(s, stage, axis, tag: str) -> None:
    s[stage].bind(axis, te.thread_axis(tag))


def both_modes(func, arrays: list, out_index: int) -> list:
    """The output emulated with and without checks (the same up to rounding: the two
    builds may contract multiply-adds differently)."""
    results = []
    for check in (True, False):
        arrs = [a.copy() for a in arrays]
        arrs[out_index][...] = 99
        emulate(func, arrs, check=check)
        results.append(arrs[out_index])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)
    return results


def test_elementwise_chain_two_kernels_and_a_temporary():
    n = 300
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((n,), lambda i: B[i] + 1.0, name="C")
    s = te.create_schedule(C.op)
    for T in (B, C):
        bo, ti = s[T].split(T.op.axis[0], factor=64)
        bind(s, T, bo, "blockIdx.x")
        bind(s, T, ti, "threadIdx.x")
    func = tvm.lower(s, [A, C])["main"]
    prog = split_kernels(func)
    assert len(prog.kernels) == 2 and len(prog.temporaries) == 1
    a = rand(n)
    got = both_modes(func, [a, np.zeros(n, "float32")], 1)
    np.testing.assert_allclose(got[0], a * 2 + 1, rtol=1e-6)


def test_transpose_2d_blocks_and_threads():
    A = te.placeholder((40, 24), name="A")
    B = te.compute((24, 40), lambda i, j: A[j, i], name="B")
    s = te.create_schedule(B.op)
    i, j = B.op.axis
    io, ii = s[B].split(i, factor=8)
    jo, ji = s[B].split(j, factor=8)
    s[B].reorder(io, jo, ii, ji)
    for ax, tag in (
        (io, "blockIdx.y"),
        (jo, "blockIdx.x"),
        (ii, "threadIdx.y"),
        (ji, "threadIdx.x"),
    ):
        bind(s, B, ax, tag)
    func = tvm.lower(s, [A, B])["main"]
    assert split_kernels(func).kernels[0].grid == (5, 3, 1)
    a = rand(40, 24)
    got = both_modes(func, [a, np.zeros((24, 40), "float32")], 1)
    np.testing.assert_array_equal(got[0], a.T)


def test_matmul_local_accumulator_and_vthread():
    n, m, k = 64, 48, 40
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    C = topi.nn.matmul(A, B)
    s = te.create_schedule(C.op)
    CL = s.cache_write(C, "local")
    i, j = C.op.axis
    bi, i2 = s[C].split(i, factor=16)
    vi, ti = s[C].split(i2, nparts=2)
    bj, tj = s[C].split(j, factor=8)
    s[C].reorder(bi, bj, vi, ti, tj)
    for ax, tag in (
        (bi, "blockIdx.y"),
        (bj, "blockIdx.x"),
        (vi, "vthread"),
        (ti, "threadIdx.y"),
        (tj, "threadIdx.x"),
    ):
        bind(s, C, ax, tag)
    s[CL].compute_at(s[C], tj)
    func = tvm.lower(s, [A, B, C])["main"]
    kernel = split_kernels(func).kernels[0]
    assert (kernel.grid, kernel.block) == ((6, 4, 1), (8, 8, 1))
    a, b = rand(n, k), rand(k, m)
    got = both_modes(func, [a, b, np.zeros((n, m), "float32")], 2)
    np.testing.assert_allclose(got[0], a @ b, rtol=1e-4, atol=1e-5)


def test_softmax_rows_per_thread():
    X = te.placeholder((37, 29), name="X")
    Y = topi.nn.softmax(X)
    s = te.create_schedule(Y.op)
    # every stage at root is its own kernel: rows over blocks x threads
    for t in _ops(Y):
        row = t.axis[0]
        bo, ti = s[t.output(0)].split(row, factor=16)
        bind(s, t.output(0), bo, "blockIdx.x")
        bind(s, t.output(0), ti, "threadIdx.x")
    func = tvm.lower(s, [X, Y])["main"]
    assert len(split_kernels(func).kernels) >= 3
    x = rand(37, 29) * 4
    got = both_modes(func, [x, np.zeros((37, 29), "float32")], 1)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(got[0], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def _ops(T):
    """The compute ops of T's DAG, producers first."""
    seen, out = set(), []

    def visit(t):
        op = t.op
        if id(op) in seen or not hasattr(op, "body"):
            return
        seen.add(id(op))
        for inp in op.input_tensors:
            visit(inp)
        out.append(op)

    visit(T)
    return out


@pytest.mark.parametrize("n,tile", [(32, 8), (48, 16)])
def test_shared_tiled_matmul_with_barriers(n, tile):
    a, b = rand(n, n), rand(n, n)
    got = both_modes(tiled_matmul(n, tile), [a, b, np.zeros((n, n), "float32")], 2)
    np.testing.assert_allclose(got[0], a @ b, rtol=1e-4, atol=1e-5)


def test_shared_tree_reduction():
    x = rand(4, 32)
    got = both_modes(block_sum(), [x, np.zeros(4, "float32")], 1)
    np.testing.assert_allclose(got[0], x.sum(1), rtol=1e-5, atol=1e-6)


def test_shared_transpose_with_let_across_the_barrier():
    a = rand(32, 32)
    got = both_modes(transpose_shared(), [a, np.zeros((32, 32), "float32")], 1)
    np.testing.assert_array_equal(got[0], a.T)


def test_a_data_dependent_uniform_barrier_condition_runs():
    """The condition around a barrier reads memory: checked at run time, equal here."""
    x = rand(4, 32)  # every value < 2: every thread takes the barrier
    got = both_modes(block_sum(divergent="dynamic"), [x, np.zeros(4, "float32")], 1)
    np.testing.assert_allclose(got[0], x.sum(1), rtol=1e-5, atol=1e-6)


def test_a_short_thread_loop_is_guarded():
    x = rand(2, 32)
    got = both_modes(short_loop_kernel(), [x, np.zeros((2, 32), "float32")], 1)
    want = x.copy()
    want[:, :24] *= 10
    np.testing.assert_allclose(got[0], want, rtol=1e-6)


def test_compiled_once_per_function_and_mode():
    func = block_sum()
    p1 = compile_program(func, check=True)
    assert compile_program(func, check=True) is p1
    assert compile_program(func, check=False) is not p1


def test_arguments_are_checked():
    func = block_sum()
    with pytest.raises(RuntimeArgumentError, match="takes 2 arrays"):
        emulate(func, [np.zeros((4, 32), "float32")])
    with pytest.raises(RuntimeArgumentError, match="dtype float64"):
        emulate(func, [np.zeros((4, 32)), np.zeros(4, "float32")])
    with pytest.raises(RuntimeArgumentError, match="shape"):
        emulate(func, [np.zeros((4, 31), "float32"), np.zeros(4, "float32")])
    with pytest.raises(RuntimeArgumentError, match="KernelProgram"):
        emulate("main", [])


@pytest.mark.parametrize("fetch_y", [False, True])
def test_te_matmul_with_shared_tiles_from_the_gpu_lowering(fetch_y):
    """TVM's GEMM recipe: local accumulator, shared tiles of A and B filled cooperatively
    at the outer reduction loop (the lowering sizes them for the block and puts the
    barriers). With ``fetch_y=False`` the fetch is bound to threadIdx.x only, so every
    row of threads writes the same tile: the same values, which is no race."""
    n = 64
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = topi.nn.matmul(A, B)
    s = te.create_schedule(C.op)
    CL = s.cache_write(C, "local")
    AA = s.cache_read(A, "shared", [CL])
    BB = s.cache_read(B, "shared", [CL])
    i, j = C.op.axis
    bi, ti = s[C].split(i, factor=8)
    bj, tj = s[C].split(j, factor=8)
    s[C].reorder(bi, bj, ti, tj)
    for ax, tag in (
        (bi, "blockIdx.y"),
        (bj, "blockIdx.x"),
        (ti, "threadIdx.y"),
        (tj, "threadIdx.x"),
    ):
        bind(s, C, ax, tag)
    s[CL].compute_at(s[C], tj)
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=8)
    for T in (AA, BB):
        s[T].compute_at(s[CL], ko)
        rest, fx = s[T].split(s[T].fuse(*s[T].op.axis), factor=8)
        bind(s, T, fx, "threadIdx.x")
        if fetch_y:
            _, fy = s[T].split(rest, factor=8)
            bind(s, T, fy, "threadIdx.y")
    func = tvm.lower(s, [A, B, C])["main"]
    assert "tvm_storage_sync" in str(func)
    kernel = split_kernels(func).kernels[0]
    assert [b.shape for b in kernel.shared] in ([(8, 8), (8, 8)],)
    a, b = rand(n, n), rand(n, n)
    got = both_modes(func, [a, b, np.zeros((n, n), "float32")], 2)
    np.testing.assert_allclose(got[0], a @ b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("threads", [32, 24])
def test_row_sum_cross_thread_reduction(threads):
    """A reduction loop bound to threadIdx.x: per-thread partials, a shared tree with
    barriers, thread 0 stores (24 threads: a tree over a non-power of two)."""
    A = te.placeholder((5, 1000), name="A")
    k = te.reduce_axis((0, 1000), name="k")
    B = te.compute((5,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    _, ki = s[B].split(B.op.reduce_axis[0], factor=threads)
    bind(s, B, B.op.axis[0], "blockIdx.x")
    bind(s, B, ki, "threadIdx.x")
    func = tvm.lower(s, [A, B])["main"]
    a = rand(5, 1000)
    got = both_modes(func, [a, np.zeros(5, "float32")], 1)
    np.testing.assert_allclose(got[0], a.sum(1), rtol=1e-4, atol=1e-5)


def test_softmax_cross_thread_reductions_tvm_schedule():
    """TVM's topi.cuda softmax schedule: rfactor + bind for the max and the sum."""
    n, m, num_thread = 6, 1000, 64
    x = te.placeholder((n, m), name="x")
    k = te.reduce_axis((0, m), name="k")
    max_elem = te.compute((n,), lambda i: te.max(x[i, k], axis=k), name="max_elem")
    e = te.compute((n, m), lambda i, j: te.exp(x[i, j] - max_elem[i]), name="exp")
    k2 = te.reduce_axis((0, m), name="k2")
    expsum = te.compute((n,), lambda i: te.sum(e[i, k2], axis=k2), name="expsum")
    out = te.compute((n, m), lambda i, j: e[i, j] / expsum[i], name="softmax")
    s = te.create_schedule(out.op)
    block_x = te.thread_axis("blockIdx.x")
    thread_x = te.thread_axis((0, num_thread), "threadIdx.x")
    xo, _ = s[out].split(out.op.axis[1], nparts=num_thread)
    s[out].bind(xo, thread_x)
    s[out].bind(out.op.axis[0], block_x)
    for red in (expsum, max_elem):
        _, ki = s[red].split(red.op.reduce_axis[0], factor=num_thread)
        RF = s.rfactor(red, ki)
        s[red].bind(s[red].op.axis[0], block_x)
        s[red].bind(s[red].op.reduce_axis[0], thread_x)
        s[RF].compute_at(s[red], s[red].op.reduce_axis[0])
        s[red].set_store_predicate(thread_x.var.equal(0))
    s[e].bind(e.op.axis[0], block_x)
    _, xi = s[e].split(e.op.axis[1], factor=num_thread)
    s[e].bind(xi, thread_x)
    func = tvm.lower(s, [x, out])["main"]
    assert len(split_kernels(func).kernels) == 4
    xv = rand(n, m) * 5
    got = both_modes(func, [xv, np.zeros((n, m), "float32")], 1)
    ref = np.exp(xv - xv.max(1, keepdims=True))
    np.testing.assert_allclose(got[0], ref / ref.sum(1, keepdims=True), rtol=1e-5, atol=1e-8)


def unrolled_matmul(n: int = 32, k: int = 24):
    """C = A @ B, a thread per element, its k loop split and the inner part unrolled."""
    A, B = te.placeholder((n, k), name="A"), te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    bind(s, C, i, "blockIdx.x")
    bind(s, C, j, "threadIdx.x")
    ro, ri = s[C].split(C.op.reduce_axis[0], factor=8)
    s[C].unroll(ri)
    return tvm.lower(s, [A, B, C])["main"], n, k


def loop_kinds(func) -> set:
    from ansor_lab.ir import nodes as N  # noqa: PLC0415
    from ansor_lab.ir.visitor import walk_stmts  # noqa: PLC0415

    return {s.kind for s in walk_stmts(func.body) if isinstance(s, N.For)}


def test_check_mode_compiles_unrolled_loops_as_loops_with_the_same_result():
    func, n, k = unrolled_matmul()
    assert "unrolled" in loop_kinds(func)
    # check mode runs a candidate once: its unrolled loops stay loops (a fraction of the
    # code to compile); the fast mode keeps them unrolled
    assert "unrolled" not in loop_kinds(compile_program(func, check=True).func)
    assert "unrolled" in loop_kinds(compile_program(func, check=False).func)
    a, b = rand(n, k), rand(k, n)
    got = both_modes(func, [a, b, np.zeros((n, n), "float32")], 2)
    np.testing.assert_allclose(got[0], a @ b, rtol=1e-5, atol=1e-5)
