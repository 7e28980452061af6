"""numpy reference of the transposed 2-D convolution (scatter-add of every input pixel)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import acc_dtype, pad4, pair, result_dtype


def conv2d_transpose_nchw_python(
    a_np: np.ndarray,
    w_np: np.ndarray,
    stride: Any,
    padding: Any,
    output_padding: Any,
    out_dtype: Any = None,
) -> np.ndarray:
    """Transposed convolution of a [N, C, H, W] with w [C, OC, KH, KW] -> [N, OC, OH, OW].

    Each input pixel (y, x) adds ``a[:, c, y, x] * w[c, :, ky, kx]`` to the full output at
    (y * stride_h + ky, x * stride_w + kx); ``padding`` (of the forward convolution) is then
    cropped off, and ``output_padding`` extra rows/columns are kept at the bottom/right.
    """
    n, c, h, w = a_np.shape
    wc, oc, kh, kw = w_np.shape
    assert wc == c, "w must be [in_channel, out_channel, kh, kw]"
    sh, sw = pair(stride)
    oph, opw = pair(output_padding)
    top, left, bottom, right = pad4(padding, (kh, kw))
    dt = result_dtype(out_dtype, a_np, w_np)
    acc = acc_dtype(dt)
    x, weight = a_np.astype(acc), w_np.astype(acc)
    full = np.zeros((n, oc, (h - 1) * sh + kh + oph, (w - 1) * sw + kw + opw), acc)
    for ky in range(kh):
        for kx in range(kw):
            rows = slice(ky, ky + (h - 1) * sh + 1, sh)
            cols = slice(kx, kx + (w - 1) * sw + 1, sw)
            full[:, :, rows, cols] += np.einsum("nchw,co->nohw", x, weight[:, :, ky, kx])
    out_h, out_w = full.shape[2] - top - bottom, full.shape[3] - left - right
    return full[:, :, top : top + out_h, left : left + out_w].astype(dt)
