"""Cross-thread reductions (a reduction loop bound to threadIdx): softmax, row sums, norms."""

import sys
from pathlib import Path

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.codegen.gpu_verify import check_gpu_program
from ansor_lab.errors import GPUScheduleError, ScheduleError

sys.path.insert(0, str(Path(__file__).parent))
from gpu_interp import run_gpu  # noqa: E402

SYNC = 'T.tvm_storage_sync("shared")'


def row_sum(n, m):
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    return A, te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")


@pytest.mark.parametrize("threads", [16, 12])
def test_row_sum_direct_bind(threads):
    A, B = row_sum(3, 50)
    s = te.create_schedule(B.op)
    _, ki = s[B].split(B.op.reduce_axis[0], factor=threads)
    s[B].bind(B.op.axis[0], te.thread_axis("blockIdx.x"))
    s[B].bind(ki, te.thread_axis("threadIdx.x"))
    f = tvm.lower(s, [A, B])["main"]
    text = str(f)
    # tree steps: 8 4 2 1 (16 threads) or 8 4 2 1 over 12 with a bound (f + 8 < 12)
    assert text.count(SYNC) == 5
    assert f'B_red_shared = T.alloc_buffer(({threads},), "float32", scope="shared")' in text
    assert "k_1 == 0" in text  # one thread stores the result
    check_gpu_program(f, "cuda")
    a = np.random.default_rng(0).random((3, 50), "float32")
    b = np.zeros(3, "float32")
    run_gpu(f, [a, b])
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5)


def test_row_sum_rfactor_then_bind_block_style():
    A, B = row_sum(2, 64)
    sch = tir.Schedule(te.create_prim_func([A, B]))
    blk = sch.get_block("B")
    i, k = sch.get_loops(blk)
    ko, ki = sch.split(k, [None, 32])
    rf = sch.rfactor(ki, 0)
    sch.bind(i, "blockIdx.x")
    loops = sch.get_loops(sch.get_block("B"))
    sch.bind(loops[-1], "threadIdx.x")
    sch.compute_at(rf, loops[-1])
    f = sch.mod["main"]
    text = str(f)
    assert text.count(SYNC) == 6  # after the partials, then 5 tree steps of 32
    a = np.random.default_rng(1).random((2, 64), "float32")
    b = np.zeros(2, "float32")
    run_gpu(f, [a, b])
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5)


def softmax_schedule(n, m, num_thread):
    """TVM's topi.cuda softmax schedule (cross-thread reductions for max and sum)."""
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
    xo, xi = s[out].split(out.op.axis[1], nparts=num_thread)
    s[out].bind(xo, thread_x)
    s[out].bind(out.op.axis[0], block_x)
    for red in (expsum, max_elem):
        ko, ki = s[red].split(red.op.reduce_axis[0], factor=num_thread)
        RF = s.rfactor(red, ki)
        s[red].bind(s[red].op.axis[0], block_x)
        s[red].bind(s[red].op.reduce_axis[0], thread_x)
        s[RF].compute_at(s[red], s[red].op.reduce_axis[0])
        s[red].set_store_predicate(thread_x.var.equal(0))  # as TVM's schedule writes it
    s[e].bind(e.op.axis[0], block_x)
    _, xi = s[e].split(e.op.axis[1], factor=num_thread)
    s[e].bind(xi, thread_x)
    return s, [x, out]


def test_softmax_cross_thread():
    s, args = softmax_schedule(3, 48, 16)
    f = tvm.lower(s, args)["main"]
    prog = check_gpu_program(f, "cuda")
    assert len(prog.kernels) == 4 and all(k.block == (16, 1, 1) for k in prog.kernels)
    assert [k.stage_names[0] for k in prog.kernels] == ["max_elem", "exp", "expsum", "softmax"]
    # the two reductions: 1 + log2(16) barriers each; the elementwise kernels none
    assert str(f).count(SYNC) == 10
    x = np.random.default_rng(2).normal(size=(3, 48)).astype("float32")
    out = np.zeros_like(x)
    run_gpu(f, [x, out])
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, ref / ref.sum(1, keepdims=True), rtol=1e-5)


