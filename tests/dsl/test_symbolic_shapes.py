"""Symbolic shapes (``te.var`` dims, ``T.int32()``): scheduled on a probe, built per shape."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, tir
from ansor_lab.errors import RuntimeArgumentError, ScheduleError, TaskError
from ansor_lab.script import tir as T

RNG = np.random.default_rng(0)


def _vecadd():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    return n, A, B, C


def _run_vecadd(f, sizes=(1024, 1000, 7)):
    dev = tvm.cpu(0)
    for size in sizes:
        a = tvm.nd.array(RNG.random(size, dtype="float32"), dev)
        b = tvm.nd.array(RNG.random(size, dtype="float32"), dev)
        c = tvm.nd.array(np.zeros(size, dtype="float32"), dev)
        f(a, b, c)
        np.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())
    return a, b, c


def test_tvm_first_tutorial_runs_at_any_n():
    n, A, B, C = _vecadd()
    assert C.shape[0] is n and A.dtype == "float32"
    s = te.create_schedule(C.op)
    fadd = tvm.build(s, [A, B, C], tvm.target.Target("llvm"), name="myadd")
    _run_vecadd(fadd)
    assert fadd.specializations == [(1024,), (1000,), (7,)]
    assert fadd.entry_name == "myadd" and fadd["myadd"] is fadd
    text = str(tvm.lower(s, [A, B, C], simple_mode=True))
    # printed with the shape variable, as TVM prints it
    assert "def main(var_A: T.handle, var_B: T.handle, var_C: T.handle):" in text
    assert "n = T.int32()" in text and "A = T.match_buffer(var_A, (n,))" in text
    assert "for i in range(n):" in text and "C[i] = A[i] + B[i]" in text


def test_parallel_split_vectorize_guard_a_non_divisible_n():
    n, A, B, C = _vecadd()
    s = te.create_schedule(C.op)
    s[C].parallel(C.op.axis[0])
    assert "T.parallel(n)" in str(tvm.lower(s, [A, B, C, n]))  # TVM lists n too
    s = te.create_schedule(C.op)
    outer, inner = s[C].split(C.op.axis[0], factor=4)
    s[C].vectorize(inner)
    fadd = tvm.build(s, [A, B, C], "llvm", name="myadd")
    a, b, c = _run_vecadd(fadd)  # 7 is last: split into 2 x 4, the guarded tile 3 wide
    src = fadd.get_source("tir")
    assert "T.Buffer((7,)" in src and "C[T.Ramp(4, 1, 3)] = A[T.Ramp(4, 1, 3)]" in src
    evaluator = fadd.time_evaluator(fadd.entry_name, tvm.cpu(0), number=10)
    assert evaluator(a, b, c).mean > 0


def test_shapes_sharing_a_variable_must_agree():
    n, A, B, C = _vecadd()
    f = tvm.build(te.create_schedule(C.op), [A, B, C])
    x4, x3 = np.zeros(4, "float32"), np.zeros(3, "float32")
    msg = r"shape variable 'n' is 3 from argument 'A' \(dimension 0\) but 4 from argument 'B'"
    with pytest.raises(RuntimeArgumentError, match=msg):
        f(x3, x4, np.zeros(3, "float32"))
    with pytest.raises(RuntimeArgumentError, match=r"argument 'A' has 2 dimensions"):
        f(np.zeros((2, 2), "float32"), x4, x4)
    with pytest.raises(RuntimeArgumentError, match="takes 3 arrays"):
        f(x4, x4)
    with pytest.raises(RuntimeArgumentError, match="call it with arrays first"):
        f.get_source()
    with pytest.raises(RuntimeArgumentError, match="export_library of a function with symbolic"):
        f.export_library("/tmp/never.so")


def test_symbolic_matmul_with_three_variables_scheduled():
    n, m, k = te.var("n"), te.var("m"), te.size_var("k")
    X = te.placeholder((n, k), name="X")
    Y = te.placeholder((k, m), name="Y")
    r = te.reduce_axis((0, k), name="r")
    Z = te.compute((n, m), lambda i, j: te.sum(X[i, r] * Y[r, j], axis=r), name="Z")
    s = te.create_schedule(Z.op)
    io, ii = s[Z].split(Z.op.axis[0], factor=8)
    jo, ji = s[Z].split(Z.op.axis[1], factor=8)
    ko, ki = s[Z].split(Z.op.reduce_axis[0], factor=4)
    s[Z].reorder(io, jo, ko, ki, ii, ji)
    s[Z].vectorize(ji)
    f = tvm.build(s, [X, Y, Z])
    for N, M, K in [(64, 64, 64), (13, 17, 9), (1, 8, 3)]:
        x = RNG.random((N, K), dtype="float32")
        y = RNG.random((K, M), dtype="float32")
        z = np.zeros((N, M), "float32")
        f(x, y, z)
        np.testing.assert_allclose(z, x @ y, rtol=1e-5)
    assert f.specializations == [(64, 64, 64), (13, 9, 17), (1, 3, 8)]  # (n, k, m)
    with pytest.raises(RuntimeArgumentError, match=r"shape variable 'k' is 3 from argument 'X'"):
        f(np.zeros((2, 3), "float32"), np.zeros((4, 5), "float32"), np.zeros((2, 5), "float32"))


def test_cache_write_and_compute_at_replay_per_shape():
    n, m, k = te.var("n"), te.var("m"), te.var("k")
    X = te.placeholder((n, k), name="X")
    Y = te.placeholder((k, m), name="Y")
    r = te.reduce_axis((0, k), name="r")
    Z = te.compute((n, m), lambda i, j: te.sum(X[i, r] * Y[r, j], axis=r), name="Z")
    s = te.create_schedule(Z.op)
    ZL = s.cache_write(Z, "local")
    io, jo, ii, ji = s[Z].tile(Z.op.axis[0], Z.op.axis[1], 4, 4)
    s[ZL].compute_at(s[Z], jo)
    f = tvm.build(s, [X, Y, Z])
    for N, M, K in [(16, 16, 8), (10, 6, 5)]:
        x, y = RNG.random((N, K), dtype="float32"), RNG.random((K, M), dtype="float32")
        z = np.zeros((N, M), "float32")
        f(x, y, z)
        np.testing.assert_allclose(z, x @ y, rtol=1e-5)


def test_reduce_axes_over_a_variable_and_shape_expressions():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((1, m), name="k")  # skips column 0
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    C = te.compute((n,), lambda i: B[i] * m, name="C")  # a shape variable as a value
    f = tvm.build(te.create_schedule(C.op), [A, C])
    for N, M in [(3, 5), (8, 2)]:
        a = RNG.random((N, M), dtype="float32")
        c = np.zeros(N, "float32")
        f(a, c)
        np.testing.assert_allclose(c, a[:, 1:].sum(1) * M, rtol=1e-5)


def test_a_variable_no_argument_carries_is_refused_at_build():
    n, k = te.var("n"), te.var("k")
    A = te.placeholder((n,), name="A")
    r = te.reduce_axis((0, k), name="r")
    B = te.compute((n,), lambda i: te.sum(A[i] * 1.0, axis=r), name="B")
    with pytest.raises(RuntimeArgumentError, match=r"shape variable\(s\) k are not a dimension"):
        tvm.build(te.create_schedule(B.op), [A, B])


def test_schedule_errors_appear_at_the_call_site():
    n, A, B, C = _vecadd()
    s = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match="exactly one of factor= or nparts="):
        s[C].split(C.op.axis[0])
    s[C].split(C.op.axis[0], factor=4)
    with pytest.raises(ScheduleError, match="not a current loop"):
        s[C].parallel(C.op.axis[0])


def test_tir_schedule_on_a_symbolic_create_prim_func():
    n, A, B, C = _vecadd()
    func = te.create_prim_func([A, B, C])
    assert str(func).startswith("@T.prim_func\ndef main(var_A: T.handle")
    assert "for i in range(n):" in str(func)
    sch = tir.Schedule(func)
    (i,) = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.vectorize(i1)
    sch.parallel(i0)
    _run_vecadd(tvm.build(sch.mod, target="llvm"), sizes=(100, 5, 64))
    _run_vecadd(tvm.build(sch, target="llvm"), sizes=(9,))
    text = str(tvm.lower(sch.mod))
    assert "for i_0 in T.parallel(T.ceildiv(n, 8)):" in text, text
    assert "if i_0 * 8 + i_1 < n:" in text


@T.prim_func
def _script_add(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (m,), "float32")
    C = T.match_buffer(c, (n, m), "float32")
    for i, j in T.grid(n, m):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * B[vj]


def test_tvmscript_shape_variables_with_match_buffer():
    text = str(_script_add)
    assert "n = T.int32()\n    m = T.int32()" in text and "for i, j in T.grid(n, m):" in text
    f = tvm.build(_script_add, target="llvm")
    assert f.entry_name == "_script_add"
    sch = tir.Schedule(_script_add)
    i, j = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.vectorize(j1)
    g = tvm.build(sch.mod, target="llvm")
    for N, M in [(3, 5), (16, 8)]:
        a, b = RNG.random((N, M), dtype="float32"), RNG.random(M, dtype="float32")
        for fn in (f, g):
            c = np.zeros((N, M), "float32")
            fn(a, b, c)
            np.testing.assert_allclose(c, a * b)
    with pytest.raises(RuntimeArgumentError, match=r"shape variable 'm' is 5 from argument 'A'"):
        f(np.zeros((3, 5), "float32"), np.zeros(4, "float32"), np.zeros((3, 5), "float32"))


def test_the_auto_scheduler_needs_static_shapes():
    n, A, B, C = _vecadd()
    with pytest.raises(TaskError, match=r"the auto-scheduler needs static shapes: 'A' has shape"):
        auto_scheduler.ComputeDAG([A, B, C])

    @auto_scheduler.register_workload
    def symbolic_vecadd_workload():
        return list(_vecadd()[1:])

    with pytest.raises(TaskError, match="the auto-scheduler needs static shapes"):
        auto_scheduler.SearchTask(func=symbolic_vecadd_workload, args=(), target="llvm")


def test_meta_schedule_refuses_a_symbolic_function(tmp_path):
    from ansor_lab import meta_schedule as ms

    n, A, B, C = _vecadd()
    func = te.create_prim_func([A, B, C])
    with pytest.raises(TaskError, match=r"needs static shapes: 'A' has shape \(n,\)"):
        ms.tune_tir(func, "llvm", work_dir=str(tmp_path), max_trials_global=2)


def test_reference_evaluator_and_topi_on_symbolic_tensors():
    from ansor_lab import topi

    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = topi.nn.relu(A)
    C = te.compute((n,), lambda i: te.exp(B[i]), name="C")
    a = RNG.standard_normal(10).astype("float32")
    want = np.exp(np.maximum(a, 0))
    np.testing.assert_allclose(te.evaluate([C], {A: a})[C], want, rtol=1e-6)
    f = tvm.build(te.create_schedule(C.op), [A, C])
    c = np.zeros(10, "float32")
    f(a, c)
    np.testing.assert_allclose(c, want, rtol=1e-6)


def test_inline_compute_at_cache_read_rfactor_and_expression_dims():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    k = te.reduce_axis((0, m), name="k")
    C = te.compute((n,), lambda i: te.sum(B[i, k], axis=k), name="C")
    D = te.compute((n * 2,), lambda i: C[i // 2] + 1.0, name="D")
    s = te.create_schedule(D.op)
    s[B].compute_inline()
    xo, xi = s[D].split(D.op.axis[0], factor=8)
    s[C].compute_at(s[D], xo)
    s[D].parallel(xo)
    text = str(tvm.lower(s, [A, D], name="f"))
    assert "D = T.match_buffer(var_D, (2 * n,))" in text
    assert "if i_0 * 8 + i_1 < 2 * n:" in text
    f = tvm.build(s, [A, D], name="f")
    for N, M in [(5, 3), (17, 9)]:
        a = RNG.random((N, M), dtype="float32")
        d = np.zeros(2 * N, "float32")
        f(a, d)
        np.testing.assert_allclose(d, np.repeat((a * 2).sum(1) + 1, 2), rtol=1e-5)
    with pytest.raises(RuntimeArgumentError, match=r"argument 'D' has shape \(9,\), expected"):
        f(np.zeros((5, 3), "float32"), np.zeros(9, "float32"))
    s = te.create_schedule(C.op)
    s.cache_read(A, "local", [B])
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=4)
    s.rfactor(C, ki)
    f = tvm.build(s, [A, C])
    a, c = RNG.random((4, 7), dtype="float32"), np.zeros(4, "float32")
    f(a, c)
    np.testing.assert_allclose(c, (a * 2).sum(1), rtol=1e-5)


def test_a_symbolic_cuda_build_runs_on_the_emulator_at_each_shape():
    """TVM's reduction tutorial's cross-thread row sum over n and m, checked without a GPU:
    ``emulate`` specializes to the arrays' shapes as a call does."""
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    _, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    BF = s.rfactor(B, ki)
    xo, xi = s[B].split(s[B].op.axis[0], factor=32)
    s[B].bind(xo, te.thread_axis("blockIdx.x"))
    s[B].bind(xi, te.thread_axis("threadIdx.y"))
    tx = te.thread_axis("threadIdx.x")
    s[B].bind(s[B].op.reduce_axis[0], tx)
    s[BF].compute_at(s[B], s[B].op.reduce_axis[0])
    s[B].set_store_predicate(tx.var.equal(0))
    f = tvm.build(s, [A, B], "cuda")
    rng = np.random.default_rng(3)
    for shape in [(40, 37), (32, 16)]:
        a = rng.random(shape, dtype="float32")
        b = np.zeros(shape[0], "float32")
        f.emulate(a, b)
        np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)
    assert sorted(f.specializations) == [(32, 16), (40, 37)]
    cpu = tvm.build(te.create_schedule(B.op), [A, B])
    with pytest.raises(RuntimeArgumentError, match="built for the CPU: call it directly"):
        cpu.emulate(np.ones((2, 3), "float32"), np.zeros(2, "float32"))
