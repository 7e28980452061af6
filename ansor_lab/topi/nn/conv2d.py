"""2-D convolution in NCHW and NHWC layouts (``topi.nn.conv2d_nchw``, ``conv2d_nhwc``)."""

from __future__ import annotations

from typing import Any

from ...dsl import intrin
from ...dsl.tensor import Tensor, compute, reduce_axis
from ...errors import DSLError
from ..utils import check_tensor
from .conv_common import conv_geometry, out_dtype_of, pad_spatial, window


def conv2d_nchw(
    Input: Tensor,
    Filter: Tensor,
    stride: Any,
    padding: Any,
    dilation: Any,
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of Input [N, C, H, W] with Filter [OC, C, KH, KW] giving [N, OC, OH, OW]."""
    op = "topi.nn.conv2d_nchw"
    check_tensor(Input, f"{op}: Input [batch, in_channel, height, width]", 4)
    check_tensor(Filter, f"{op}: Filter [out_channel, in_channel, kh, kw]", 4)
    batch, in_channel, in_h, in_w = Input.shape
    out_channel, f_channel, kh, kw = Filter.shape
    if f_channel != in_channel:
        raise DSLError(
            f"{op}: Input has {in_channel} channels but Filter {Filter.shape} expects "
            f"{f_channel}; Filter must be [out_channel, {in_channel}, kh, kw] "
            "(for grouped convolution use topi.nn.group_conv2d_nchw)"
        )
    g = conv_geometry(op, (in_h, in_w), (kh, kw), stride, padding, dilation)
    dt = out_dtype_of(op, Input, Filter, out_dtype)
    temp = pad_spatial(Input, 2, 3, g.pads, "pad_temp")
    (sh, sw), (dh, dw) = g.stride, g.dilation
    rc = reduce_axis((0, in_channel), name="rc")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    return compute(
        (batch, out_channel) + g.out_hw,
        lambda nn, ff, yy, xx: intrin.sum(
            temp[nn, rc, window(yy, sh, ry, dh), window(xx, sw, rx, dw)].astype(dt)
            * Filter[ff, rc, ry, rx].astype(dt),
            axis=[rc, ry, rx],
        ),
        name="conv2d_nchw",
        tag="conv2d_nchw",
    )


def conv2d_nhwc(
    Input: Tensor,
    Filter: Tensor,
    stride: Any,
    padding: Any,
    dilation: Any,
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of Input [N, H, W, C] with Filter HWIO [KH, KW, C, OC] -> [N, OH, OW, OC]."""
    op = "topi.nn.conv2d_nhwc"
    check_tensor(Input, f"{op}: Input [batch, height, width, in_channel]", 4)
    check_tensor(Filter, f"{op}: Filter [kh, kw, in_channel, out_channel] (HWIO)", 4)
    batch, in_h, in_w, in_channel = Input.shape
    kh, kw, f_channel, out_channel = Filter.shape
    if f_channel != in_channel:
        raise DSLError(
            f"{op}: Input has {in_channel} channels but Filter {Filter.shape} expects "
            f"{f_channel}; Filter must be HWIO [kh, kw, {in_channel}, out_channel]"
        )
    g = conv_geometry(op, (in_h, in_w), (kh, kw), stride, padding, dilation)
    dt = out_dtype_of(op, Input, Filter, out_dtype)
    padded = pad_spatial(Input, 1, 2, g.pads, "PaddedInput")
    (sh, sw), (dh, dw) = g.stride, g.dilation
    rc = reduce_axis((0, in_channel), name="rc")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    return compute(
        (batch,) + g.out_hw + (out_channel,),
        lambda nn, yy, xx, ff: intrin.sum(
            padded[nn, window(yy, sh, ry, dh), window(xx, sw, rx, dw), rc].astype(dt)
            * Filter[ry, rx, rc, ff].astype(dt),
            axis=[ry, rx, rc],
        ),
        name="Conv2dOutput",
        tag="conv2d_nhwc",
    )


def conv2d(
    input: Tensor,
    filter: Tensor,
    strides: Any,
    padding: Any,
    dilation: Any,
    data_layout: str = "NCHW",
    kernel_layout: str = "",
    out_dtype: str | None = None,
) -> Tensor:
    """2-D convolution dispatching on ``data_layout`` ("NCHW" with OIHW, "NHWC" with HWIO)."""
    expected = {"NCHW": "OIHW", "NHWC": "HWIO"}
    if data_layout not in expected:
        raise DSLError(
            f"topi.nn.conv2d: data_layout {data_layout!r} is not supported; use 'NCHW' or 'NHWC'"
        )
    if kernel_layout and kernel_layout != expected[data_layout]:
        raise DSLError(
            f"topi.nn.conv2d: kernel_layout {kernel_layout!r} does not go with data_layout "
            f"{data_layout!r}; use {expected[data_layout]!r}"
        )
    fn = conv2d_nchw if data_layout == "NCHW" else conv2d_nhwc
    return fn(input, filter, strides, padding, dilation, out_dtype)
