"""The numpy reference evaluator: the oracle every backend is compared with."""

from __future__ import annotations

import numpy as np
import pytest

from ansor_lab import te
from ansor_lab.dsl.reference import evaluate, reference_outputs
from ansor_lab.errors import ReferenceEvaluationError


def test_matmul_and_chain_match_numpy():
    rng = np.random.default_rng(1)
    A = te.placeholder((5, 4), "float64", name="A")
    B = te.placeholder((4, 3), "float64", name="B")
    k = te.reduce_axis((0, 4), name="k")
    C = te.compute((5, 3), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((5, 3), lambda i, j: te.tanh(C[i, j]) * 2.0, name="D")
    a, b = rng.normal(size=(5, 4)), rng.normal(size=(4, 3))
    values = evaluate([A, B, D], [a, b])
    np.testing.assert_allclose(values[C], a @ b, rtol=1e-12)
    np.testing.assert_allclose(values[D], np.tanh(a @ b) * 2.0, rtol=1e-12)
    assert values[D].dtype == np.float64


def test_lazy_if_then_else_guards_out_of_range_reads():
    # zero padding: reads A[i - 1] and A[i + 1] only where they exist
    A = te.placeholder((4,), "float32", name="A")
    S = te.compute(
        (4,),
        lambda i: (
            te.if_then_else(i > 0, A[i - 1], 0.0) + A[i] + te.if_then_else(i < 3, A[i + 1], 0.0)
        ),
        name="S",
    )
    a = np.array([1, 2, 3, 4], "float32")
    np.testing.assert_array_equal(evaluate([S], [a])[S], [3, 6, 9, 7])


def test_nested_lazy_guards():
    A = te.placeholder((3,), "int32", name="A")
    # the inner read A[i + 2] is only reached where both guards hold
    Y = te.compute(
        (3,),
        lambda i: te.if_then_else(i < 2, te.if_then_else(i < 1, A[i + 2], A[i + 1]), A[i]),
        name="Y",
    )
    np.testing.assert_array_equal(evaluate([Y], [np.array([10, 20, 30], "int32")])[Y], [30, 30, 30])


def test_unguarded_out_of_range_read_raises():
    A = te.placeholder((4,), "float32", name="A")
    S = te.compute((4,), lambda i: A[i] + A[i + 1], name="S")
    with pytest.raises(
        ReferenceEvaluationError,
        match=r"read of 'A' out of range: index 4 on dimension 0 of extent 4 "
        r"\(guard it with te.if_then_else\)",
    ):
        evaluate([S], [np.zeros(4, "float32")])


def test_select_is_eager_so_it_does_not_guard_reads():
    A = te.placeholder((4,), "float32", name="A")
    S = te.compute((4,), lambda i: te.select(i < 3, A[i + 1], 0.0), name="S")
    with pytest.raises(ReferenceEvaluationError, match="read of 'A' out of range: index 4"):
        evaluate([S], [np.zeros(4, "float32")])


def test_reduction_where_guards_reads():
    A = te.placeholder((4,), "float32", name="A")
    k = te.reduce_axis((0, 4), name="k")
    # prefix sums of the next element: A[k + 1] is read only where k + 1 <= i < 4
    S = te.compute((4,), lambda i: te.sum(A[k + 1], axis=k, where=k < i), name="S")
    a = np.array([1, 2, 3, 4], "float32")
    np.testing.assert_array_equal(evaluate([S], [a])[S], [0, 2, 5, 9])


def test_reductions_with_empty_where_give_the_identity():
    A = te.placeholder((3,), "float32", name="A")
    Ints = te.placeholder((3,), "int8", name="I")
    k = te.reduce_axis((0, 3), name="k")
    mx = te.compute((1,), lambda i: te.max(A[k], axis=k, where=k > 5), name="mx")
    mn = te.compute((1,), lambda i: te.min(Ints[k], axis=k, where=k > 5), name="mn")
    sm = te.compute((1,), lambda i: te.sum(A[k], axis=k, where=k > 5), name="sm")
    v = evaluate([mx, mn, sm], {A: np.ones(3, "float32"), Ints: np.ones(3, "int8")})
    assert v[mx][0] == -np.inf
    assert v[mn][0] == 127 and v[mn].dtype == np.int8
    assert v[sm][0] == 0.0


def test_integer_division_semantics():
    a = np.array([7, -7, 7, -7, 6, -6], "int32")
    b = np.array([2, 2, -2, -2, 3, -3], "int32")
    A = te.placeholder((6,), "int32", name="A")
    B = te.placeholder((6,), "int32", name="B")
    ops = {
        "fd": (lambda i: A[i] // B[i], [3, -4, -4, 3, 2, 2]),
        "fm": (lambda i: A[i] % B[i], [1, 1, -1, -1, 0, 0]),
        "td": (lambda i: te.truncdiv(A[i], B[i]), [3, -3, -3, 3, 2, 2]),
        "tm": (lambda i: te.truncmod(A[i], B[i]), [1, -1, 1, -1, 0, 0]),
        "slash": (lambda i: A[i] / B[i], [3, -3, -3, 3, 2, 2]),
    }
    outs = {name: te.compute((6,), fn, name=name) for name, (fn, _) in ops.items()}
    values = evaluate(list(outs.values()), [a, b])
    for name, (_, want) in ops.items():
        np.testing.assert_array_equal(values[outs[name]], want, err_msg=name)
    # Python's own // and % agree with the floor forms
    python = [x // y for x, y in zip(a.tolist(), b.tolist())]
    np.testing.assert_array_equal(values[outs["fd"]], python)


def test_round_is_half_to_even_and_casts_truncate():
    X = te.placeholder((6,), "float32", name="X")
    R = te.compute((6,), lambda i: te.round(X[i]), name="R")
    T = te.compute((6,), lambda i: X[i].astype("int32"), name="T")
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.7], "float32")
    v = evaluate([R, T], [x])
    np.testing.assert_array_equal(v[R], [0, 2, 2, -0.0, -2, -3])
    np.testing.assert_array_equal(v[T], [0, 1, 2, 0, -1, -2])


def test_input_validation():
    A = te.placeholder((2, 3), name="A")
    B = te.compute((2, 3), lambda i, j: A[i, j] + 1.0, name="B")
    with pytest.raises(ReferenceEvaluationError, match=r"expected 1 input arrays \(A\), got 2"):
        evaluate([B], [np.zeros((2, 3)), np.zeros(3)])
    with pytest.raises(
        ReferenceEvaluationError, match=r"input 'A' has shape \(3, 2\), expected \(2, 3\)"
    ):
        evaluate([B], [np.zeros((3, 2))])
    with pytest.raises(ReferenceEvaluationError, match="no input array for placeholder 'A'"):
        evaluate([B], {})


def test_reference_outputs_lines_up_with_args():
    A = te.placeholder((3,), "int64", name="A")
    B = te.compute((3,), lambda i: A[i] * 3, name="B")
    a = np.array([1, -2, 4], "int64")
    got_a, got_b = reference_outputs([A, B], [a, None])
    np.testing.assert_array_equal(got_a, a)
    np.testing.assert_array_equal(got_b, [3, -6, 12])
    assert got_b.dtype == np.int64


def test_large_outputs_are_evaluated_in_chunks(monkeypatch):
    from ansor_lab.dsl import reference

    monkeypatch.setattr(reference, "CHUNK_ELEMENTS", 64)  # many chunks, some ragged
    A = te.placeholder((37, 11), "float64", name="A")
    k = te.reduce_axis((0, 11), name="k")
    S = te.compute((37,), lambda i: te.sum(A[i, k] * A[i, k], axis=k), name="S")
    a = np.random.default_rng(2).normal(size=(37, 11))
    np.testing.assert_allclose(evaluate([S], [a])[S], (a * a).sum(1), rtol=1e-12)
