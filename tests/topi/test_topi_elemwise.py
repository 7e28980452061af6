"""Elementwise operators and activations against numpy."""

import math

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.errors import DSLError

_erf = np.vectorize(math.erf, otypes=[np.float64])

# name -> (numpy function on float64, input range)
UNARY = {
    "exp": (np.exp, (-3, 3)),
    "log": (np.log, (0.1, 5)),
    "sqrt": (np.sqrt, (0.0, 5)),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), (0.1, 5)),
    "tanh": (np.tanh, (-3, 3)),
    "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), (-5, 5)),
    "erf": (_erf, (-2, 2)),
    "floor": (np.floor, (-3, 3)),
    "ceil": (np.ceil, (-3, 3)),
    "round": (np.round, (-3, 3)),
    "abs": (np.abs, (-3, 3)),
    "negative": (np.negative, (-3, 3)),
    "identity": (lambda x: x, (-3, 3)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(17,), (3, 5), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_float(name, shape, dtype, check_op, rand):
    fn, (lo, hi) = UNARY[name]
    a = te.placeholder(shape, dtype, "a")
    out = getattr(topi, name)(a)
    assert out.op.tag == "elemwise"
    x = rand(shape, dtype, lo, hi)
    check_op([a, out], [x], fn(x.astype(np.float64)).astype(dtype))


@pytest.mark.parametrize("name", ["exp", "sigmoid", "tanh"])
def test_unary_float16(name, check_op, rand):
    fn, (lo, hi) = UNARY[name]
    a = te.placeholder((4, 9), "float16", "a")
    x = rand((4, 9), "float16", lo, hi)
    check_op([a, getattr(topi, name)(a)], [x], fn(x.astype(np.float64)).astype("float16"))


@pytest.mark.parametrize("name", ["abs", "negative", "identity"])
def test_unary_int32(name, check_op, rand):
    a = te.placeholder((5, 3), "int32", "a")
    x = rand((5, 3), "int32")
    check_op([a, getattr(topi, name)(a)], [x], UNARY[name][0](x).astype("int32"))


def test_cast(check_op):
    a = te.placeholder((6,), "float32", "a")
    x = np.array([-2.7, -0.5, 0.0, 0.4, 1.9, 3.5], "float32")
    check_op([a, topi.cast(a, "int32")], [x], np.array([-2, 0, 0, 0, 1, 3], "int32"))
    b = te.placeholder((6,), "int32", "b")
    y = np.arange(-3, 3, dtype="int32")
    check_op([b, topi.cast(b, "float64")], [y], y.astype("float64"))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_clip(dtype, check_op, rand):
    a = te.placeholder((4, 5), dtype, "a")
    x = rand((4, 5), dtype, -4, 4)
    check_op([a, topi.clip(a, -1, 2)], [x], np.clip(x, -1, 2).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16"])
def test_relu(dtype, check_op, rand):
    a = te.placeholder((3, 7), dtype, "a")
    x = rand((3, 7), dtype)
    check_op([a, topi.nn.relu(a)], [x], topi.testing.relu_python(x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_leaky_relu(dtype, check_op, rand):
    a = te.placeholder((2, 9), dtype, "a")
    x = rand((2, 9), dtype)
    check_op([a, topi.nn.leaky_relu(a, 0.1)], [x], topi.testing.leaky_relu_python(x, 0.1))


@pytest.mark.parametrize("shape", [(11,), (4, 6)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu(shape, dtype, check_op, rand):
    a = te.placeholder(shape, dtype, "a")
    x = rand(shape, dtype, -4, 4)
    check_op([a, topi.nn.gelu(a)], [x], topi.testing.gelu_python(x))


def test_float_only_ops_reject_ints():
    a = te.placeholder((3,), "int32", "a")
    with pytest.raises(DSLError, match=r"topi.exp expects a float tensor, got int32 .*topi.cast"):
        topi.exp(a)
    with pytest.raises(DSLError, match="topi.nn.gelu expects a float tensor"):
        topi.nn.gelu(a)


def test_clip_bounds_order():
    a = te.placeholder((3,), "float32", "a")
    with pytest.raises(DSLError, match="a_min=2 is larger than a_max=1"):
        topi.clip(a, 2, 1)


def test_non_tensor_input():
    with pytest.raises(DSLError, match=r"topi.sigmoid: x must be a te.Tensor .* got list"):
        topi.sigmoid([1.0, 2.0])
