"""1-D convolution in NCW and NWC layouts (``topi.nn.conv1d``, ``conv1d_ncw``, ``conv1d_nwc``)."""

from __future__ import annotations

from typing import Any

from ...dsl.tensor import Tensor
from ...errors import DSLError
from .conv_common import conv_nd

#: the kernel layout that goes with each data layout (TVM's defaults)
KERNEL_LAYOUTS = {"NCW": "OIW", "NWC": "WIO"}


def conv1d(
    data: Tensor,
    kernel: Tensor,
    strides: Any = 1,
    padding: Any = "VALID",
    dilation: Any = 1,
    groups: int = 1,
    data_layout: str = "NCW",
    kernel_layout: str = "",
    out_dtype: str | None = None,
) -> Tensor:
    """1-D convolution dispatching on ``data_layout``.

    "NCW": data [N, C, W], kernel OIW [OC, C / groups, KW] -> [N, OC, OW].
    "NWC": data [N, W, C], kernel WIO [KW, C / groups, OC] -> [N, OW, OC].
    ``padding`` is an int, (left, right), or "SAME"/"VALID"; ``kernel_layout`` "" means
    the layout that goes with ``data_layout``.
    """
    op = "topi.nn.conv1d"
    if data_layout not in KERNEL_LAYOUTS:
        raise DSLError(f"{op}: data_layout {data_layout!r} is not supported; use 'NCW' or 'NWC'")
    if kernel_layout and kernel_layout != KERNEL_LAYOUTS[data_layout]:
        raise DSLError(
            f"{op}: kernel_layout {kernel_layout!r} does not go with data_layout "
            f"{data_layout!r}; use {KERNEL_LAYOUTS[data_layout]!r}"
        )
    return conv_nd(op, data, kernel, data_layout, strides, padding, dilation, groups, out_dtype)


def conv1d_ncw(
    data: Tensor,
    kernel: Tensor,
    strides: Any = 1,
    padding: Any = "VALID",
    dilation: Any = 1,
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of data [N, C, W] with kernel [OC, C, KW] giving [N, OC, OW]."""
    op = "topi.nn.conv1d_ncw"
    return conv_nd(op, data, kernel, "NCW", strides, padding, dilation, 1, out_dtype)


def conv1d_nwc(
    data: Tensor,
    kernel: Tensor,
    strides: Any = 1,
    padding: Any = "VALID",
    dilation: Any = 1,
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of data [N, W, C] with kernel WIO [KW, C, OC] giving [N, OW, OC]."""
    op = "topi.nn.conv1d_nwc"
    return conv_nd(op, data, kernel, "NWC", strides, padding, dilation, 1, out_dtype)
