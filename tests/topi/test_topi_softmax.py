"""softmax, log_softmax and layer_norm against the numpy references."""

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.dsl.dag import ComputeDAG
from ansor_lab.errors import DSLError
from ansor_lab.topi import testing

SOFTMAX_CASES = [((4, 7), -1), ((4, 7), 0), ((2, 3, 5), 1), ((9,), 0), ((2, 1, 6), -1)]


@pytest.mark.parametrize(("shape", "axis"), SOFTMAX_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax(shape, axis, dtype, check_op, rand):
    x = te.placeholder(shape, dtype, "x")
    out = topi.nn.softmax(x, axis)
    data = rand(shape, dtype, -4, 4)
    check_op([x, out], [data], testing.softmax_python(data, axis))


@pytest.mark.parametrize(("shape", "axis"), SOFTMAX_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_softmax(shape, axis, dtype, check_op, rand):
    x = te.placeholder(shape, dtype, "x")
    out = topi.nn.log_softmax(x, axis)
    data = rand(shape, dtype, -4, 4)
    check_op([x, out], [data], testing.log_softmax_python(data, axis))


def test_softmax_float16(check_op, rand):
    x = te.placeholder((3, 8), "float16", "x")
    data = rand((3, 8), "float16")
    check_op([x, topi.nn.softmax(x)], [data], testing.softmax_python(data))


def test_softmax_is_stable_for_large_inputs(check_op):
    x = te.placeholder((2, 3), "float32", "x")
    data = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]], "float32")
    want = testing.softmax_python(data)
    assert np.isfinite(want).all()
    check_op([x, topi.nn.softmax(x)], [data], want)


def test_softmax_stages():
    x = te.placeholder((4, 5), "float32", "x")
    dag = ComputeDAG([topi.nn.softmax(x)])
    assert [op.name for op in dag.compute_ops] == [
        "T_softmax_maxelem",
        "T_softmax_exp",
        "T_softmax_expsum",
        "T_softmax_norm",
    ]
    assert dag.op("T_softmax_maxelem").output(0).shape == (4,)


LAYER_NORM_CASES = [
    ((4, 8), [-1]),
    ((2, 3, 6), [2]),
    ((2, 3, 4), [1, 2]),
    ((3, 5, 2), [0]),
    ((2, 4, 3), [0, 2]),
    ((7,), [0]),
    ((3, 4), [0, 1]),
]


@pytest.mark.parametrize(("shape", "axis"), LAYER_NORM_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("with_beta", [True, False])
def test_layer_norm(shape, axis, dtype, with_beta, check_op, rand):
    norm_shape = tuple(shape[a] for a in sorted(a % len(shape) for a in axis))
    data = te.placeholder(shape, dtype, "data")
    gamma = te.placeholder(norm_shape, dtype, "gamma")
    x, g = rand(shape, dtype, -3, 3), rand(norm_shape, dtype, 0.5, 1.5)
    args, arrays, b_np, beta = [data, gamma], [x, g], None, None
    if with_beta:
        beta = te.placeholder(norm_shape, dtype, "beta")
        b_np = rand(norm_shape, dtype)
        args, arrays = args + [beta], arrays + [b_np]
    out = topi.nn.layer_norm(data, gamma, beta, axis, epsilon=1e-5)
    want = testing.layer_norm_python(x, g, b_np, axis, 1e-5)
    check_op(
        args + [out],
        arrays,
        want,
        rtol=1e-4 if dtype == "float32" else None,
        atol=1e-4 if dtype == "float32" else None,
    )


def test_layer_norm_output_statistics(rand):
    x = rand((3, 16), "float64", -5, 5)
    out = testing.layer_norm_python(x, np.ones(16), np.zeros(16), [-1], 0.0)
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(out.std(axis=-1), 1.0, rtol=1e-12)


def test_softmax_errors():
    with pytest.raises(DSLError, match="topi.nn.softmax expects a float tensor, got int32"):
        topi.nn.softmax(te.placeholder((3, 4), "int32", "x"))
    with pytest.raises(DSLError, match="axis 2 is out of range for a 2-D tensor"):
        topi.nn.log_softmax(te.placeholder((3, 4), "float32", "x"), axis=2)


def test_layer_norm_errors():
    data = te.placeholder((2, 3, 4), "float32", "data")
    g4 = te.placeholder((4,), "float32", "g")
    with pytest.raises(DSLError, match=r"gamma has shape \(4,\) but the normalised axes \(1, 2\)"):
        topi.nn.layer_norm(data, g4, None, [1, 2])
    with pytest.raises(DSLError, match=r"beta has shape \(3,\) .* pass a beta of shape \(4,\)"):
        topi.nn.layer_norm(data, g4, te.placeholder((3,), "float32", "b"), [-1])
    with pytest.raises(DSLError, match="axis is empty"):
        topi.nn.layer_norm(data, g4, None, [])
    with pytest.raises(DSLError, match="gamma is float64 but data is float32"):
        topi.nn.layer_norm(data, te.placeholder((4,), "float64", "g64"), None, [-1])
