"""numpy references of the 2-D convolutions (direct sums over kernel taps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import acc_dtype, pad4, pair, result_dtype


def _geometry(hw: tuple, khw: tuple, stride: Any, padding: Any, dilation: Any):
    sh, sw = pair(stride)
    dh, dw = pair(dilation)
    kh, kw = khw
    top, left, bottom, right = pad4(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    oh = (hw[0] + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow = (hw[1] + left + right - (kw - 1) * dw - 1) // sw + 1
    return (sh, sw), (dh, dw), (top, left, bottom, right), (oh, ow)


def conv2d_nchw_python(
    a_np: np.ndarray,
    w_np: np.ndarray,
    stride: Any,
    padding: Any,
    groups: int = 1,
    dilation: Any = 1,
    out_dtype: Any = None,
) -> np.ndarray:
    """Convolution of a [N, C, H, W] with w [OC, C/groups, KH, KW] (TVM's argument order)."""
    n, c, h, w = a_np.shape
    oc, cg, kh, kw = w_np.shape
    assert c == cg * groups and oc % groups == 0, "channels do not match groups"
    (sh, sw), (dh, dw), (t, lft, b, r), (oh, ow) = _geometry(
        (h, w), (kh, kw), stride, padding, dilation
    )
    dt = result_dtype(out_dtype, a_np, w_np)
    acc = acc_dtype(dt)
    padded = np.pad(a_np.astype(acc), ((0, 0), (0, 0), (t, b), (lft, r)))
    weight = w_np.astype(acc)
    out = np.zeros((n, oc, oh, ow), acc)
    og = oc // groups
    for g in range(groups):
        src = padded[:, g * cg : (g + 1) * cg]
        wg = weight[g * og : (g + 1) * og]
        for ry in range(kh):
            for rx in range(kw):
                y0, x0 = ry * dh, rx * dw
                patch = src[
                    :, :, y0 : y0 + (oh - 1) * sh + 1 : sh, x0 : x0 + (ow - 1) * sw + 1 : sw
                ]
                out[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", patch, wg[:, :, ry, rx])
    return out.astype(dt)


def group_conv2d_nchw_python(
    a_np: np.ndarray,
    w_np: np.ndarray,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    out_dtype: Any = None,
) -> np.ndarray:
    """Grouped convolution, argument order of ``topi.nn.group_conv2d_nchw``."""
    return conv2d_nchw_python(a_np, w_np, stride, padding, groups, dilation, out_dtype)


def conv2d_nhwc_python(
    a_np: np.ndarray,
    w_np: np.ndarray,
    stride: Any,
    padding: Any,
    groups: int = 1,
    dilation: Any = 1,
    out_dtype: Any = None,
) -> np.ndarray:
    """Convolution of a [N, H, W, C] with w [KH, KW, C/groups, OC] (HWIO)."""
    n, h, w, c = a_np.shape
    kh, kw, cg, oc = w_np.shape
    assert c == cg * groups and oc % groups == 0, "channels do not match groups"
    (sh, sw), (dh, dw), (t, lft, b, r), (oh, ow) = _geometry(
        (h, w), (kh, kw), stride, padding, dilation
    )
    dt = result_dtype(out_dtype, a_np, w_np)
    acc = acc_dtype(dt)
    padded = np.pad(a_np.astype(acc), ((0, 0), (t, b), (lft, r), (0, 0)))
    weight = w_np.astype(acc)
    out = np.zeros((n, oh, ow, oc), acc)
    og = oc // groups
    for g in range(groups):
        for ry in range(kh):
            for rx in range(kw):
                y0, x0 = ry * dh, rx * dw
                patch = padded[
                    :,
                    y0 : y0 + (oh - 1) * sh + 1 : sh,
                    x0 : x0 + (ow - 1) * sw + 1 : sw,
                    g * cg : (g + 1) * cg,
                ]
                out[..., g * og : (g + 1) * og] += np.einsum(
                    "nhwc,co->nhwo", patch, weight[ry, rx, :, g * og : (g + 1) * og]
                )
    return out.astype(dt)


def depthwise_conv2d_python_nchw(
    input_np: np.ndarray,
    filter_np: np.ndarray,
    stride: Any,
    padding: Any,
    dilation: Any = 1,
    out_dtype: Any = None,
) -> np.ndarray:
    """Depthwise convolution: input [N, C, H, W], filter [C, M, KH, KW] -> [N, C*M, OH, OW]."""
    n, c, h, w = input_np.shape
    fc, m, kh, kw = filter_np.shape
    assert fc == c, "filter channels must equal input channels"
    (sh, sw), (dh, dw), (t, lft, b, r), (oh, ow) = _geometry(
        (h, w), (kh, kw), stride, padding, dilation
    )
    dt = result_dtype(out_dtype, input_np, filter_np)
    acc = acc_dtype(dt)
    padded = np.pad(input_np.astype(acc), ((0, 0), (0, 0), (t, b), (lft, r)))
    weight = filter_np.astype(acc)
    out = np.zeros((n, c, m, oh, ow), acc)
    for ry in range(kh):
        for rx in range(kw):
            y0, x0 = ry * dh, rx * dw
            patch = padded[:, :, y0 : y0 + (oh - 1) * sh + 1 : sh, x0 : x0 + (ow - 1) * sw + 1 : sw]
            out += patch[:, :, None] * weight[None, :, :, ry, rx, None, None]
    return out.reshape(n, c * m, oh, ow).astype(dt)


def dilate_python(input_np: np.ndarray, strides: Any, dilation_value: float = 0.0) -> np.ndarray:
    """Insert ``strides[d] - 1`` copies of ``dilation_value`` between elements on each dim d."""
    strides = tuple(int(s) for s in strides)
    assert len(strides) == input_np.ndim, "one stride per dimension"
    shape = tuple((e - 1) * s + 1 for e, s in zip(input_np.shape, strides))
    out = np.full(shape, dilation_value, dtype=input_np.dtype)
    out[tuple(slice(None, None, s) for s in strides)] = input_np
    return out
