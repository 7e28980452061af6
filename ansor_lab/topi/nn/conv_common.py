"""What the 2-D convolutions share: argument checking, padding stage, window indexing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...dsl import dtypes
from ...dsl.tensor import Tensor
from ...errors import DSLError
from ..utils import int_tuple
from .pad import pad
from .utils import check_positive, get_pad_tuple, window_out_size


@dataclass(frozen=True)
class ConvGeometry:
    """Strides, dilations, (top, left, bottom, right) padding and output size of a 2-D window."""

    stride: tuple[int, int]
    dilation: tuple[int, int]
    pads: tuple[int, int, int, int]
    out_hw: tuple[int, int]


def conv_geometry(
    op: str, in_hw: tuple, kernel_hw: tuple, stride: Any, padding: Any, dilation: Any
) -> ConvGeometry:
    """Check and normalise stride/padding/dilation of a 2-D convolution or pool."""
    s = int_tuple(stride, 2, f"{op}: stride")
    d = int_tuple(dilation, 2, f"{op}: dilation")
    check_positive(s, "stride", op)
    check_positive(d, "dilation", op)
    dilated = tuple((k - 1) * dd + 1 for k, dd in zip(kernel_hw, d))
    pads = get_pad_tuple(padding, dilated)
    top, left, bottom, right = pads
    out_h = window_out_size(in_hw[0], kernel_hw[0], s[0], d[0], top + bottom, op)
    out_w = window_out_size(in_hw[1], kernel_hw[1], s[1], d[1], left + right, op)
    return ConvGeometry(s, d, pads, (out_h, out_w))


def out_dtype_of(op: str, data: Tensor, kernel: Tensor, out_dtype: str | None) -> str:
    """The accumulation dtype: ``out_dtype``, or the shared input dtype when it is None."""
    if out_dtype is not None:
        return dtypes.canonical(out_dtype)
    if data.dtype != kernel.dtype:
        raise DSLError(
            f"{op}: data is {data.dtype} but the kernel is {kernel.dtype}; pass "
            f"out_dtype= (e.g. out_dtype='{kernel.dtype}') or cast one of them"
        )
    return data.dtype


def pad_spatial(data: Tensor, h_axis: int, w_axis: int, pads: tuple, name: str) -> Tensor:
    """``data`` zero-padded on its H and W axes, or ``data`` itself when no padding is needed."""
    top, left, bottom, right = pads
    if not any(pads):
        return data
    before = [0] * data.ndim
    after = [0] * data.ndim
    before[h_axis], before[w_axis] = top, left
    after[h_axis], after[w_axis] = bottom, right
    return pad(data, before, after, 0.0, name=name)


def window(out: Any, stride: int, red: Any, dilation: int) -> Any:
    """The input index ``out * stride + red * dilation`` (without multiplications by 1)."""
    base = out * stride if stride != 1 else out
    step = red * dilation if dilation != 1 else red
    return base + step
