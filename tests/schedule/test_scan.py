"""``te.scan``: TVM's scan tutorial (cumsum, a multi-stage cell, two states), on the CPU
and on the GPU emulator, checked against numpy and the reference; and its refusals."""

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.dsl.reference import evaluate
from ansor_lab.errors import DSLError, LoweringError


def _cumsum(m, n):
    X = te.placeholder((m, n), name="X")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])
    return X, s_init, s_update, te.scan(s_init, s_update, s_state, inputs=[X])


def test_cumsum_over_rows_on_the_cpu_with_symbolic_shapes():
    m, n = te.var("m"), te.var("n")
    X, _, _, s_scan = _cumsum(m, n)
    s = te.create_schedule(s_scan.op)
    text = str(tvm.lower(s, [X, s_scan], simple_mode=True))
    assert "for scan_idx in range(m - 1):" in text
    assert "scan[scan_idx + 1, i_1] = scan[scan_idx, i_1] + X[scan_idx + 1, i_1]" in text
    assert "scan[0, i] = X[0, i]" in text  # the init writes the scan's buffer
    f = tvm.build(s, [X, s_scan], "llvm")
    for shape in [(10, 1024), (1, 7), (5, 3)]:
        a = np.random.default_rng(0).uniform(size=shape).astype("float32")
        b = tvm.nd.array(np.zeros(shape, "float32"))
        f(tvm.nd.array(a), b)
        np.testing.assert_allclose(b.numpy(), np.cumsum(a, axis=0), rtol=1e-5)


def test_the_tutorials_gpu_schedule_launches_a_kernel_per_step():
    X, s_init, s_update, s_scan = _cumsum(10, 1024)
    s = te.create_schedule(s_scan.op)
    for stage in (s_init, s_update):
        xo, xi = s[stage].split(stage.op.axis[1], factor=256)
        s[stage].bind(xo, te.thread_axis("blockIdx.x"))
        s[stage].bind(xi, te.thread_axis("threadIdx.x"))
    text = str(tvm.lower(s, [X, s_scan], simple_mode=True))
    assert "for scan_idx in range(9):" in text and 'thread="blockIdx.x"' in text
    func = tvm.lower(s, [X, s_scan])["main"]
    # the time loop runs on the host (as in TVM): steps in different blocks see each other
    kernels = split_kernels(func).kernels
    assert len(kernels) == 10 and all(k.grid == (4, 1, 1) for k in kernels)
    mod = tvm.build(s, [X, s_scan], "cuda", name="myscan")
    assert "myscan_kernel9" in mod.get_source("cuda")
    a = np.random.default_rng(1).uniform(size=(10, 1024)).astype("float32")
    b = np.zeros((10, 1024), "float32")
    mod.emulate(a, b)
    np.testing.assert_allclose(b, np.cumsum(a, axis=0), rtol=1e-5)


def test_a_step_reading_another_blocks_column_sees_the_previous_step():
    m, n = 6, 600
    X = te.placeholder((m, n), name="X")
    state = te.placeholder((m, n), name="state")
    init = te.compute((1, n), lambda _, i: X[0, i], name="init")
    update = te.compute((m, n), lambda t, i: state[t - 1, n - 1 - i] + X[t, i], name="update")
    res = te.scan(init, update, state)
    s = te.create_schedule(res.op)
    for stage in (init, update):
        xo, xi = s[stage].split(stage.op.axis[1], factor=128)
        s[stage].bind(xo, te.thread_axis("blockIdx.x"))
        s[stage].bind(xi, te.thread_axis("threadIdx.x"))
    mod = tvm.build(s, [X, res], "cuda")
    a = np.random.default_rng(2).uniform(size=(m, n)).astype("float32")
    want = a.copy()
    for t in range(1, m):
        want[t] = want[t - 1][::-1] + a[t]
    got = np.zeros_like(a)
    mod.emulate(a, got)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(evaluate([res], {X: a})[res], want, rtol=1e-5)


