"""numpy reference of 2-D max/avg pooling (window by window)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import pad4, pair


def _out_len(size: int, k: int, s: int, d: int, before: int, after: int, ceil_mode: bool) -> int:
    span = size + before + after - (k - 1) * d - 1
    if not ceil_mode:
        return span // s + 1
    out = int(np.ceil(span / s)) + 1
    # as PyTorch: the last window must start inside the input or the leading padding
    return out - 1 if (out - 1) * s >= size + before else out


def pool2d_python(
    np_data: np.ndarray,
    kernel: Any,
    strides: Any,
    dilation: Any,
    padding: Any,
    pool_type: str,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    layout: str = "NCHW",
) -> np.ndarray:
    """Max/avg pooling over H, W of ``layout``; padding is (top, left, bottom, right) or an int.

    Padded taps never win a max; an average divides by the taps inside the explicitly
    padded input (``count_include_pad``, extra ceil-mode padding not counted) or inside the
    real input (at least 1). Integer averages truncate toward zero.
    """
    kh, kw = pair(kernel)
    sh, sw = pair(strides)
    dh, dw = pair(dilation)
    top, left, bottom, right = pad4(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    h_axis, w_axis = layout.index("H"), layout.index("W")
    data = np.moveaxis(np_data, (h_axis, w_axis), (-2, -1))
    h, w = data.shape[-2:]
    oh = _out_len(h, kh, sh, dh, top, bottom, ceil_mode)
    ow = _out_len(w, kw, sw, dw, left, right, ceil_mode)
    is_float = np.issubdtype(np_data.dtype, np.floating)
    out = np.zeros(data.shape[:-2] + (oh, ow), np_data.dtype)
    for i in range(oh):
        rows = [i * sh - top + k * dh for k in range(kh)]
        in_rows = [r for r in rows if 0 <= r < h]
        padded_rows = [r for r in rows if -top <= r < h + bottom]
        for j in range(ow):
            cols = [j * sw - left + k * dw for k in range(kw)]
            in_cols = [c for c in cols if 0 <= c < w]
            padded_cols = [c for c in cols if -left <= c < w + right]
            taps = data[..., in_rows, :][..., in_cols]
            if pool_type == "max":
                if taps.size == 0 or not in_rows or not in_cols:
                    lowest = -np.inf if is_float else np.iinfo(np_data.dtype).min
                    out[..., i, j] = lowest
                else:
                    out[..., i, j] = taps.max(axis=(-2, -1))
                continue
            if pool_type != "avg":
                raise ValueError(f"unknown pool_type {pool_type!r}")
            total = taps.astype(np.float64 if is_float else np.int64).sum(axis=(-2, -1))
            if count_include_pad:
                count = len(padded_rows) * len(padded_cols)
            else:
                count = max(len(in_rows) * len(in_cols), 1)
            if is_float:
                out[..., i, j] = total / count
            else:
                out[..., i, j] = np.sign(total) * (np.abs(total) // count)
    return np.moveaxis(out, (-2, -1), (h_axis, w_axis))
