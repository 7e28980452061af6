"""Broadcasting binary operators against numpy."""

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.errors import DSLError, DTypeError

SHAPE_PAIRS = [
    ((3, 4), (3, 4)),
    ((2, 3, 5), (5,)),
    ((5, 1, 3), (1, 4, 1)),
    ((1,), (2, 3)),
    ((7,), (1,)),
]

NUMPY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@pytest.mark.parametrize("name", sorted(NUMPY))
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_float(name, shapes, dtype, check_op, rand):
    a = te.placeholder(shapes[0], dtype, "a")
    b = te.placeholder(shapes[1], dtype, "b")
    out = getattr(topi, name)(a, b)
    x = rand(shapes[0], dtype)
    y = rand(shapes[1], dtype, 0.5, 2.0)
    assert out.op.tag == "broadcast"
    check_op([a, b, out], [x, y], NUMPY[name](x, y).astype(dtype))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum"])
@pytest.mark.parametrize("shapes", SHAPE_PAIRS[:3], ids=str)
def test_binary_int32(name, shapes, check_op, rand):
    a = te.placeholder(shapes[0], "int32", "a")
    b = te.placeholder(shapes[1], "int32", "b")
    out = getattr(topi, name)(a, b)
    x, y = rand(shapes[0], "int32"), rand(shapes[1], "int32")
    check_op([a, b, out], [x, y], NUMPY[name](x, y).astype("int32"))


def test_int_divisions(check_op, rand):
    a = te.placeholder((4, 6), "int32", "a")
    b = te.placeholder((6,), "int32", "b")
    x = rand((4, 6), "int32", -20, 20)
    y = np.array([-7, -3, -1, 2, 5, 9], "int32")
    # divide truncates toward zero on integers (C / TVM), floor_* follow Python
    check_op([a, b, topi.divide(a, b)], [x, y], np.trunc(x / y).astype("int32"))
    check_op([a, b, topi.floor_divide(a, b)], [x, y], np.floor_divide(x, y))
    check_op([a, b, topi.floor_mod(a, b)], [x, y], np.mod(x, y))


def test_power_float(check_op, rand):
    a = te.placeholder((3, 5), "float64", "a")
    b = te.placeholder((5,), "float64", "b")
    x, y = rand((3, 5), "float64", 0.1, 3.0), rand((5,), "float64", -2.0, 2.0)
    check_op([a, b, topi.power(a, b)], [x, y], np.power(x, y))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_scalar_operands(dtype, check_op, rand):
    a = te.placeholder((3, 4), dtype, "a")
    x = rand((3, 4), dtype)
    check_op([a, topi.add(a, 3)], [x], (x + 3).astype(dtype))
    check_op([a, topi.subtract(10, a)], [x], (10 - x).astype(dtype))
    check_op([a, topi.multiply(a, 2)], [x], (x * 2).astype(dtype))
    check_op([a, topi.maximum(a, 0)], [x], np.maximum(x, 0).astype(dtype))


def test_float_scalar_adapts_to_tensor_dtype(check_op, rand):
    a = te.placeholder((6,), "float64", "a")
    x = rand((6,), "float64")
    out = topi.multiply(a, 0.1)
    assert out.dtype == "float64"
    check_op([a, out], [x], x * 0.1)


def test_two_scalars_give_an_expression():
    e = topi.add(te.const(2, "int32"), 3)
    assert isinstance(e, te.PrimExpr)
    assert e.dtype == "int32"


def test_float16_add(check_op, rand):
    a = te.placeholder((4, 8), "float16", "a")
    b = te.placeholder((8,), "float16", "b")
    x, y = rand((4, 8), "float16"), rand((8,), "float16")
    want = (x.astype("float32") + y.astype("float32")).astype("float16")
    check_op([a, b, topi.add(a, b)], [x, y], want)


@pytest.mark.parametrize(
    ("shape", "target"), [((3, 1), (2, 3, 4)), ((1, 4), (3, 4)), ((3, 1), (5, 3, 1))], ids=str
)
def test_broadcast_to(shape, target, check_op, rand):
    a = te.placeholder(shape, "float32", "a")
    x = rand(shape)
    check_op([a, topi.broadcast_to(a, target)], [x], np.broadcast_to(x, target).copy())


def test_incompatible_shapes_raise():
    a = te.placeholder((3, 4), "float32", "a")
    b = te.placeholder((5,), "float32", "b")
    with pytest.raises(DSLError, match=r"topi.add: shapes \(3, 4\) and \(5,\) do not broadcast"):
        topi.add(a, b)
    with pytest.raises(DSLError, match="cannot be broadcast to"):
        topi.broadcast_to(a, (4,))


def test_mixed_float_dtypes_raise():
    a = te.placeholder((3,), "float32", "a")
    b = te.placeholder((3,), "float64", "b")
    with pytest.raises(DTypeError, match="topi.multiply: .*float32 and float64 do not match"):
        topi.multiply(a, b)


def test_non_tensor_operand_raises():
    a = te.placeholder((3,), "float32", "a")
    with pytest.raises(DSLError, match="rhs must be a te.Tensor or a scalar, got ndarray"):
        topi.add(a, np.ones(3))