def test_a_multi_stage_cell_computed_at_a_loop_of_the_update():
    m, n = te.var("m"), te.var("n")
    X = te.placeholder((m, n), name="X")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s1 = te.compute((m, n), lambda t, i: s_state[t - 1, i] * 2, name="s1")
    s2 = te.compute((m, n), lambda t, i: s1[t, i] + X[t, i], name="s2")
    s_scan = te.scan(s_init, s2, s_state, inputs=[X])
    s = te.create_schedule(s_scan.op)
    # by default the cell's intermediate runs inside the time loop, one row a step
    assert 's1 = T.alloc_buffer((1, n), "float32")' in str(tvm.lower(s, [X, s_scan]))
    xo, _ = s[s2].split(s2.op.axis[1], factor=32)
    s[s1].compute_at(s[s2], xo)
    text = str(tvm.lower(s, [X, s_scan], simple_mode=True))
    assert 's1 = T.alloc_buffer((1, 32), "float32")' in text
    assert text.index("for scan_idx") < text.index("for i_0 in range(T.ceildiv(n, 32))")
    f = tvm.build(s, [X, s_scan], "llvm")
    a = np.random.default_rng(3).uniform(size=(7, 45)).astype("float32")
    want = a.copy()
    for t in range(1, 7):
        want[t] = want[t - 1] * 2 + a[t]
    got = np.zeros_like(a)
    f(a, got)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_two_states_share_the_time_loop():
    m, n, k = 6, 5, 3
    X = te.placeholder((m, n), name="X")
    st1, st2 = te.placeholder((m, n)), te.placeholder((m, k))
    init1 = te.compute((1, n), lambda _, i: X[0, i])
    init2 = te.compute((1, k), lambda _, i: 0.0)
    up1 = te.compute((m, n), lambda t, i: st1[t - 1, i] + X[t, i])
    up2 = te.compute((m, k), lambda t, i: st2[t - 1, i] + st1[t - 1, 0])
    r1, r2 = te.scan([init1, init2], [up1, up2], [st1, st2], inputs=[X])
    assert r2.op.name == "scan_v1"
    s = te.create_schedule(r1.op)
    text = str(tvm.lower(s, [X, r1, r2], simple_mode=True))
    assert text.count("for scan_idx") == 1  # one loop carries both states
    f = tvm.build(s, [X, r1, r2], "llvm")
    a = np.random.default_rng(4).uniform(size=(m, n)).astype("float32")
    b1, b2 = np.zeros((m, n), "float32"), np.zeros((m, k), "float32")
    f(a, b1, b2)
    want1, want2 = np.cumsum(a, 0), np.zeros((m, k), "float32")
    for t in range(1, m):
        want2[t] = want2[t - 1] + want1[t - 1, 0]
    np.testing.assert_allclose(b1, want1, rtol=1e-5)
    np.testing.assert_allclose(b2, want2, rtol=1e-5)
    ref = evaluate([r1, r2], {X: a})
    np.testing.assert_allclose(ref[r2], want2, rtol=1e-5)


def test_fibonacci_with_two_initial_rows_and_a_consumer():
    n = 10
    state = te.placeholder((n,), name="x")
    init = te.compute((2,), lambda _: 1.0, name="init")
    update = te.compute((n,), lambda i: state[i - 1] + state[i - 2], name="update")
    fib = te.scan(init, update, state)
    double = te.compute((n,), lambda i: fib[i] * 2, name="double")
    s = te.create_schedule(double.op)
    text = str(tvm.lower(s, [double], simple_mode=True))
    assert 'scan = T.alloc_buffer((10,), "float32")' in text  # not an argument: allocated
    out = np.zeros(n, "float32")
    tvm.build(s, [double])(out)
    want = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55]
    np.testing.assert_array_equal(out, 2 * np.array(want, "float32"))
    np.testing.assert_array_equal(evaluate([fib], {})[fib], want)


def test_the_cell_runs_parallel_and_vectorized_inside_the_time_loop():
    X, s_init, s_update, s_scan = _cumsum(8, 256)
    s = te.create_schedule(s_scan.op)
    xo, xi = s[s_update].split(s_update.op.axis[1], factor=16)
    s[s_update].parallel(xo)
    s[s_update].vectorize(xi)
    f = tvm.build(s, [X, s_scan], "llvm")
    a = np.random.default_rng(5).uniform(size=(8, 256)).astype("float32")
    got = np.zeros_like(a)
    f(a, got)
    np.testing.assert_allclose(got, np.cumsum(a, 0), rtol=1e-5)


