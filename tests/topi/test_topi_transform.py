"""Layout operators and padding against numpy."""

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.errors import DSLError

DTYPES = ["float32", "float64", "int32"]


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((3, 4), None), ((2, 3, 5), (1, 2, 0)), ((2, 3, 4, 5), (0, 3, 1, 2)), ((4, 1, 3), (-1, 0, 1))],
    ids=str,
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose(shape, axes, dtype, check_op, rand):
    a = te.placeholder(shape, dtype, "a")
    x = rand(shape, dtype)
    out = topi.transpose(a, axes)
    assert out.op.tag == "injective"
    check_op([a, out], [x], np.transpose(x, axes).copy())


@pytest.mark.parametrize(
    ("shape", "newshape"),
    [((3, 4), (12,)), ((2, 3, 4), (4, -1)), ((12,), (2, 2, 3)), ((5, 6), (3, 10)), ((7,), 7)],
    ids=str,
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape(shape, newshape, dtype, check_op, rand):
    a = te.placeholder(shape, dtype, "a")
    x = rand(shape, dtype)
    check_op([a, topi.reshape(a, newshape)], [x], x.reshape(newshape))


@pytest.mark.parametrize(
    ("shapes", "axis"),
    [
        ([(2, 3), (4, 3)], 0),
        ([(2, 3), (2, 1), (2, 5)], 1),
        ([(2, 3, 4), (2, 3, 1), (2, 3, 2)], -1),
        ([(3, 2)], 0),
    ],
    ids=str,
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_concatenate(shapes, axis, dtype, check_op, rand):
    ts = [te.placeholder(s, dtype, f"t{k}") for k, s in enumerate(shapes)]
    xs = [rand(s, dtype) for s in shapes]
    check_op(ts + [topi.concatenate(ts, axis)], xs, np.concatenate(xs, axis))


@pytest.mark.parametrize(("axis", "num"), [(0, 1), (1, 2), (-1, 1), (-3, 1)])
def test_expand_dims(axis, num, check_op, rand):
    a = te.placeholder((3, 4), "float32", "a")
    x = rand((3, 4))
    want = x
    pos = axis if axis >= 0 else x.ndim + axis + 1
    for _ in range(num):
        want = np.expand_dims(want, pos)
    check_op([a, topi.expand_dims(a, axis, num)], [x], want)


@pytest.mark.parametrize("axis", [None, 0, (0, 2), -1])
def test_squeeze(axis, check_op, rand):
    a = te.placeholder((1, 3, 1, 1), "int32", "a")
    x = rand((1, 3, 1, 1), "int32")
    check_op([a, topi.squeeze(a, axis)], [x], np.squeeze(x, axis))


@pytest.mark.parametrize(
    ("shape", "before", "after", "value"),
    [
        ((3, 4), (1, 2), (2, 0), 0.0),
        ((2, 3, 5), (0, 1, 1), None, -1.5),
        ((1, 2, 5, 4), (0, 0, 3, 1), (0, 0, 1, 2), 7.0),
        ((4,), (0,), (0,), 0.0),
    ],
    ids=str,
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pad(shape, before, after, value, dtype, check_op, rand):
    if dtype == "int32" and value != int(value):
        value = 2
    a = te.placeholder(shape, dtype, "a")
    x = rand(shape, dtype)
    out = topi.nn.pad(a, before, after, pad_value=value)
    after = before if after is None else after
    want = np.pad(x, list(zip(before, after)), constant_values=value).astype(dtype)
    check_op([a, out], [x], want)


def test_transpose_errors():
    a = te.placeholder((2, 3, 4), "float32", "a")
    with pytest.raises(DSLError, match=r"axes \(0, 1\) has 2 entries but x is 3-D"):
        topi.transpose(a, (0, 1))
    with pytest.raises(DSLError, match="is not a permutation of range"):
        topi.transpose(a, (0, 1, 1))
    with pytest.raises(DSLError, match=r"axis 3 is out of range for a 3-D tensor"):
        topi.transpose(a, (0, 1, 3))


def test_reshape_errors():
    a = te.placeholder((3, 4), "float32", "a")
    with pytest.raises(DSLError, match=r"cannot reshape \(3, 4\) \(12 elements\) into \(5, 2\)"):
        topi.reshape(a, (5, 2))
    with pytest.raises(DSLError, match="more than one -1"):
        topi.reshape(a, (-1, -1))
    with pytest.raises(DSLError, match="cannot infer -1"):
        topi.reshape(a, (5, -1))
    with pytest.raises(DSLError, match="zero or negative dimension"):
        topi.reshape(a, (0, 12))


def test_concatenate_errors():
    a = te.placeholder((2, 3), "float32", "a")
    b = te.placeholder((2, 4), "float32", "b")
    c = te.placeholder((2, 3), "int32", "c")
    with pytest.raises(DSLError, match=r"tensors\[1\] has shape \(2, 4\), incompatible"):
        topi.concatenate([a, b], axis=0)
    with pytest.raises(DSLError, match=r"tensors\[1\] is int32 but tensors\[0\] is float32"):
        topi.concatenate([a, c], axis=1)
    with pytest.raises(DSLError, match="non-empty list of tensors"):
        topi.concatenate([])
    with pytest.raises(DSLError, match="axis 2 is out of range"):
        topi.concatenate([a, a], axis=2)


def test_squeeze_and_expand_dims_errors():
    a = te.placeholder((1, 3), "float32", "a")
    with pytest.raises(DSLError, match="dimension 1 of shape .* has size 3, not 1"):
        topi.squeeze(a, 1)
    with pytest.raises(DSLError, match="axis 4 is out of range for a 2-D tensor"):
        topi.expand_dims(a, 4)


def test_pad_errors():
    a = te.placeholder((3, 4), "int32", "a")
    with pytest.raises(DSLError, match=r"pad_before must list one padding per dimension \(2"):
        topi.nn.pad(a, (1,))
    with pytest.raises(DSLError, match="paddings must be >= 0"):
        topi.nn.pad(a, (1, -1))
    with pytest.raises(DSLError, match="pad_value 0.5 does not fit int32"):
        topi.nn.pad(a, (1, 1), pad_value=0.5)
