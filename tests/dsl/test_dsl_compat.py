"""TVM spellings in the DSL: integral float dimensions (``N / bn``) and ``A(*i)``."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.dsl.reference import evaluate
from ansor_lab.errors import DSLError


def test_opt_gemm_packed_b_with_float_dimensions():
    # from TVM's opt_gemm tutorial: N / bn is a float in Python 3
    N, K, bn = 16, 8, 4
    B = te.placeholder((K, N), name="B")
    packedB = te.compute((N / bn, K, bn), lambda x, y, z: B[y, x * bn + z], name="packedB")
    assert packedB.shape == (4, 8, 4)
    assert all(isinstance(d, int) and not isinstance(d, float) for d in packedB.shape)
    b = np.arange(K * N, dtype="float32").reshape(K, N)
    out = evaluate([packedB], {B: b})[packedB]
    np.testing.assert_array_equal(out, b.reshape(K, N // bn, bn).transpose(1, 0, 2))


def test_placeholder_and_reduce_axis_take_integral_floats():
    A = te.placeholder((8 / 2, 6.0, np.float32(2)), name="A")
    assert A.shape == (4, 6, 2)
    assert all(isinstance(d, int) and not isinstance(d, float) for d in A.shape)
    assert te.placeholder(3.0, name="v").shape == (3,)
    k = te.reduce_axis((0, 12 / 2), name="k")
    assert (k.dom.min.value, k.dom.extent.value) == (0, 6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: te.placeholder((10 / 4, 3), name="A"),
        lambda: te.compute((7 / 2,), lambda i: i, name="C"),
        lambda: te.reduce_axis((0, 9 / 2), name="k"),
    ],
)
def test_fractional_dimensions_are_still_rejected(make):
    with pytest.raises(DSLError, match=r"is not a constant int \(a fraction\): divide with //"):
        make()


def test_non_numeric_dimensions_keep_their_error():
    with pytest.raises(
        DSLError,
        match=r"dimension 'n' is not a constant int; a dimension is an int or a shape variable",
    ):
        te.placeholder(("n", 4), name="A")
    with pytest.raises(DSLError, match="is not a constant int"):
        te.placeholder((True, 4), name="A")


def test_tensor_call_is_indexing():
    A = te.placeholder((3, 4), name="A")
    i, j = te.var("i"), te.var("j")
    assert str(A(i, j)) == str(A[i, j])
    copy = te.compute((3, 4), lambda *idx: A(*idx) + 1.0, name="copy")
    a = np.arange(12, dtype="float32").reshape(3, 4)
    np.testing.assert_array_equal(evaluate([copy], {A: a})[copy], a + 1)
    with pytest.raises(DSLError, match="has 2 dimensions .* indexed with 1 indices"):
        A(i)


def test_shape_dimensions_have_tvm_value():
    import json

    from ansor_lab import topi

    A = te.placeholder((4, 8), name="A")
    B = te.compute(A.shape, lambda i, j: A[i, j] + 1.0, name="B")
    C = topi.nn.relu(B)
    assert [d.value for d in C.shape] == [4, 8] and C.shape[0].dtype == "int32"
    # still plain ints everywhere else: equal, hashable, JSON numbers
    assert C.shape == (4, 8) and hash(C.shape) == hash((4, 8))
    assert json.dumps(list(C.shape)) == "[4, 8]" and C.shape[0] * 2 == 8


@pytest.mark.parametrize(
    ("call", "advice"),
    [
        (lambda: te.extern((4,), [], lambda ins, outs: None), "as a te.compute"),
        (lambda: te.scan(None, None, None, None), "init must be a tensor or a list"),
    ],
)
def test_unsupported_tvm_names_say_what_to_write(call, advice):
    with pytest.raises(DSLError, match=advice):
        call()


def test_comm_reducer_of_a_sum_and_a_max():
    mysum = te.comm_reducer(lambda x, y: x + y, lambda t: tvm.tir.const(0, dtype=t), name="mysum")
    mymax = te.comm_reducer(lambda x, y: te.max(x, y), lambda t: te.min_value(t), name="mymax")
    A = te.placeholder((8, 16), name="A")
    k = te.reduce_axis((0, 16), name="k")
    k2 = te.reduce_axis((0, 16), name="k2")
    B = te.compute((8,), lambda i: mysum(A[i, k], axis=k), name="B")
    C = te.compute((8,), lambda i: mymax(A[i, k2], axis=k2), name="C")
    f = tvm.build(te.create_schedule([B.op, C.op]), [A, B, C])
    a = np.random.default_rng(0).random((8, 16), dtype="float32")
    b, c = np.empty(8, "float32"), np.empty(8, "float32")
    f(a, b, c)
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5)
    np.testing.assert_array_equal(c, a.max(1))
    bad = te.comm_reducer(lambda x, y: x + y, lambda t: tvm.tir.const(1, dtype=t), name="off")
    with pytest.raises(DSLError, match="identity of a sum"):
        te.compute((8,), lambda i: bad(A[i, k], axis=k), name="D")


@pytest.mark.parametrize(
    ("name", "make", "want"),
    [
        ("if_then_else(c, 1, 0.5)", lambda i, f: te.if_then_else(i > 0, 1, 0.5), [1, 0.5, 0.5, 1]),
        (
            "if_then_else(c, 0.5, 1) + F",
            lambda i, f: te.if_then_else(i > 0, 0.5, 1) + f,
            [1.5, 2, 2, 1.5],
        ),
        ("Select(c, 1, 0.5)", lambda i, f: tvm.tir.Select(i > 0, 1, 0.5), [1, 0.5, 0.5, 1]),
        ("max(1, 0.5) + I", lambda i, f: tvm.tir.max(1, 0.5) + i, [2, 1, 0, 3]),
    ],
)
def test_an_int_and_a_float_number_meet_as_floats(name, make, want):
    """Two Python numbers of different kinds take the float's type, as in TVM (they made
    an int32 node holding a float constant, which LLVM refused)."""
    ints = te.placeholder((4,), "int32", name="I")
    floats = te.placeholder((4,), name="F")
    out = te.compute((4,), lambda k: make(ints[k], floats[k]), name="B")
    assert out.dtype == "float32", name
    f = tvm.build(te.create_schedule(out.op), [ints, floats, out])
    got = np.zeros(4, "float32")
    f(np.array([1, 0, -1, 2], "int32"), np.ones(4, "float32"), got)
    np.testing.assert_array_equal(got, np.array(want, "float32"))
