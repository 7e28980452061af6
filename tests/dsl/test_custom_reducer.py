"""te.comm_reducer with a combine function that is not a sum, max or min (TVM's reduction
tutorial: a product), lowered as a one-element tuple reducer."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te


def _product_of_rows(n: int, m: int, dtype: str = "float32"):
    product = te.comm_reducer(lambda x, y: x * y, lambda t: tvm.tir.const(1, dtype=t), "product")
    A = te.placeholder((n, m), dtype, name="A")
    k = te.reduce_axis((0, m), name="k")
    return A, te.compute((n,), lambda i: product(A[i, k], axis=k), name="B")


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_a_product_reducer_matches_numpy_under_hand_schedules(dtype):
    A, B = _product_of_rows(9, 13, dtype)
    rng = np.random.default_rng(0)
    a = (
        (rng.random((9, 13)) + 0.5).astype(dtype)
        if dtype == "float32"
        else rng.integers(-2, 3, size=(9, 13)).astype(dtype)
    )
    for split in (None, 4, 5):
        s = te.create_schedule(B.op)
        if split is not None:
            s[B].split(B.op.reduce_axis[0], factor=split)  # 13 is not a multiple: guarded
            s[B].parallel(B.op.axis[0])
        b = np.zeros(9, dtype)
        tvm.build(s, [A, B])(a, b)
        np.testing.assert_allclose(b, np.prod(a, axis=1), rtol=1e-5)


def test_a_product_prints_as_a_block_with_its_init_and_builds_from_the_text():
    A, B = _product_of_rows(4, 6)
    func = te.create_prim_func([A, B])
    text = func.script()
    assert "with T.init():" in text and "B[v_i] = T.float32(1.0)" in text
    assert "* A[v_i, v_k]" in text
    parsed = tvm.script.from_source(text)
    a = np.random.rand(4, 6).astype("float32") + 0.5
    b = np.zeros(4, "float32")
    tvm.build(parsed, target="llvm")(a, b)
    np.testing.assert_allclose(b, np.prod(a, axis=1), rtol=1e-5)


def test_a_product_over_symbolic_shapes_runs_at_every_shape_called():
    """TVM's reduction tutorial writes it over n = te.var("n"): each call specializes."""
    n, m = te.var("n"), te.var("m")
    A, B = _product_of_rows(n, m)
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=4)
    s[B].parallel(B.op.axis[0])
    assert "n = T.int32()" in str(tvm.lower(s, [A, B], simple_mode=True))
    f = tvm.build(s, [A, B])
    rng = np.random.default_rng(1)
    for shape in [(5, 7), (1, 1), (12, 8), (3, 13)]:
        a = (rng.random(shape) + 0.5).astype("float32")
        b = np.zeros(shape[0], "float32")
        f(a, b)
        np.testing.assert_allclose(b, np.prod(a, axis=1), rtol=1e-5)
    assert sorted(f.specializations) == [(1, 1), (3, 13), (5, 7), (12, 8)]


def _argmax():
    def fcombine(x, y):
        keep = x[1] >= y[1]
        return tvm.tir.Select(keep, x[0], y[0]), tvm.tir.Select(keep, x[1], y[1])

    def fidentity(t0, t1):
        return tvm.tir.const(-1, t0), tvm.te.min_value(t1)

    return te.comm_reducer(fcombine, fidentity, name="argmax")


def test_an_argmax_over_symbolic_shapes_writes_both_outputs_at_every_shape():
    """TVM's tuple-inputs tutorial: both outputs of the tuple reduction are specialized
    together (one loop nest writes both), at each shape called."""
    m, n = te.var("m"), te.var("n")
    idx = te.placeholder((m, n), name="idx", dtype="int32")
    val = te.placeholder((m, n), name="val", dtype="int32")
    k = te.reduce_axis((0, n), "k")
    T0, T1 = te.compute((m,), lambda i: _argmax()((idx[i, k], val[i, k]), axis=k), name="T")
    s = te.create_schedule(T0.op)
    io, _ = s[T0].split(T0.op.axis[0], factor=4)
    s[T0].parallel(io)
    f = tvm.build(s, [idx, val, T0, T1])
    rng = np.random.default_rng(2)
    for rows, cols in [(5, 7), (1, 1), (9, 33)]:
        iv = np.tile(np.arange(cols, dtype="int32"), (rows, 1))
        vv = rng.integers(-5, 5, size=(rows, cols)).astype("int32")  # ties: the first wins
        t0, t1 = np.full(rows, 7, "int32"), np.full(rows, 7, "int32")
        f(iv, vv, t0, t1)
        np.testing.assert_array_equal(t1, vv.max(axis=1))
        np.testing.assert_array_equal(t0, vv.argmax(axis=1))
