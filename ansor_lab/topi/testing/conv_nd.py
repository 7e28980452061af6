"""numpy references of the 1-D and 3-D convolutions (einsum over sliding windows)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .common import acc_dtype, ntuple, pads_nd, result_dtype


def conv_channels_first_python(
    a_np: np.ndarray,
    w_np: np.ndarray,
    stride: Any,
    padding: Any,
    dilation: Any = 1,
    groups: int = 1,
    out_dtype: Any = None,
) -> np.ndarray:
    """Grouped convolution of a [N, C, *S] with w [OC, C/groups, *K], any number of axes S."""
    n_axes = a_np.ndim - 2
    oc, cg = w_np.shape[:2]
    assert a_np.shape[1] == cg * groups and oc % groups == 0, "channels do not match groups"
    strides, dilations = ntuple(stride, n_axes), ntuple(dilation, n_axes)
    spans = tuple((k - 1) * d + 1 for k, d in zip(w_np.shape[2:], dilations))
    begins, ends = pads_nd(padding, spans)
    dt = result_dtype(out_dtype, a_np, w_np)
    acc = acc_dtype(dt)
    padded = np.pad(a_np.astype(acc), [(0, 0), (0, 0), *zip(begins, ends)])
    # every window of the dilated kernel's span, then every stride-th start, dilation-th tap
    windows = sliding_window_view(padded, spans, axis=tuple(range(2, 2 + n_axes)))
    keep = tuple(slice(None, None, s) for s in strides + dilations)
    windows = windows[(slice(None), slice(None), *keep)]
    out_axes, tap_axes = "xyz"[:n_axes], "ijk"[:n_axes]
    spec = f"nc{out_axes}{tap_axes},oc{tap_axes}->no{out_axes}"
    weight = w_np.astype(acc)
    og = oc // groups
    parts = [
        np.einsum(spec, windows[:, g * cg : (g + 1) * cg], weight[g * og : (g + 1) * og])
        for g in range(groups)
    ]
    return np.concatenate(parts, axis=1).astype(dt)


def conv1d_ncw_python(
    a_np: np.ndarray,
    w_np: np.ndarray,
    stride: Any,
    padding: Any,
    dilation: Any,
    out_dtype: Any = None,
) -> np.ndarray:
    """Convolution of a [N, C, W] with w [OC, C, KW] -> [N, OC, OW] (TVM's argument order);
    padding an int, (left, right) or 'SAME' / 'VALID'."""
    return conv_channels_first_python(a_np, w_np, stride, padding, dilation, 1, out_dtype)


def group_conv1d_ncw_python(
    a_np: np.ndarray,
    w_np: np.ndarray,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    out_dtype: Any = None,
) -> np.ndarray:
    """Grouped 1-D convolution: a [N, C, W], w [OC, C/groups, KW] -> [N, OC, OW]."""
    return conv_channels_first_python(a_np, w_np, stride, padding, dilation, groups, out_dtype)


def conv3d_ncdhw_python(
    a_np: np.ndarray,
    w_np: np.ndarray,
    stride: Any,
    padding: Any,
    groups: int = 1,
    dilation: Any = 1,
    out_dtype: Any = None,
) -> np.ndarray:
    """Convolution of a [N, C, D, H, W] with w [OC, C/groups, KD, KH, KW] -> [N, OC, OD, OH,
    OW] (TVM's argument order, plus dilation); padding an int, (d, h, w), 6 ints
    (front, top, left, back, bottom, right) or 'SAME' / 'VALID'."""
    return conv_channels_first_python(a_np, w_np, stride, padding, dilation, groups, out_dtype)
