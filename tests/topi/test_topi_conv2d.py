"""2-D convolutions (NCHW, NHWC, depthwise, grouped) against the numpy references."""

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.dsl.dag import ComputeDAG
from ansor_lab.errors import DSLError
from ansor_lab.topi import testing

# (N, C, H, W, OC, KH, KW, stride, padding, dilation)
CONV_CASES = [
    (1, 3, 8, 8, 4, 3, 3, 1, 1, 1),
    (2, 4, 9, 7, 5, 3, 3, 2, 1, 1),
    (1, 2, 10, 11, 3, 3, 2, 1, (1, 0), 2),
    (1, 3, 7, 9, 2, 1, 1, (2, 1), 0, 1),
    (1, 2, 9, 9, 4, 3, 3, 2, (0, 1, 2, 2), 2),
    (1, 3, 6, 5, 2, 5, 3, 1, "SAME", 1),
    (2, 1, 5, 8, 3, 2, 4, (1, 3), "VALID", (2, 1)),
]
IDS = [f"case{k}" for k in range(len(CONV_CASES))]


@pytest.mark.parametrize("case", CONV_CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_nchw(case, dtype, check_op, rand):
    n, c, h, w, oc, kh, kw, stride, padding, dilation = case
    data = te.placeholder((n, c, h, w), dtype, "data")
    kernel = te.placeholder((oc, c, kh, kw), dtype, "kernel")
    out = topi.nn.conv2d_nchw(data, kernel, stride, padding, dilation)
    assert out.op.tag == "conv2d_nchw"
    x, k = rand((n, c, h, w), dtype), rand((oc, c, kh, kw), dtype)
    want = testing.conv2d_nchw_python(x, k, stride, padding, dilation=dilation)
    check_op([data, kernel, out], [x, k], want)


@pytest.mark.parametrize("case", CONV_CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_nhwc(case, dtype, check_op, rand):
    n, c, h, w, oc, kh, kw, stride, padding, dilation = case
    data = te.placeholder((n, h, w, c), dtype, "data")
    kernel = te.placeholder((kh, kw, c, oc), dtype, "kernel")
    out = topi.nn.conv2d_nhwc(data, kernel, stride, padding, dilation)
    assert out.op.tag == "conv2d_nhwc"
    x, k = rand((n, h, w, c), dtype), rand((kh, kw, c, oc), dtype)
    want = testing.conv2d_nhwc_python(x, k, stride, padding, dilation=dilation)
    check_op([data, kernel, out], [x, k], want)


def test_nchw_and_nhwc_agree(check_op, rand):
    x, k = rand((2, 3, 7, 6)), rand((4, 3, 3, 3))
    want = testing.conv2d_nhwc_python(
        x.transpose(0, 2, 3, 1), k.transpose(2, 3, 1, 0), 2, 1, dilation=1
    )
    data = te.placeholder((2, 7, 6, 3), "float32", "data")
    kernel = te.placeholder((3, 3, 3, 4), "float32", "kernel")
    out = topi.nn.conv2d(data, kernel, 2, 1, 1, data_layout="NHWC", kernel_layout="HWIO")
    check_op([data, kernel, out], [x.transpose(0, 2, 3, 1), k.transpose(2, 3, 1, 0)], want)
    nchw = testing.conv2d_nchw_python(x, k, 2, 1)
    np.testing.assert_allclose(want.transpose(0, 3, 1, 2), nchw, rtol=1e-5, atol=1e-5)


def test_conv2d_int8_out_int32(check_op, rand):
    data = te.placeholder((1, 4, 6, 6), "int8", "data")
    kernel = te.placeholder((3, 4, 3, 3), "int8", "kernel")
    out = topi.nn.conv2d_nchw(data, kernel, 1, 1, 1, out_dtype="int32")
    assert out.dtype == "int32"
    x = rand((1, 4, 6, 6), "int8", -60, 60)
    k = rand((3, 4, 3, 3), "int8", -60, 60)
    want = testing.conv2d_nchw_python(x, k, 1, 1, out_dtype="int32")
    assert np.abs(want).max() > 127
    check_op([data, kernel, out], [x, k], want)


def test_conv2d_pad_stage_is_separate():
    data = te.placeholder((1, 2, 5, 5), "float32", "data")
    kernel = te.placeholder((2, 2, 3, 3), "float32", "kernel")
    dag = ComputeDAG([topi.nn.conv2d_nchw(data, kernel, 1, 1, 1)])
    names = [op.name for op in dag.compute_ops]
    assert names == ["pad_temp", "conv2d_nchw"]
    assert dag.op("pad_temp").tag == "injective,pad"
    assert dag.op("pad_temp").output(0).shape == (1, 2, 7, 7)
    assert dag.flop_ct == (1 * 2 * 5 * 5) * (2 * 3 * 3) * 2  # a multiply-add per tap
    unpadded = ComputeDAG([topi.nn.conv2d_nchw(data, kernel, 1, 0, 1)])
    assert [op.name for op in unpadded.compute_ops] == ["conv2d_nchw"]


# (N, C, H, W, multiplier, KH, KW, stride, padding, dilation)
DEPTHWISE_CASES = [
    (1, 3, 8, 8, 1, 3, 3, 1, 1, 1),
    (2, 4, 9, 7, 2, 3, 3, 2, 1, 1),
    (1, 2, 11, 10, 3, 3, 3, 1, 2, 2),
    (1, 5, 7, 7, 1, 5, 3, (2, 1), (0, 1, 2, 1), 1),
]


@pytest.mark.parametrize("case", DEPTHWISE_CASES, ids=[f"case{k}" for k in range(4)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_depthwise_conv2d_nchw(case, dtype, check_op, rand):
    n, c, h, w, m, kh, kw, stride, padding, dilation = case
    data = te.placeholder((n, c, h, w), dtype, "data")
    kernel = te.placeholder((c, m, kh, kw), dtype, "kernel")
    out = topi.nn.depthwise_conv2d_nchw(data, kernel, stride, padding, dilation)
    assert out.op.tag == "depthwise_conv2d_nchw"
    x, k = rand((n, c, h, w), dtype), rand((c, m, kh, kw), dtype)
    want = testing.depthwise_conv2d_python_nchw(x, k, stride, padding, dilation)
    check_op([data, kernel, out], [x, k], want)


def test_depthwise_equals_grouped_conv(rand):
    x, k = rand((1, 4, 6, 6)), rand((4, 2, 3, 3))
    depthwise = testing.depthwise_conv2d_python_nchw(x, k, 1, 1)
    grouped = testing.conv2d_nchw_python(x, k.reshape(8, 1, 3, 3), 1, 1, groups=4)
    np.testing.assert_allclose(depthwise, grouped, rtol=1e-6, atol=1e-6)


# (N, C, H, W, OC, groups, K, stride, padding, dilation)
GROUP_CASES = [
    (1, 4, 8, 8, 6, 2, 3, 1, 1, 1),
    (2, 6, 9, 7, 3, 3, 3, 2, 1, 1),
    (1, 8, 10, 10, 8, 4, 3, 1, 2, 2),
    (1, 3, 7, 6, 6, 1, 3, (1, 2), (1, 0, 0, 1), 1),
    (1, 4, 5, 5, 4, 4, 1, 1, 0, 1),
]


@pytest.mark.parametrize("case", GROUP_CASES, ids=[f"case{k}" for k in range(5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_group_conv2d_nchw(case, dtype, check_op, rand):
    n, c, h, w, oc, groups, ksize, stride, padding, dilation = case
    data = te.placeholder((n, c, h, w), dtype, "data")
    kernel = te.placeholder((oc, c // groups, ksize, ksize), dtype, "kernel")
    out = topi.nn.group_conv2d_nchw(data, kernel, stride, padding, dilation, groups)
    assert out.op.tag == "group_conv2d_nchw"
    x, k = rand((n, c, h, w), dtype), rand((oc, c // groups, ksize, ksize), dtype)
    want = testing.group_conv2d_nchw_python(x, k, stride, padding, dilation, groups)
    check_op([data, kernel, out], [x, k], want)


def test_conv2d_errors():
    data = te.placeholder((1, 3, 8, 8), "float32", "data")
    with pytest.raises(DSLError, match="Input has 3 channels but Filter .* expects 4"):
        topi.nn.conv2d_nchw(data, te.placeholder((2, 4, 3, 3), "float32", "k"), 1, 1, 1)
    k = te.placeholder((2, 3, 3, 3), "float32", "k")
    with pytest.raises(DSLError, match=r"Input \[batch, in_channel, height, width\] must be 4-D"):
        topi.nn.conv2d_nchw(te.placeholder((3, 8, 8), "float32", "d3"), k, 1, 1, 1)
    with pytest.raises(DSLError, match=r"stride \(0, 1\) must be positive"):
        topi.nn.conv2d_nchw(data, k, (0, 1), 1, 1)
    with pytest.raises(DSLError, match="padding .* has a negative entry"):
        topi.nn.conv2d_nchw(data, k, 1, -1, 1)
    with pytest.raises(DSLError, match="padding .* has 3 entries"):
        topi.nn.conv2d_nchw(data, k, 1, (1, 1, 1), 1)
    with pytest.raises(DSLError, match=r"dilated kernel \(9\) is larger than the padded input"):
        topi.nn.conv2d_nchw(data, k, 1, 0, 4)
    with pytest.raises(
        DSLError, match="data is float32 but the kernel is float64; pass out_dtype="
    ):
        topi.nn.conv2d_nchw(data, te.placeholder((2, 3, 3, 3), "float64", "k64"), 1, 1, 1)
    with pytest.raises(DSLError, match=r"Filter must be HWIO \[kh, kw, 3, out_channel\]"):
        topi.nn.conv2d_nhwc(
            te.placeholder((1, 8, 8, 3), "float32", "d"),
            te.placeholder((3, 3, 4, 3), "float32", "k"),
            1,
            1,
            1,
        )
    with pytest.raises(DSLError, match="data_layout 'NCWH' is not supported"):
        topi.nn.conv2d(data, k, 1, 1, 1, data_layout="NCWH")
    with pytest.raises(DSLError, match="kernel_layout 'HWIO' does not go with data_layout 'NCHW'"):
        topi.nn.conv2d(data, k, 1, 1, 1, kernel_layout="HWIO")


def test_depthwise_errors():
    data = te.placeholder((1, 3, 8, 8), "float32", "data")
    with pytest.raises(DSLError, match=r"Filter must be \[3, channel_multiplier, kh, kw\]"):
        topi.nn.depthwise_conv2d_nchw(data, te.placeholder((4, 1, 3, 3), "float32", "k"), 1, 1, 1)


def test_group_conv_errors():
    data = te.placeholder((1, 6, 8, 8), "float32", "data")
    k = te.placeholder((4, 3, 3, 3), "float32", "k")
    with pytest.raises(DSLError, match="in_channel 6 is not divisible by groups=4"):
        topi.nn.group_conv2d_nchw(data, k, 1, 1, 1, 4)
    with pytest.raises(
        DSLError, match=r"out_channel 4 \(Filter.shape\[0\]\) is not divisible by groups=3"
    ):
        topi.nn.group_conv2d_nchw(data, k, 1, 1, 1, 3)
    with pytest.raises(DSLError, match=r"Filter must be \[out_channel, 6, kh, kw\]"):
        topi.nn.group_conv2d_nchw(data, k, 1, 1, 1, 1)
    with pytest.raises(DSLError, match="groups must be >= 1, got 0"):
        topi.nn.group_conv2d_nchw(data, k, 1, 1, 1, 0)