def test_layer_norm_mean_cross_thread():
    n, m, t = 2, 24, 8
    x = te.placeholder((n, m), name="x")
    k = te.reduce_axis((0, m), name="k")
    mean = te.compute((n,), lambda i: te.sum(x[i, k] / float(m), axis=k), name="mean")
    k2 = te.reduce_axis((0, m), name="k2")
    var = te.compute(
        (n,),
        lambda i: te.sum((x[i, k2] - mean[i]) * (x[i, k2] - mean[i]) / float(m), axis=k2),
        name="var",
    )
    y = te.compute((n, m), lambda i, j: (x[i, j] - mean[i]) / te.sqrt(var[i] + 1e-5), name="y")
    s = te.create_schedule(y.op)
    for red in (mean, var):
        _, ki = s[red].split(red.op.reduce_axis[0], factor=t)
        s[red].bind(red.op.axis[0], te.thread_axis("blockIdx.x"))
        s[red].bind(ki, te.thread_axis("threadIdx.x"))
    s[y].bind(y.op.axis[0], te.thread_axis("blockIdx.x"))
    s[y].bind(y.op.axis[1], te.thread_axis("threadIdx.x"))
    f = tvm.lower(s, [x, y])["main"]
    check_gpu_program(f, "cuda")
    xv = np.random.default_rng(3).normal(size=(n, m)).astype("float32")
    yv = np.zeros_like(xv)
    run_gpu(f, [xv, yv])
    ref = (xv - xv.mean(1, keepdims=True)) / np.sqrt(xv.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(yv, ref, rtol=1e-4, atol=1e-5)


def test_reduction_bound_to_blocks_is_refused():
    A, B = row_sum(3, 50)
    s = te.create_schedule(B.op)
    with pytest.raises(ScheduleError, match="only threadIdx.* can share a reduction"):
        s[B].bind(B.op.reduce_axis[0], te.thread_axis("blockIdx.x"))


def test_spatial_loop_inside_a_cross_thread_reduction_is_refused():
    A, B = row_sum(4, 32)
    s = te.create_schedule(B.op)
    s[B].reorder(B.op.reduce_axis[0], B.op.axis[0])
    s[B].bind(B.op.reduce_axis[0], te.thread_axis("threadIdx.x"))
    with pytest.raises(ScheduleError, match="run inside the reduction loops: reorder"):
        tvm.lower(s, [A, B])


def test_store_predicate_other_than_thread_zero_is_refused():
    A, B = row_sum(3, 50)
    s = te.create_schedule(B.op)
    tx = te.thread_axis("threadIdx.x")
    with pytest.raises(ScheduleError, match="set_store_predicate.*bind the reduction loop"):
        s[B].set_store_predicate(tx.var.equal(0))


def test_cross_thread_reduction_on_fewer_threads_than_launched():
    # the reduction over 8 threads, an elementwise stage of the same kernel over 16
    n = 2
    A = te.placeholder((n, 16), name="A")
    k = te.reduce_axis((0, 16), name="k")
    R = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="R")
    B = te.compute((n, 16), lambda i, j: A[i, j] - R[i], name="B")
    s = te.create_schedule(B.op)
    s[B].bind(B.op.axis[0], te.thread_axis("blockIdx.x"))
    s[B].bind(B.op.axis[1], te.thread_axis("threadIdx.x"))
    _, ki = s[R].split(R.op.reduce_axis[0], factor=8)
    s[R].bind(ki, te.thread_axis("threadIdx.x"))
    s[R].compute_at(s[B], B.op.axis[0])
    f = tvm.lower(s, [A, B])["main"]
    with pytest.raises(GPUScheduleError, match=r"runs on 8 of the 16 threadIdx.x.*Split"):
        check_gpu_program(f, "cuda")
    # with the reduction over all 16 threads it runs, and B reads R after a barrier
    s = te.create_schedule(B.op)
    s[B].bind(B.op.axis[0], te.thread_axis("blockIdx.x"))
    s[B].bind(B.op.axis[1], te.thread_axis("threadIdx.x"))
    s[R].bind(R.op.reduce_axis[0], te.thread_axis("threadIdx.x"))
    s[R].compute_at(s[B], B.op.axis[0])
    f = tvm.lower(s, [A, B])["main"]
    check_gpu_program(f, "cuda")
    a = np.random.default_rng(5).random((n, 16), "float32")
    b = np.zeros_like(a)
    run_gpu(f, [a, b])
    np.testing.assert_allclose(b, a - a.sum(1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("shape", [(53, 37), (40, 3)])
def test_guarded_threads_of_a_cross_thread_reduction_read_nothing(shape):
    # TVM's topi.cuda reduce recipe on a column sum: 32 outputs of a block on threadIdx.y
    # (37 or 3 outputs: the last block's extra threads fail the split's guard). They
    # still run the shared-memory tree, so they must add the identity, not read the rf
    # buffer at a row past its region (the emulator faults on an out-of-bounds read)
    A = te.placeholder(shape, name="A")
    k = te.reduce_axis((0, shape[0]), name="k")
    B = te.compute((1, shape[1]), lambda i, j: te.sum(A[k, j], axis=k), name="B")
    s = te.create_schedule(B.op)
    tx = te.thread_axis((0, 32), "threadIdx.x")
    _, ki = s[B].split(B.op.reduce_axis[0], factor=32)
    rf = s.rfactor(B, ki)
    s[B].bind(s[B].op.reduce_axis[0], tx)
    s[rf].compute_at(s[B], s[B].op.reduce_axis[0])
    bx, ty = s[B].split(s[B].fuse(*s[B].op.axis), factor=32)
    s[B].bind(ty, te.thread_axis((0, 32), "threadIdx.y"))
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].set_store_predicate(tx.var.equal(0))
    text = str(tvm.lower(s, [A, B])["main"])
    guard = f"i_j_fused_0 * 32 + i_j_fused_1 < {shape[1]}"
    assert text.count(guard) == 2  # around the partial sum and around the store
    a = np.random.default_rng(7).random(shape, "float32")
    b = np.full((1, shape[1]), 7.0, "float32")
    tvm.build(s, [A, B], "cuda").emulate(a, b)
    np.testing.assert_allclose(b, a.sum(0, keepdims=True), rtol=1e-5)
