"""Depthwise 2-D convolution in NCHW (``topi.nn.depthwise_conv2d_nchw``)."""

from __future__ import annotations

from typing import Any

from ...dsl import intrin
from ...dsl.tensor import Tensor, compute, reduce_axis
from ...errors import DSLError
from ..utils import check_tensor
from .conv_common import conv_geometry, out_dtype_of, pad_spatial, window


def depthwise_conv2d_nchw(
    Input: Tensor,
    Filter: Tensor,
    stride: Any,
    padding: Any,
    dilation: Any,
    out_dtype: str | None = None,
) -> Tensor:
    """Per-channel convolution: Input [N, C, H, W], Filter [C, M, KH, KW] -> [N, C*M, OH, OW]."""
    op = "topi.nn.depthwise_conv2d_nchw"
    check_tensor(Input, f"{op}: Input [batch, in_channel, height, width]", 4)
    check_tensor(Filter, f"{op}: Filter [in_channel, channel_multiplier, kh, kw]", 4)
    batch, in_channel, in_h, in_w = Input.shape
    f_channel, multiplier, kh, kw = Filter.shape
    if f_channel != in_channel:
        raise DSLError(
            f"{op}: Input has {in_channel} channels but Filter {Filter.shape} has {f_channel}; "
            f"Filter must be [{in_channel}, channel_multiplier, kh, kw]"
        )
    g = conv_geometry(op, (in_h, in_w), (kh, kw), stride, padding, dilation)
    dt = out_dtype_of(op, Input, Filter, out_dtype)
    padded = pad_spatial(Input, 2, 3, g.pads, "PaddedInput")
    (sh, sw), (dh, dw) = g.stride, g.dilation
    di = reduce_axis((0, kh), name="di")
    dj = reduce_axis((0, kw), name="dj")

    def fcompute(b, c, i, j):
        ic = c // multiplier if multiplier != 1 else c
        m = c % multiplier if multiplier != 1 else 0
        return intrin.sum(
            padded[b, ic, window(i, sh, di, dh), window(j, sw, dj, dw)].astype(dt)
            * Filter[ic, m, di, dj].astype(dt),
            axis=[di, dj],
        )

    return compute(
        (batch, in_channel * multiplier) + g.out_hw,
        fcompute,
        name="DepthwiseConv2d",
        tag="depthwise_conv2d_nchw",
    )
