"""Grouped 2-D convolution in NCHW (``topi.nn.group_conv2d_nchw``)."""

from __future__ import annotations

from typing import Any

from ...dsl import intrin
from ...dsl.tensor import Tensor, compute, reduce_axis
from ...errors import DSLError
from ..utils import check_tensor, get_const_int
from .conv_common import conv_geometry, out_dtype_of, pad_spatial, window


def group_conv2d_nchw(
    Input: Tensor,
    Filter: Tensor,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    out_dtype: str | None = None,
) -> Tensor:
    """Grouped convolution: Input [N, C, H, W], Filter [OC, C/groups, KH, KW] -> [N, OC, OH, OW]."""
    op = "topi.nn.group_conv2d_nchw"
    check_tensor(Input, f"{op}: Input [batch, in_channel, height, width]", 4)
    check_tensor(Filter, f"{op}: Filter [out_channel, in_channel // groups, kh, kw]", 4)
    groups = get_const_int(groups)
    batch, in_channel, in_h, in_w = Input.shape
    out_channel, f_channel, kh, kw = Filter.shape
    if groups < 1:
        raise DSLError(f"{op}: groups must be >= 1, got {groups}")
    if in_channel % groups:
        raise DSLError(
            f"{op}: in_channel {in_channel} is not divisible by groups={groups}; "
            "pass a groups value that divides the input channels"
        )
    if out_channel % groups:
        raise DSLError(
            f"{op}: out_channel {out_channel} (Filter.shape[0]) is not divisible by "
            f"groups={groups}; pass a groups value that divides the output channels"
        )
    group_in = in_channel // groups
    if f_channel != group_in:
        raise DSLError(
            f"{op}: Filter {Filter.shape} has {f_channel} input channels per group but "
            f"in_channel // groups = {group_in}; Filter must be [out_channel, {group_in}, kh, kw]"
        )
    g = conv_geometry(op, (in_h, in_w), (kh, kw), stride, padding, dilation)
    dt = out_dtype_of(op, Input, Filter, out_dtype)
    temp = pad_spatial(Input, 2, 3, g.pads, "pad_temp")
    (sh, sw), (dh, dw) = g.stride, g.dilation
    group_out = out_channel // groups
    rc = reduce_axis((0, group_in), name="rc")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")

    def fcompute(nn, ff, yy, xx):
        channel = ff // group_out * group_in + rc if groups != 1 else rc
        return intrin.sum(
            temp[nn, channel, window(yy, sh, ry, dh), window(xx, sw, rx, dw)].astype(dt)
            * Filter[ff, rc, ry, rx].astype(dt),
            axis=[rc, ry, rx],
        )

    return compute(
        (batch, out_channel) + g.out_hw, fcompute, name="group_conv2d_nchw", tag="group_conv2d_nchw"
    )
