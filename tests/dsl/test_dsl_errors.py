"""Definition-time errors of the DSL: each names the culprit and says what to write instead."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.dsl.reference import evaluate
from ansor_lab.errors import DSLError, DTypeError, LoweringError


@pytest.fixture
def A():
    return te.placeholder((4, 5), "float32", name="A")


def test_wrong_index_arity_names_the_tensor(A):
    with pytest.raises(
        DSLError, match=r"tensor 'A' has 2 dimensions \(4, 5\) but was indexed with 1"
    ):
        te.compute((4,), lambda i: A[i], name="C")
    with pytest.raises(DSLError, match=r"tensor 'A' has 2 dimensions .* indexed with 3 indices"):
        te.compute((4,), lambda i: A[i, 0, 0], name="C")


@pytest.mark.parametrize("index", [5, 7, -1])
def test_out_of_range_constant_index_names_the_tensor(A, index):
    with pytest.raises(
        DSLError,
        match=rf"tensor 'A': constant index {index} is out of range for dimension 1 of extent 5",
    ):
        te.compute((4,), lambda i: A[i, index], name="C")


def test_float_index_is_rejected(A):
    with pytest.raises(DTypeError, match=r"tensor 'A': index 1 is a float32 expression .*integers"):
        te.compute((4,), lambda i: A[i, 1.5], name="C")
    # a float *load* used as an index is the common mistake
    with pytest.raises(DTypeError, match=r"index 1 is a float32 expression \(A\[i, 0\]\)"):
        te.compute((4,), lambda i: A[i, A[i, 0]], name="C")
    # the suggested fix works
    C = te.compute((4,), lambda i: A[i, A[i, 0].astype("int32")], name="C")
    assert C.shape == (4,)


def test_slice_index_is_rejected(A):
    with pytest.raises(DSLError, match="slices are not supported"):
        te.compute((4,), lambda i: A[i, 0:2], name="C")


def test_float16_plus_float32_needs_an_explicit_cast(A):
    H = te.placeholder((4,), "float16", name="H")
    with pytest.raises(
        DTypeError, match=r"operator \+: float16 and float32 do not match.*astype\('float32'\)"
    ):
        te.compute((4,), lambda i: H[i] + A[i, 0], name="C")
    C = te.compute((4,), lambda i: H[i].astype("float32") + A[i, 0], name="C")
    assert C.dtype == "float32"


def test_int_meets_float_promotes_and_ints_widen():
    I8 = te.placeholder((4,), "int8", name="I8")
    I64 = te.placeholder((4,), "int64", name="I64")
    F = te.placeholder((4,), "float64", name="F")
    assert te.compute((4,), lambda i: I8[i] + I64[i]).dtype == "int64"
    assert te.compute((4,), lambda i: I8[i] * F[i]).dtype == "float64"
    assert te.compute((4,), lambda i: I8[i] + 1).dtype == "int8"  # constants adopt the dtype
    assert te.compute((4,), lambda i: I8[i] + 0.5).dtype == "float32"


def test_bool_does_not_take_part_in_arithmetic():
    B = te.placeholder((4,), "bool", name="B")
    with pytest.raises(DTypeError, match=r"operator \+: bool does not take part in arithmetic"):
        te.compute((4,), lambda i: B[i] + B[i])
    with pytest.raises(DTypeError, match=r"operator \*: bool does not take part in arithmetic"):
        te.compute((4,), lambda i: B[i] * 2)
    with pytest.raises(DTypeError, match="cannot negate a bool"):
        te.compute((4,), lambda i: -B[i])
    with pytest.raises(DTypeError, match=r"te.sum of bool values: cast them"):
        k = te.reduce_axis((0, 4), name="k")
        te.compute((1,), lambda i: te.sum(B[k], axis=k))
    # the suggested cast makes it legal
    assert te.compute((4,), lambda i: B[i].astype("int32") + 1).dtype == "int32"


def test_math_intrinsic_on_int_is_rejected():
    Ints = te.placeholder((4,), "int32", name="I")
    with pytest.raises(
        DTypeError, match=r"te.exp expects a float expression, got int32 \(I\[i\]\); cast first"
    ):
        te.compute((4,), lambda i: te.exp(Ints[i]))
    with pytest.raises(DTypeError, match="te.sqrt expects a float expression"):
        te.compute((4,), lambda i: te.sqrt(Ints[i]))
    with pytest.raises(DTypeError, match="te.truncdiv expects integer operands, got float32"):
        te.truncdiv(te.const(1.0), te.const(2.0))


def test_reduction_must_be_the_top_of_the_body(A):
    k = te.reduce_axis((0, 5), name="k")
    with pytest.raises(DSLError, match=r"compute 'C': te.sum/te.max/te.min must be the outermost"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k) + 1.0, name="C")
    with pytest.raises(DSLError, match="must be the outermost"):
        te.compute((4,), lambda i: te.exp(te.max(A[i, k], axis=k)), name="C")
    with pytest.raises(DSLError, match="a reduction cannot contain another reduction"):
        te.compute((4,), lambda i: te.sum(te.sum(A[i, k], axis=k), axis=k), name="C")


def test_reduction_axis_used_outside_the_reduction(A):
    k = te.reduce_axis((0, 5), name="k")
    with pytest.raises(
        DSLError, match=r"compute 'C': variable 'k' is not an axis of this compute .*outside te.sum"
    ):
        te.compute((4,), lambda i: A[i, k], name="C")
    # an axis of another reduction inside this reduction's body is just as free
    k2 = te.reduce_axis((0, 4), name="k2")
    with pytest.raises(DSLError, match="variable 'k2' is not an axis"):
        te.compute((1,), lambda i: te.sum(A[k2, k], axis=k), name="C")


def test_reduction_axis_arguments_are_checked(A):
    with pytest.raises(DSLError, match=r"te.sum needs a reduction axis: te.sum\(expr, axis=k\)$"):
        te.sum(A[0, 0])
    with pytest.raises(DSLError, match="te.sum: axis must be a te.reduce_axis"):
        te.sum(A[0, 0], axis=te.var("q"))
    i = te.compute((4,), lambda i: A[i, 0]).op.axis[0]
    with pytest.raises(DSLError, match=r"reduction axis must come from te.reduce_axis"):
        te.sum(A[0, 0], axis=[i])
    k = te.reduce_axis((0, 5), name="k")
    with pytest.raises(DSLError, match="a reduction axis is listed twice"):
        te.sum(A[0, k], axis=[k, k])
    with pytest.raises(DSLError, match=r"reduce_axis 'e': empty range"):
        te.reduce_axis((3, 3), name="e")
    with pytest.raises(DTypeError, match=r"te.sum\(where=\) expects a bool condition"):
        te.sum(A[0, k], axis=k, where=A[0, k])


def test_lambda_arity_must_match_the_shape_rank(A):
    with pytest.raises(
        DSLError, match=r"compute 'C': the shape has 2 dimensions but the lambda takes 1 index"
    ):
        te.compute((4, 5), lambda i: A[i, 0], name="C")
    with pytest.raises(DSLError, match="the shape has 1 dimensions but the lambda takes 2"):
        te.compute((4,), lambda i, j: A[i, j], name="C")
    # *args lambdas take any rank
    C = te.compute((4, 5), lambda *idx: A[idx], name="C")
    assert [iv.var.name for iv in C.op.axis] == ["i0", "i1"]


def test_shapes_are_ints_or_int_shape_variables(A):
    x = te.var("x", "float32")
    with pytest.raises(DSLError, match=r"placeholder 'P': shape variable x is float32"):
        te.placeholder((x, 4), name="P")
    with pytest.raises(DSLError, match=r"compute 'C': dimension -2 must be a positive int"):
        te.compute((te.var("n"), -2), lambda i, j: A[i, 0], name="C")
    with pytest.raises(DSLError, match=r"placeholder 'Z': dimension 0 must be positive"):
        te.placeholder((0, 4), name="Z")


def test_multi_output_compute_gives_one_tensor_per_element(A):
    C0, C1 = te.compute((4,), lambda i: (A[i, 0], A[i, 1] * 2.0), name="C")
    assert (C0.name, C1.name) == ("C", "C_v1")
    rng = np.random.default_rng(0)
    a = rng.random(A.shape, dtype="float32")
    got = evaluate([C0, C1], {A: a})
    np.testing.assert_array_equal(got[C0], a[:4, 0])
    np.testing.assert_array_equal(got[C1], a[:4, 1] * 2)
    f = tvm.build(te.create_schedule([C0.op, C1.op]), [A, C0, C1])
    c0, c1 = np.empty(4, "float32"), np.empty(4, "float32")
    f(a, c0, c1)
    np.testing.assert_array_equal(c1, a[:4, 1] * 2)
    with pytest.raises(DSLError, match=r"compute 'E': the lambda returned an empty tuple"):
        te.compute((4,), lambda i: (), name="E")
    with pytest.raises(DSLError, match=r"compute 'C': the lambda returned tensor 'A'; index it"):
        te.compute((4,), lambda i: A, name="C")


@pytest.mark.parametrize("symbolic", [False, True])
def test_a_schedule_of_the_first_output_computes_every_output(symbolic):
    """TVM's tuple-inputs tutorial: ``create_schedule(B0.op)`` then ``build(s, [A0, A1, B0,
    B1])``. B0.op is TVM's one op computing both; B1 came back untouched before."""
    m, n = (te.var("m"), te.var("n")) if symbolic else (3, 5)
    A0, A1 = te.placeholder((m, n), name="A0"), te.placeholder((m, n), name="A1")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A1[i, j] * 3), name="B")
    for ops in (B0.op, [B0.op], B1.op):
        f = tvm.build(te.create_schedule(ops), [A0, A1, B0, B1])
        a0, a1 = np.random.rand(3, 5).astype("float32"), np.random.rand(3, 5).astype("float32")
        b0, b1 = np.zeros((3, 5), "float32"), np.zeros((3, 5), "float32")
        f(a0, a1, b0, b1)
        np.testing.assert_allclose(b0, a0 + 2, rtol=1e-6)
        np.testing.assert_allclose(b1, a1 * 3, rtol=1e-6)


