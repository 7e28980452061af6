"""2-D pooling against the numpy reference, plus hand-computed windows."""

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.errors import DSLError
from ansor_lab.topi import testing

# (NCHW shape, kernel, stride, dilation, padding (top, left, bottom, right), ceil_mode)
POOL_CASES = [
    ((1, 2, 8, 8), (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), False),
    ((2, 3, 9, 7), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False),
    ((1, 2, 9, 9), (3, 2), (2, 1), (1, 1), (1, 0, 2, 1), True),
    ((1, 1, 10, 11), (3, 3), (1, 2), (2, 2), (2, 2, 2, 2), False),
    ((1, 2, 7, 6), (2, 3), (3, 2), (2, 1), (1, 1, 0, 1), True),
    ((1, 1, 5, 5), (3, 3), (2, 2), (1, 1), (0, 0, 0, 0), True),
]
IDS = [f"case{k}" for k in range(len(POOL_CASES))]


@pytest.mark.parametrize("case", POOL_CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool(case, dtype, check_op, rand):
    shape, kernel, stride, dilation, padding, ceil_mode = case
    data = te.placeholder(shape, dtype, "data")
    out = topi.nn.pool2d(data, kernel, stride, dilation, padding, "max", ceil_mode)
    assert out.op.tag == "pool_max"
    x = rand(shape, dtype)
    want = testing.pool2d_python(x, kernel, stride, dilation, padding, "max", ceil_mode)
    check_op([data, out], [x], want)


@pytest.mark.parametrize("case", POOL_CASES, ids=IDS)
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool(case, count_include_pad, dtype, check_op, rand):
    shape, kernel, stride, dilation, padding, ceil_mode = case
    data = te.placeholder(shape, dtype, "data")
    out = topi.nn.pool2d(
        data, kernel, stride, dilation, padding, "avg", ceil_mode, "NCHW", count_include_pad
    )
    x = rand(shape, dtype)
    want = testing.pool2d_python(
        x, kernel, stride, dilation, padding, "avg", ceil_mode, count_include_pad
    )
    check_op([data, out], [x], want)


@pytest.mark.parametrize("pool_type", ["max", "avg"])
@pytest.mark.parametrize("case", POOL_CASES[1:4], ids=IDS[1:4])
def test_pool_int32(pool_type, case, check_op, rand):
    shape, kernel, stride, dilation, padding, ceil_mode = case
    data = te.placeholder(shape, "int32", "data")
    out = topi.nn.pool2d(data, kernel, stride, dilation, padding, pool_type, ceil_mode)
    x = rand(shape, "int32", -20, 20)
    want = testing.pool2d_python(x, kernel, stride, dilation, padding, pool_type, ceil_mode)
    check_op([data, out], [x], want)


@pytest.mark.parametrize("pool_type", ["max", "avg"])
@pytest.mark.parametrize("case", POOL_CASES[1:3], ids=IDS[1:3])
def test_pool_nhwc(pool_type, case, check_op, rand):
    shape, kernel, stride, dilation, padding, ceil_mode = case
    nhwc = (shape[0], shape[2], shape[3], shape[1])
    data = te.placeholder(nhwc, "float32", "data")
    out = topi.nn.pool2d(data, kernel, stride, dilation, padding, pool_type, ceil_mode, "NHWC")
    x = rand(nhwc)
    want = testing.pool2d_python(
        x.transpose(0, 3, 1, 2), kernel, stride, dilation, padding, pool_type, ceil_mode
    ).transpose(0, 2, 3, 1)
    check_op([data, out], [x], want)


def test_pool_by_hand(check_op):
    data = te.placeholder((1, 1, 4, 4), "float32", "data")
    x = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    check_op(
        [data, topi.nn.max_pool2d(data, 3, 2, padding=1)],
        [x],
        np.array([[[[5, 7], [13, 15]]]], "float32"),
    )
    check_op(
        [data, topi.nn.avg_pool2d(data, 3, 2, padding=1)],
        [x],
        np.array([[[[10 / 9, 24 / 9], [51 / 9, 90 / 9]]]], "float32"),
    )
    check_op(
        [data, topi.nn.avg_pool2d(data, 3, 2, padding=1, count_include_pad=False)],
        [x],
        np.array([[[[10 / 4, 24 / 6], [51 / 6, 90 / 9]]]], "float32"),
    )


def test_ceil_mode_by_hand(check_op):
    data = te.placeholder((1, 1, 5, 5), "float32", "data")
    x = np.arange(25, dtype="float32").reshape(1, 1, 5, 5)
    out = topi.nn.avg_pool2d(data, 2, 2, ceil_mode=True)
    # the last row/column windows hang over the edge; their extra taps are not counted
    want = np.array([[3, 5, 6.5], [13, 15, 16.5], [20.5, 22.5, 24]], "float32").reshape(1, 1, 3, 3)
    check_op([data, out], [x], want)
    np.testing.assert_allclose(testing.pool2d_python(x, 2, 2, 1, 0, "avg", True), want)


def test_ceil_mode_drops_window_starting_in_padding():
    data = te.placeholder((1, 1, 5, 5), "float32", "data")
    assert topi.nn.max_pool2d(data, 2, 2, padding=1, ceil_mode=True).shape == (1, 1, 3, 3)
    assert topi.nn.max_pool2d(data, 2, 2, padding=1, ceil_mode=False).shape == (1, 1, 3, 3)
    assert topi.nn.max_pool2d(data, 2, 2, padding=0, ceil_mode=True).shape == (1, 1, 3, 3)
    assert topi.nn.max_pool2d(data, 2, 2, padding=0, ceil_mode=False).shape == (1, 1, 2, 2)


@pytest.mark.parametrize("pool_type", ["max", "avg"])
@pytest.mark.parametrize(("layout", "shape"), [("NCHW", (2, 3, 5, 4)), ("NHWC", (2, 5, 4, 3))])
def test_global_pool(pool_type, layout, shape, check_op, rand):
    data = te.placeholder(shape, "float32", "data")
    out = topi.nn.global_pool(data, pool_type, layout)
    x = rand(shape)
    axes = (2, 3) if layout == "NCHW" else (1, 2)
    reduce = np.max if pool_type == "max" else np.mean
    check_op(
        [data, out], [x], reduce(x.astype("float64"), axis=axes, keepdims=True).astype("float32")
    )


def test_pool_errors():
    data = te.placeholder((1, 2, 6, 6), "float32", "data")
    with pytest.raises(DSLError, match="pool_type 'sum' is not supported; use 'max' or 'avg'"):
        topi.nn.pool2d(data, 2, 2, 1, 0, "sum")
    with pytest.raises(DSLError, match="layout 'NCH' does not describe a 4-D tensor"):
        topi.nn.pool2d(data, 2, 2, 1, 0, layout="NCH")
    with pytest.raises(DSLError, match=r"kernel \(0, 2\) must be positive"):
        topi.nn.pool2d(data, (0, 2), 2, 1, 0)
    with pytest.raises(DSLError, match=r"dilated kernel \(7\) is larger than the padded input"):
        topi.nn.pool2d(data, 7, 1, 1, 0)
    with pytest.raises(DSLError, match="kernel must be an int or 2 ints"):
        topi.nn.pool2d(data, (2, 2, 2), 1, 1, 0)
