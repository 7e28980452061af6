"""1-D, 3-D and transposed 2-D convolutions against the numpy references.

The references themselves are checked against brute-force loops written from the
definitions (and the transposed convolution against the adjoint of conv2d).
"""

import itertools

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.dsl.dag import ComputeDAG
from ansor_lab.errors import DSLError
from ansor_lab.topi import testing

# (N, C, W, OC, KW, strides, padding, dilation, groups, dtype)
CONV1D_CASES = [
    (1, 3, 11, 4, 3, 1, 0, 1, 1, "float32"),
    (2, 4, 13, 6, 3, 2, (1, 2), 1, 2, "float64"),
    (1, 2, 17, 3, 5, 3, "SAME", 2, 1, "float32"),
    (1, 5, 7, 5, 2, 1, "VALID", 3, 5, "float64"),
    (2, 3, 9, 2, 1, (2,), (3,), (1,), 1, "float32"),
]


def _to_nwc(x):
    return x.transpose(0, 2, 1)


@pytest.mark.parametrize("case", CONV1D_CASES, ids=[f"case{k}" for k in range(5)])
@pytest.mark.parametrize("layout", ["NCW", "NWC"])
def test_conv1d(case, layout, check_op, rand):
    n, c, w, oc, k, strides, padding, dilation, groups, dtype = case
    x, kern = rand((n, c, w), dtype), rand((oc, c // groups, k), dtype)
    want = testing.group_conv1d_ncw_python(x, kern, strides, padding, dilation, groups)
    if layout == "NWC":  # kernel WIO [KW, C / groups, OC]
        x, kern, want = _to_nwc(x), kern.transpose(2, 1, 0), _to_nwc(want)
    data = te.placeholder(x.shape, dtype, "data")
    kernel = te.placeholder(kern.shape, dtype, "kernel")
    out = topi.nn.conv1d(data, kernel, strides, padding, dilation, groups, data_layout=layout)
    name = f"{'group_' if groups > 1 else ''}conv1d_{layout.lower()}"
    assert out.op.name == out.op.tag == name
    check_op([data, kernel, out], [x, kern], want)


def test_conv1d_ncw_and_nwc_defaults(check_op, rand):
    """strides=1, padding="VALID", dilation=1 by default, as TVM."""
    x, kern = rand((2, 3, 10)), rand((4, 3, 3))
    want = testing.conv1d_ncw_python(x, kern, 1, "VALID", 1)
    assert want.shape == (2, 4, 8)
    data = te.placeholder((2, 3, 10), "float32", "data")
    kernel = te.placeholder((4, 3, 3), "float32", "kernel")
    out = topi.nn.conv1d_ncw(data, kernel)
    assert out.op.tag == "conv1d_ncw"
    check_op([data, kernel, out], [x, kern], want)
    data = te.placeholder((2, 10, 3), "float32", "data")
    kernel = te.placeholder((3, 3, 4), "float32", "kernel")
    out = topi.nn.conv1d_nwc(data, kernel, out_dtype="float32")
    assert out.op.tag == "conv1d_nwc"
    check_op([data, kernel, out], [_to_nwc(x), kern.transpose(2, 1, 0)], _to_nwc(want))


def test_conv1d_int8_out_int32(check_op, rand):
    data = te.placeholder((1, 13, 4), "int8", "data")
    kernel = te.placeholder((3, 4, 5), "int8", "kernel")
    out = topi.nn.conv1d(data, kernel, 2, 1, data_layout="NWC", out_dtype="int32")
    assert out.dtype == "int32"
    x, kern = rand((1, 13, 4), "int8", -60, 60), rand((3, 4, 5), "int8", -60, 60)
    want = testing.conv1d_ncw_python(_to_nwc(x), kern.transpose(2, 1, 0), 2, 1, 1, "int32")
    assert np.abs(want).max() > 127
    check_op([data, kernel, out], [x, kern], _to_nwc(want))


# (N, C, (D, H, W), OC, (KD, KH, KW), stride, padding, dilation, groups, dtype)
CONV3D_CASES = [
    (1, 2, (5, 6, 7), 3, (3, 3, 3), 1, 1, 1, 1, "float32"),
    (1, 4, (7, 5, 6), 4, (2, 3, 1), (2, 1, 3), (1, 0, 2, 0, 1, 1), 1, 2, "float64"),
    (2, 3, (5, 5, 5), 3, (3, 2, 3), 1, "SAME", (2, 1, 1), 3, "float32"),
    (1, 2, (4, 5, 3), 2, (1, 2, 2), 2, "VALID", 1, 1, "float64"),
]


@pytest.mark.parametrize("case", CONV3D_CASES, ids=[f"case{k}" for k in range(4)])
@pytest.mark.parametrize("layout", ["NCDHW", "NDHWC"])
def test_conv3d(case, layout, check_op, rand):
    n, c, dhw, oc, kdhw, stride, padding, dilation, groups, dtype = case
    x, kern = rand((n, c, *dhw), dtype), rand((oc, c // groups, *kdhw), dtype)
    want = testing.conv3d_ncdhw_python(x, kern, stride, padding, groups, dilation)
    op = topi.nn.conv3d_ncdhw
    if layout == "NDHWC":  # kernel DHWIO [KD, KH, KW, C / groups, OC]
        x, kern = x.transpose(0, 2, 3, 4, 1), kern.transpose(2, 3, 4, 1, 0)
        want = want.transpose(0, 2, 3, 4, 1)
        op = topi.nn.conv3d_ndhwc
    data = te.placeholder(x.shape, dtype, "Input")
    kernel = te.placeholder(kern.shape, dtype, "Filter")
    out = op(data, kernel, stride, padding, dilation, groups, out_dtype=dtype)
    assert out.op.tag == f"{'group_' if groups > 1 else ''}conv3d_{layout.lower()}"
    check_op([data, kernel, out], [x, kern], want)


def test_conv3d_dilation_equals_dilated_kernel(rand):
    """As TVM's tests do it: a dilated convolution is one with a zero-stuffed kernel."""
    x, kern = rand((1, 2, 7, 6, 8), "float64"), rand((3, 2, 2, 3, 2), "float64")
    dilated = testing.dilate_python(kern, (1, 1, 2, 1, 3))
    want = testing.conv3d_ncdhw_python(x, dilated, 1, (1, 0, 2))
    got = testing.conv3d_ncdhw_python(x, kern, 1, (1, 0, 2), dilation=(2, 1, 3))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv3d_ndhwc_defaults_to_float32_out():
    data = te.placeholder((1, 3, 3, 3, 2), "float64", "Input")
    kernel = te.placeholder((1, 1, 1, 2, 2), "float64", "Filter")
    assert topi.nn.conv3d_ndhwc(data, kernel, 1, 0, 1, 1).dtype == "float32"
    assert topi.nn.conv3d_ndhwc(data, kernel, 1, 0, 1, 1, out_dtype=None).dtype == "float64"
    ncdhw = te.placeholder((1, 2, 3, 3, 3), "float64", "Input")
    kernel = te.placeholder((2, 2, 1, 1, 1), "float64", "Filter")
    assert topi.nn.conv3d_ncdhw(ncdhw, kernel, 1, 0, 1, 1).dtype == "float64"


def test_conv3d_pad_stage_and_flops():
    data = te.placeholder((1, 2, 4, 5, 3), "float32", "Input")
    kernel = te.placeholder((3, 2, 3, 3, 3), "float32", "Filter")
    dag = ComputeDAG([topi.nn.conv3d_ncdhw(data, kernel, 1, 1, 1, 1)])
    assert [op.name for op in dag.compute_ops] == ["pad_temp", "conv3d_ncdhw"]
    assert dag.op("pad_temp").output(0).shape == (1, 2, 6, 7, 5)
    assert dag.flop_ct == (3 * 4 * 5 * 3) * (2 * 27) * 2  # a multiply-add per tap
    unpadded = ComputeDAG([topi.nn.conv3d_ncdhw(data, kernel, 1, 0, 1, 1)])
    assert [op.name for op in unpadded.compute_ops] == ["conv3d_ncdhw"]


# (N, C, H, W, OC, KH, KW, strides, padding, output_padding, dtype)
TRANSPOSE_CASES = [
    (1, 3, 5, 4, 2, 3, 3, 1, 0, 0, "float32"),
    (2, 2, 4, 5, 3, 3, 3, 2, 1, 1, "float64"),
    (1, 3, 5, 4, 2, 3, 3, (2, 3), (1, 0, 0, 2), (1, 2), "float32"),
    (1, 2, 7, 3, 3, 4, 2, (3, 1), "SAME", (2, 0), "float64"),
    (1, 4, 3, 3, 1, 5, 5, 2, "VALID", 0, "float32"),
    (1, 1, 1, 1, 2, 3, 3, 3, (2, 1), (2, 1), "float64"),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=[f"case{k}" for k in range(6)])
def test_conv2d_transpose_nchw(case, check_op, rand):
    n, c, h, w, oc, kh, kw, strides, padding, output_padding, dtype = case
    data = te.placeholder((n, c, h, w), dtype, "Input")
    kernel = te.placeholder((c, oc, kh, kw), dtype, "Filter")
    out = topi.nn.conv2d_transpose_nchw(data, kernel, strides, padding, dtype, output_padding)
    assert out.op.tag == "conv2d_transpose_nchw"
    x, kern = rand((n, c, h, w), dtype), rand((c, oc, kh, kw), dtype)
    want = testing.conv2d_transpose_nchw_python(x, kern, strides, padding, output_padding)
    check_op([data, kernel, out], [x, kern], want)


def test_conv2d_transpose_int8_out_int32(check_op, rand):
    data = te.placeholder((1, 3, 4, 3), "int8", "Input")
    kernel = te.placeholder((3, 2, 3, 3), "int8", "Filter")
    out = topi.nn.conv2d_transpose_nchw(data, kernel, 2, 1, "int32", 1)
    assert out.dtype == "int32" and out.shape == (1, 2, 8, 6)
    x, kern = rand((1, 3, 4, 3), "int8", -60, 60), rand((3, 2, 3, 3), "int8", -60, 60)
    want = testing.conv2d_transpose_nchw_python(x, kern, 2, 1, 1, out_dtype="int32")
    assert np.abs(want).max() > 127
    check_op([data, kernel, out], [x, kern], want)


def test_conv2d_transpose_stages():
    """Strided: one stride-1 convolution per output phase (no multiplications by the zeros
    TVM's dilated input holds), interleaved into the output; stride 1: a plain convolution."""
    data = te.placeholder((1, 2, 4, 5), "float32", "Input")
    kernel = te.placeholder((2, 3, 3, 3), "float32", "Filter")
    out = topi.nn.conv2d_transpose_nchw(data, kernel, (2, 1), 1, "float32", (1, 0))
    assert out.shape == (1, 3, 8, 5)
    dag = ComputeDAG([out])
    names = sorted(op.name for op in dag.compute_ops)
    assert names == [
        "conv2d_transpose_nchw",
        "conv2d_transpose_phases",
        "data_pad",
        "kernel_transform",
    ]
    phases = dag.op("conv2d_transpose_phases")
    # [batch, out_channel, phase_h, phase_w, grid_h, grid_w]; taps ceil(3 / 2) x 3
    assert phases.output(0).shape == (1, 3, 2, 1, 5, 6)
    assert [int(ax.dom.extent) for ax in phases.reduce_axis] == [2, 2, 3]
    assert dag.op("kernel_transform").output(0).shape == (3, 2, 2, 1, 2, 3)
    assert dag.op("data_pad").output(0).shape == (1, 2, 4 + 1 + 1, 5 + 2 + 1)
    unit = ComputeDAG([topi.nn.conv2d_transpose_nchw(data, kernel, 1, 2, "float32", 0)])
    assert sorted(op.name for op in unit.compute_ops) == [
        "conv2d_transpose_nchw",
        "kernel_transform",
    ]


def test_conv2d_transpose_is_the_adjoint_of_conv2d(rand):
    """<conv2d(x, w), y> == <x, conv2d_transpose(y, w)>: the operator's defining property."""
    x, w = rand((2, 3, 9, 8), "float64"), rand((4, 3, 3, 2), "float64")
    stride, padding = (2, 3), (1, 0, 2, 1)
    fwd = testing.conv2d_nchw_python(x, w, stride, padding)
    y = rand(fwd.shape, "float64")
    # output_padding recovers the rows/columns the forward stride skipped
    opad = tuple(
        (size + p0 + p1 - k) % s
        for size, p0, p1, k, s in zip((9, 8), (1, 0), (2, 1), (3, 2), stride)
    )
    back = testing.conv2d_transpose_nchw_python(y, w, stride, padding, opad)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.vdot(fwd, y), np.vdot(x, back), rtol=1e-12)


# brute force, straight from the definitions, on tiny cases


def _brute_conv_ncx(x, w, stride, pads, dilation, groups):
    """out[n, f, o] = sum over c, k of x[n, c_of(f) + c, o * stride + k * dilation - pad]."""
    spatial = x.shape[2:]
    oc, cg, *ks = w.shape
    og = oc // groups
    outs = [
        (size + b + e - (k - 1) * d - 1) // s + 1
        for size, b, e, k, d, s in zip(spatial, pads[0], pads[1], ks, dilation, stride)
    ]
    out = np.zeros((x.shape[0], oc, *outs))
    for n, f, *o in itertools.product(range(x.shape[0]), range(oc), *map(range, outs)):
        for c, *k in itertools.product(range(cg), *map(range, ks)):
            pos = [oo * s + kk * d - b for oo, kk, s, d, b in zip(o, k, stride, dilation, pads[0])]
            if all(0 <= p < size for p, size in zip(pos, spatial)):
                out[(n, f, *o)] += x[(n, f // og * cg + c, *pos)] * w[(f, c, *k)]
    return out


def test_conv1d_reference_matches_brute_force(rand):
    x, w = rand((2, 4, 9), "float64"), rand((6, 2, 3), "float64")
    got = testing.group_conv1d_ncw_python(x, w, 2, (2, 1), 2, 2)
    want = _brute_conv_ncx(x, w, (2,), ((2,), (1,)), (2,), 2)
    assert got.shape == want.shape == (2, 6, 4)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    same = testing.conv1d_ncw_python(x[:, :2], w[:3], 1, "SAME", 1)
    np.testing.assert_allclose(same, _brute_conv_ncx(x[:, :2], w[:3], (1,), ((1,), (1,)), (1,), 1))


def test_conv3d_reference_matches_brute_force(rand):
    x, w = rand((1, 4, 5, 4, 6), "float64"), rand((2, 2, 2, 3, 2), "float64")
    pads = (1, 0, 2, 0, 2, 1)  # (front, top, left, back, bottom, right)
    got = testing.conv3d_ncdhw_python(x, w, (1, 2, 3), pads, groups=2, dilation=(2, 1, 1))
    want = _brute_conv_ncx(x, w, (1, 2, 3), (pads[:3], pads[3:]), (2, 1, 1), 2)
    assert got.shape == want.shape == (1, 2, 4, 2, 3)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv2d_transpose_reference_matches_brute_force(rand):
    """out[n, o, y, x] gathers x[n, c, i, j] * w[c, o, ky, kx] over i*s + ky - pad == y."""
    x, w = rand((1, 2, 3, 4), "float64"), rand((2, 3, 3, 2), "float64")
    (sh, sw), (top, left, bottom, right), (oph, opw) = (2, 3), (1, 0, 2, 1), (1, 2)
    got = testing.conv2d_transpose_nchw_python(x, w, (sh, sw), (top, left, bottom, right), (1, 2))
    out_h, out_w = (3 - 1) * sh - top - bottom + 3 + oph, (4 - 1) * sw - left - right + 2 + opw
    want = np.zeros((1, 3, out_h, out_w))
    for o, y, xx, c, ky, kx in itertools.product(
        range(3), range(out_h), range(out_w), range(2), range(3), range(2)
    ):
        i, ri = divmod(y + top - ky, sh)
        j, rj = divmod(xx + left - kx, sw)
        if ri == rj == 0 and 0 <= i < 3 and 0 <= j < 4:
            want[0, o, y, xx] += x[0, c, i, j] * w[c, o, ky, kx]
    assert got.shape == (1, 3, 5, 12)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("padding", "kernel", "want"),
    [
        (2, (3,), ((2,), (2,))),
        ((1, 3), (3,), ((1,), (3,))),
        ("SAME", (4,), ((2,), (1,))),
        ((1, 2, 3), (3, 3, 3), ((1, 2, 3), (1, 2, 3))),
        ((1, 2, 3, 4, 5, 6), (3, 3, 3), ((1, 2, 3), (4, 5, 6))),
        ("SAME", (3, 4, 1), ((1, 2, 0), (1, 1, 0))),
        ("valid", (3, 3, 3), ((0, 0, 0), (0, 0, 0))),
    ],
)
def test_get_pad_tuple_generic(padding, kernel, want):
    assert topi.nn.utils.get_pad_tuple_generic(padding, kernel) == want


def _ph(shape, dtype="float32", name="t"):
    return te.placeholder(shape, dtype, name)


def test_conv1d_errors():
    data, kernel = _ph((1, 3, 8), name="data"), _ph((4, 3, 3), name="kernel")
    conv1d = topi.nn.conv1d
    with pytest.raises(DSLError, match=r"data \[batch, in_channel, width\] must be 3-D"):
        conv1d(_ph((1, 3, 8, 8)), kernel)
    with pytest.raises(
        DSLError, match=r"kernel \[kw, in_channel // groups, out_channel\] must be 3-D"
    ):
        conv1d(_ph((1, 8, 3)), _ph((4, 3)), data_layout="NWC")
    with pytest.raises(
        DSLError,
        match=r"has 2 input channels but in_channel // groups = 3; kernel must be "
        r"\[out_channel, 3, kw\]",
    ):
        conv1d(data, _ph((4, 2, 3)))
    with pytest.raises(DSLError, match=r"kernel must be \[kw, 3, out_channel\]"):
        topi.nn.conv1d_nwc(_ph((1, 8, 3)), _ph((3, 4, 4)))
    with pytest.raises(DSLError, match="must both be divisible by groups=2; pass a groups value"):
        conv1d(data, kernel, groups=2)
    with pytest.raises(DSLError, match="groups must be >= 1, got 0"):
        conv1d(data, kernel, groups=0)
    with pytest.raises(DSLError, match=r"stride \(0,\) must be positive integers"):
        conv1d(data, kernel, 0)
    with pytest.raises(DSLError, match=r"dilation \(0,\) must be positive integers"):
        conv1d(data, kernel, 1, 0, 0)
    with pytest.raises(DSLError, match=r"padding \(-1, -1\) has a negative entry; padding must"):
        conv1d(data, kernel, 1, -1)
    with pytest.raises(DSLError, match=r"has 3 entries; pass an int, one int per spatial axis"):
        conv1d(data, kernel, 1, (1, 1, 1))
    with pytest.raises(DSLError, match="padding 'FULL' is not understood; use 'SAME', 'VALID'"):
        conv1d(data, kernel, 1, "FULL")
    with pytest.raises(DSLError, match=r"dilated kernel \(9\) is larger than the padded input"):
        conv1d(data, kernel, 1, 0, 4)
    with pytest.raises(DSLError, match="data_layout 'NCHW' is not supported; use 'NCW' or 'NWC'"):
        conv1d(data, kernel, data_layout="NCHW")
    with pytest.raises(DSLError, match="kernel_layout 'OIW' does not go with data_layout 'NWC'"):
        conv1d(data, kernel, data_layout="NWC", kernel_layout="OIW")
    with pytest.raises(DSLError, match="data is float32 but the kernel is float64; pass out_dtype"):
        topi.nn.conv1d_ncw(data, _ph((4, 3, 3), "float64"))
    with pytest.raises(DSLError, match="must be a te.Tensor"):
        topi.nn.conv1d_ncw(np.zeros((1, 3, 8)), kernel)


def test_conv3d_errors():
    data, kernel = _ph((1, 4, 5, 5, 5), name="Input"), _ph((2, 4, 3, 3, 3), name="Filter")
    conv3d = topi.nn.conv3d_ncdhw
    with pytest.raises(
        DSLError, match=r"Input \[batch, in_channel, depth, height, width\] must be 5-D"
    ):
        conv3d(_ph((1, 4, 5, 5)), kernel, 1, 1, 1, 1)
    with pytest.raises(DSLError, match=r"Filter must be \[out_channel, 2, kd, kh, kw\]"):
        conv3d(data, kernel, 1, 1, 1, 2)
    with pytest.raises(DSLError, match=r"Filter must be \[kd, kh, kw, 4, out_channel\]"):
        topi.nn.conv3d_ndhwc(_ph((1, 5, 5, 5, 4)), _ph((3, 3, 3, 2, 2)), 1, 1, 1, 1)
    with pytest.raises(DSLError, match="must both be divisible by groups=3"):
        conv3d(data, kernel, 1, 1, 1, 3)
    with pytest.raises(
        DSLError, match=r"has 4 entries; pass an int, one int per spatial axis \(3\)"
    ):
        conv3d(data, kernel, 1, (1, 1, 1, 1), 1, 1)
    with pytest.raises(DSLError, match=r"padding \(0, 0, -1, 0, 0, 0\) has a negative entry"):
        conv3d(data, kernel, 1, (0, 0, -1, 0, 0, 0), 1, 1)
    with pytest.raises(DSLError, match=r"stride must be an int or 3 ints, got \(1, 1\)"):
        conv3d(data, kernel, (1, 1), 1, 1, 1)
    with pytest.raises(DSLError, match=r"stride \(1, 0, 1\) must be positive integers"):
        conv3d(data, kernel, (1, 0, 1), 1, 1, 1)
    with pytest.raises(DSLError, match="padding 'HALF' is not understood"):
        conv3d(data, kernel, 1, "HALF", 1, 1)


def test_conv2d_transpose_errors():
    data, kernel = _ph((1, 3, 5, 5), name="Input"), _ph((3, 2, 3, 3), name="Filter")
    transpose = topi.nn.conv2d_transpose_nchw
    with pytest.raises(DSLError, match=r"Input \[batch, in_channel, height, width\] must be 4-D"):
        transpose(_ph((3, 5, 5)), kernel, 1, 0, "float32", 0)
    with pytest.raises(
        DSLError,
        match=r"Input has 3 channels but Filter \(2, 3, 3, 3\) has 2; Filter must be "
        r"\[3, out_channel, kh, kw\]",
    ):
        transpose(data, _ph((2, 3, 3, 3)), 1, 0, "float32", 0)
    with pytest.raises(DSLError, match=r"output_padding \(2, 0\) must be >= 0 and smaller than"):
        transpose(data, kernel, 2, 0, "float32", (2, 0))
    with pytest.raises(DSLError, match=r"output_padding \(1, 1\) must be >= 0 and smaller than"):
        transpose(data, kernel, 1, 0, "float32", 1)
    with pytest.raises(DSLError, match=r"padding \(3, 0, 0, 0\) is more than the kernel size"):
        transpose(data, kernel, 1, (3, 0, 0, 0), "float32", 0)
    with pytest.raises(DSLError, match="padding .* has a negative entry"):
        transpose(data, kernel, 1, -1, "float32", 0)
    with pytest.raises(DSLError, match=r"strides \(0, 1\) must be positive integers"):
        transpose(data, kernel, (0, 1), 0, "float32", 0)
    with pytest.raises(DSLError, match="padding 'FULL' is not understood"):
        transpose(data, kernel, 1, "FULL", "float32", 0)
    with pytest.raises(DSLError, match=r"the output would be -1x1 .* pass less padding"):
        transpose(_ph((1, 3, 1, 1)), kernel, 1, (2, 1), "float32", 0)
    with pytest.raises(DSLError, match="data is float32 but the kernel is float64"):
        transpose(data, _ph((3, 2, 3, 3), "float64"), 1, 0, None, 0)