def test_an_argument_the_schedule_does_not_compute_is_refused(A):
    """It would be a parameter nothing writes, its array returned untouched."""
    C = te.compute((4,), lambda i: A[i, 0] + 1.0, name="C")
    D = te.compute((4,), lambda i: A[i, 0] * 2.0, name="D")
    s = te.create_schedule(C.op)
    with pytest.raises(LoweringError, match=r"argument 'D' is a te.compute this schedule does "
                       r"not compute.*te.create_schedule\(\[\.\.\., D.op\]\)"):  # fmt: skip
        tvm.build(s, [A, C, D])
    d = np.zeros(4, "float32")
    tvm.build(te.create_schedule([C.op, D.op]), [A, C, D])(np.ones(A.shape, "float32"),
                                                           np.zeros(4, "float32"), d)  # fmt: skip
    np.testing.assert_array_equal(d, 2.0)


def test_symbolic_condition_is_not_a_python_bool(A):
    with pytest.raises(DSLError, match=r"cannot be used as a Python bool.*te.if_then_else"):
        te.compute((4,), lambda i: A[i, 0] if i < 2 else 0.0)
    with pytest.raises(DTypeError, match=r"if_then_else expects a bool condition, got float32"):
        te.if_then_else(A[0, 0], 1.0, 2.0)


def test_constants_and_dtypes_are_checked():
    with pytest.raises(DTypeError, match=r"constant 300 is out of the range of int8 \[-128, 127\]"):
        te.const(300, "int8")
    with pytest.raises(DTypeError, match="constant 1.5 is not an integer"):
        te.const(1.5, "int32")
    with pytest.raises(DTypeError, match=r"unsupported dtype 'uint16'; ansor_lab supports bool"):
        te.placeholder((4,), "uint16")
    assert te.const(7, "int64").dtype == "int64"
    assert te.placeholder((2,), "half").dtype == "float16"


def test_constant_casts_fold_at_the_constant_precision():
    assert te.const(2.9999999999, "float32").astype("int32").value == 3
    assert te.const(0.1).astype("float64").value == 0.10000000149011612
    assert te.const(0.1, "float64").astype("float32").astype("float64").value == (
        0.10000000149011612
    )
    # inf and NaN have no integer value: the cast stays for run time instead of crashing
    assert str(te.const(float("inf")).astype("int32")) == 'T.Cast("int32", T.float32(inf))'
    assert te.const(-7.9).astype("int8").value == -7
    assert te.const(True).astype("float32").value == 1.0