def _schedule(edit):
    X, s_init, s_update, s_scan = _cumsum(8, 16)
    s = te.create_schedule(s_scan.op)
    edit(s, s_init, s_update, s_scan)
    return s, X, s_scan


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s, i, u, r: s[u].compute_inline(), "cannot be inlined"),
        (lambda s, i, u, r: s[u].compute_root(), "must be computed inside the scan's time loop"),
        (lambda s, i, u, r: s[r].split(r.op.scan_axis, factor=2), "time loop cannot be sched"),
        (lambda s, i, u, r: s[r].parallel(r.op.scan_axis), "runs its steps in order"),
    ],
)
def test_schedules_that_would_break_the_recurrence_are_refused(edit, message):
    s, X, s_scan = _schedule(edit)
    with pytest.raises(LoweringError, match=message):
        tvm.lower(s, [X, s_scan])


def test_the_scans_own_tensors_are_not_arguments():
    X, s_init, s_update, s_scan = _cumsum(8, 16)
    s = te.create_schedule(s_scan.op)
    with pytest.raises(LoweringError, match="pass 'scan' instead"):
        tvm.lower(s, [X, s_update, s_scan])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda X, i, u, st: te.scan(i, u, u), "must be a te.placeholder"),
        (lambda X, i, u, st: te.scan([i], [u, u], [st]), "one of each per state"),
        (
            lambda X, i, u, st: te.scan(te.compute((1, 5), lambda a, b: X[0, b]), u, st),
            "dimension 1 differs",
        ),
        (
            lambda X, i, u, st: te.scan(te.compute((1, 16), lambda a, b: 1), u, st),
            "must have one dtype",
        ),
        (lambda X, i, u, st: te.scan(te.compute((9, 16), lambda a, b: X[0, b]), u, st), "more"),
    ],
)
def test_malformed_scans_say_what_is_wrong(make, message):
    X = te.placeholder((8, 16), name="X")
    st = te.placeholder((8, 16), name="st")
    init = te.compute((1, 16), lambda _, i: X[0, i], name="init")
    update = te.compute((8, 16), lambda t, i: st[t - 1, i] + X[t, i], name="update")
    with pytest.raises(DSLError, match=message):
        make(X, init, update, st)


def test_the_auto_scheduler_and_create_prim_func_refuse_a_scan():
    X, _, _, s_scan = _cumsum(8, 16)
    with pytest.raises(DSLError, match="topi.cumsum"):
        auto_scheduler.ComputeDAG([X, s_scan])
    with pytest.raises(DSLError, match="te.create_schedule"):
        te.create_prim_func([X, s_scan])


def test_one_stages_serial_loop_around_its_bindings_stays_one_kernel():
    A = te.placeholder((4, 256), name="A")
    B = te.compute((4, 256), lambda i, j: A[i, j] * 2, name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[1], factor=64)
    s[B].bind(xo, te.thread_axis("blockIdx.x"))
    s[B].bind(xi, te.thread_axis("threadIdx.x"))
    kernels = split_kernels(tvm.lower(s, [A, B])["main"]).kernels
    assert len(kernels) == 1 and kernels[0].grid == (4, 1, 1)
    a = np.random.default_rng(6).uniform(size=(4, 256)).astype("float32")
    got = np.zeros_like(a)
    tvm.build(s, [A, B], "cuda").emulate(a, got)
    np.testing.assert_allclose(got, a * 2)


def test_one_state_in_lists_gives_one_tensor_as_in_tvm():
    X = te.placeholder((4, 3), name="X")
    st = te.placeholder((4, 3), name="st")
    init = te.compute((1, 3), lambda _, i: X[0, i], name="init")
    update = te.compute((4, 3), lambda t, i: st[t - 1, i] * X[t, i], name="update")
    res = te.scan([init], [update], [st], inputs=X)
    assert not isinstance(res, list) and res.op.num_outputs == 1
    a = np.random.default_rng(7).uniform(size=(4, 3)).astype("float32")
    got = np.zeros_like(a)
    tvm.build(te.create_schedule(res.op), [X, res])(a, got)
    np.testing.assert_allclose(got, np.cumprod(a, 0), rtol=1e-5)
