"""3-D convolution in NCDHW and NDHWC layouts (``topi.nn.conv3d_ncdhw``, ``conv3d_ndhwc``)."""

from __future__ import annotations

from typing import Any

from ...dsl.tensor import Tensor
from .conv_common import conv_nd


def conv3d_ncdhw(
    Input: Tensor,
    Filter: Tensor,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of Input [N, C, D, H, W] with Filter [OC, C / groups, KD, KH, KW].

    Gives [N, OC, OD, OH, OW]. ``stride`` and ``dilation`` are an int or (d, h, w);
    ``padding`` an int, (d, h, w), (front, top, left, back, bottom, right) or
    "SAME"/"VALID".
    """
    op = "topi.nn.conv3d_ncdhw"
    names = ("Input", "Filter")
    return conv_nd(op, Input, Filter, "NCDHW", stride, padding, dilation, groups, out_dtype, names)


def conv3d_ndhwc(
    Input: Tensor,
    Filter: Tensor,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    out_dtype: str | None = "float32",
) -> Tensor:
    """Convolution of Input [N, D, H, W, C] with Filter DHWIO [KD, KH, KW, C / groups, OC].

    Gives [N, OD, OH, OW, OC], of ``out_dtype`` (float32 unless given, as TVM; None
    keeps the input dtype). Arguments as ``conv3d_ncdhw``.
    """
    op = "topi.nn.conv3d_ndhwc"
    names = ("Input", "Filter")
    return conv_nd(op, Input, Filter, "NDHWC", stride, padding, dilation, groups, out_dtype, names)
