"""The numpy references and helpers themselves, checked against brute-force loops."""

import itertools

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.dsl.expr import IntImm
from ansor_lab.errors import DSLError
from ansor_lab.topi import testing


def _naive_conv_nchw(x, w, stride, pad, dilation, groups):
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    top, left, bottom, right = pad
    oh = (h + top + bottom - (kh - 1) * dilation - 1) // stride + 1
    ow = (wd + left + right - (kw - 1) * dilation - 1) // stride + 1
    out = np.zeros((n, oc, oh, ow))
    og = oc // groups
    for b, f, i, j in itertools.product(range(n), range(oc), range(oh), range(ow)):
        g = f // og
        total = 0.0
        for r, p, q in itertools.product(range(cg), range(kh), range(kw)):
            y = i * stride + p * dilation - top
            xx = j * stride + q * dilation - left
            if 0 <= y < h and 0 <= xx < wd:
                total += x[b, g * cg + r, y, xx] * w[f, r, p, q]
        out[b, f, i, j] = total
    return out


@pytest.mark.parametrize(
    ("stride", "pad", "dilation", "groups"),
    [(1, (1, 1, 1, 1), 1, 1), (2, (0, 1, 2, 0), 2, 2), (3, (2, 2, 0, 1), 1, 4)],
)
def test_conv2d_reference_matches_loops(stride, pad, dilation, groups):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 7, 6))
    w = rng.standard_normal((4, 4 // groups, 3, 2))
    want = _naive_conv_nchw(x, w, stride, pad, dilation, groups)
    got = testing.conv2d_nchw_python(x, w, stride, pad, groups=groups, dilation=dilation)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    nhwc = testing.conv2d_nhwc_python(
        x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), stride, pad, groups, dilation
    )
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), want, rtol=1e-12, atol=1e-12)


def test_dilate_python_matches_dilated_kernel_convolution():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 2, 9, 9)), rng.standard_normal((3, 2, 3, 3))
    dilated = testing.dilate_python(w, (1, 1, 2, 2))
    assert dilated.shape == (3, 2, 5, 5)
    assert (dilated[:, :, 1::2, :] == 0).all()
    np.testing.assert_allclose(
        testing.conv2d_nchw_python(x, w, 1, 1, dilation=2),
        testing.conv2d_nchw_python(x, dilated, 1, 1),
        rtol=1e-12,
    )


def test_pool_reference_matches_loops():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 1, 7, 8))
    pad = (1, 2, 1, 0)
    got = testing.pool2d_python(x, (3, 2), (2, 3), (1, 2), pad, "avg", count_include_pad=False)
    padded = np.full((9, 10), np.nan)
    padded[1:8, 2:10] = x[0, 0]
    for i, j in itertools.product(range(got.shape[2]), range(got.shape[3])):
        taps = padded[i * 2 : i * 2 + 3, j * 3 : j * 3 + 3 : 2]
        assert got[0, 0, i, j] == pytest.approx(np.nanmean(taps))


def test_softmax_reference_sums_to_one():
    x = np.random.default_rng(4).standard_normal((3, 5)).astype("float32")
    for axis in (0, 1):
        s = testing.softmax_python(x, axis)
        np.testing.assert_allclose(s.sum(axis=axis), 1.0, rtol=1e-6)
        np.testing.assert_allclose(np.exp(testing.log_softmax_python(x, axis)), s, rtol=1e-5)


def test_matmul_references():
    rng = np.random.default_rng(5)
    a, b, bias = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    want = np.array(
        [[sum(a[i, k] * b[j, k] for k in range(4)) + bias[j] for j in range(5)] for i in range(3)]
    )
    np.testing.assert_allclose(testing.dense(a, b, bias), want, rtol=1e-12)
    np.testing.assert_allclose(testing.matmul(a.T, b, bias, True, True), want, rtol=1e-12)
    batch = testing.batch_matmul(a[None], b[None])
    np.testing.assert_allclose(batch[0] + bias, want, rtol=1e-12)


def test_gelu_reference_values():
    x = np.array([-1.0, 0.0, 1.0, 3.0])
    # Phi(x) values of the standard normal distribution
    phi = np.array([0.15865525393145707, 0.5, 0.8413447460685429, 0.9986501019683699])
    np.testing.assert_allclose(testing.gelu_python(x), x * phi, rtol=1e-12)


def test_check_op_detects_mismatches(check_op):
    a = te.placeholder((3,), "float32", "a")
    out = topi.add(a, 1.0)
    x = np.arange(3, dtype="float32")
    check_op(out, [x], x + 1)
    with pytest.raises(AssertionError, match="output 'T_add'"):
        check_op(out, [x], x + 1.001)
    with pytest.raises(AssertionError, match="shape"):
        check_op(out, [x], np.zeros((1, 3), "float32"))
    with pytest.raises(AssertionError, match="dtype"):
        check_op(out, [x], (x + 1).astype("float64"))


def test_get_const_tuple():
    assert topi.utils.get_const_tuple((2, IntImm(3), np.int64(4))) == (2, 3, 4)
    assert topi.utils.get_const_tuple(te.placeholder((5, 6), "float32", "a")) == (5, 6)
    with pytest.raises(DSLError, match="expected a constant int"):
        topi.utils.get_const_tuple((2, te.var("n")))


@pytest.mark.parametrize(
    ("padding", "kernel", "want"),
    [
        (1, (3, 3), (1, 1, 1, 1)),
        ((1, 2), (3, 3), (1, 2, 1, 2)),
        ((0, 1, 2, 3), (3, 3), (0, 1, 2, 3)),
        ("SAME", (3, 4), (1, 2, 1, 1)),
        ("VALID", (3, 3), (0, 0, 0, 0)),
    ],
)
def test_get_pad_tuple(padding, kernel, want):
    assert topi.nn.get_pad_tuple(padding, kernel) == want


def test_get_pad_tuple_rejects_unknown_mode():
    with pytest.raises(DSLError, match="padding 'FULL' is not understood"):
        topi.nn.get_pad_tuple("FULL", (3, 3))
