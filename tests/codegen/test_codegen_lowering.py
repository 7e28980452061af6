"""Default-schedule programs whose lowering has to get the index arithmetic right."""

from __future__ import annotations

import numpy as np

from ansor_lab import te


def test_index_casts_and_data_dependent_indices(run_llvm):
    A = te.placeholder((6, 8), "float32", name="A")
    I = te.placeholder((6,), "int64", name="I")  # noqa: E741 - an index tensor
    B = te.compute((6,), lambda i: A[i.astype("int64"), (i + 1).astype("int8")], name="B")
    C = te.compute((6,), lambda i: A[i, I[i] % 8], name="C")  # gather through int64 data
    a = np.random.default_rng(0).uniform(size=(6, 8)).astype("float32")
    idx = np.arange(6, dtype="int64") * 5
    (b, c), _ = run_llvm([B, C], [A, I], [a, idx])
    np.testing.assert_array_equal(b, a[np.arange(6), np.arange(1, 7)])
    np.testing.assert_array_equal(c, a[np.arange(6), idx % 8])


def test_three_reduction_axes(run_llvm):
    X = te.placeholder((2, 3, 4), "int32", name="X")
    k1, k2, k3 = (te.reduce_axis((0, n), name=f"k{n}") for n in (2, 3, 4))
    D = te.compute((1,), lambda i: te.sum(X[k1, k2, k3] * (k3 + 1), axis=[k1, k2, k3]), name="D")
    x = np.arange(24, dtype="int32").reshape(2, 3, 4)
    (d,), _ = run_llvm(D, [X], [x])
    assert d.tolist() == [int((x * np.arange(1, 5)).sum())]


def test_shifted_read_of_an_intermediate(run_llvm):
    A = te.placeholder((6, 8), "float32", name="A")
    E = te.compute((6, 8), lambda i, j: A[i, j] * 2.0, name="E")
    F = te.compute((6, 8), lambda i, j: te.if_then_else(j < 7, E[i, j + 1], E[i, 0]), name="F")
    a = np.random.default_rng(1).uniform(size=(6, 8)).astype("float32")
    (f,), _ = run_llvm(F, [A], [a])
    e = a * np.float32(2)
    np.testing.assert_array_equal(f, np.concatenate([e[:, 1:], e[:, :1]], axis=1))


def test_reduce_axis_with_a_nonzero_start(run_llvm):
    A = te.placeholder((6, 8), "float32", name="A")
    k = te.reduce_axis((2, 5), name="k")
    B = te.compute((6,), lambda i: te.sum(A[i, k], axis=k), name="B")
    a = np.random.default_rng(2).uniform(size=(6, 8)).astype("float32")
    (b,), (ref,) = run_llvm(B, [A], [a])
    np.testing.assert_allclose(ref, a[:, 2:5].sum(axis=1), rtol=1e-6)  # the reference is right
    np.testing.assert_allclose(b, a[:, 2:5].sum(axis=1), rtol=1e-6)
