"""What the convolutions share: argument checking, padding stage, window indexing.

Written for any number of spatial axes: the 2-D operators, ``conv1d`` and ``conv3d``
(whose whole compute, ``conv_nd``, lives here) use the same helpers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...dsl import dtypes, intrin
from ...dsl.tensor import Tensor, compute, reduce_axis
from ...errors import DSLError
from ..utils import check_tensor, get_const_int, int_tuple
from .pad import pad
from .utils import check_positive, get_pad_tuple_generic, window_out_size


@dataclass(frozen=True)
class ConvGeometry:
    """Strides, dilations, padding (all begins, then all ends: (top, left, bottom, right) in
    2-D) and output size of a window sliding over one or more spatial axes."""

    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    pads: tuple[int, ...]
    out_size: tuple[int, ...]

    @property
    def out_hw(self) -> tuple[int, ...]:
        """The output size under the name the 2-D operators use."""
        return self.out_size


def conv_geometry(
    op: str, in_size: tuple, kernel_size: tuple, stride: Any, padding: Any, dilation: Any
) -> ConvGeometry:
    """Check and normalise stride/padding/dilation of a convolution or pool.

    ``in_size`` and ``kernel_size`` list the spatial axes (H, W in 2-D); ``stride`` and
    ``dilation`` are an int or one int per axis, ``padding`` as ``get_pad_tuple_generic``.
    """
    n = len(kernel_size)
    s = int_tuple(stride, n, f"{op}: stride")
    d = int_tuple(dilation, n, f"{op}: dilation")
    check_positive(s, "stride", op)
    check_positive(d, "dilation", op)
    dilated = tuple((k - 1) * dd + 1 for k, dd in zip(kernel_size, d))
    begin, end = get_pad_tuple_generic(padding, dilated)
    out = tuple(
        window_out_size(size, k, st, dl, b + e, op)
        for size, k, st, dl, b, e in zip(in_size, kernel_size, s, d, begin, end)
    )
    return ConvGeometry(s, d, begin + end, out)


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


def pad_axes(data: Tensor, axes: tuple, pads: tuple, name: str) -> Tensor:
    """``data`` zero-padded on ``axes`` by ``pads`` (all begins, then all ends), or ``data``
    itself when no padding is needed (so an unpadded convolution has no extra stage)."""
    if not any(pads):
        return data
    before = [0] * data.ndim
    after = [0] * data.ndim
    for axis, b, e in zip(axes, pads[: len(axes)], pads[len(axes) :]):
        before[axis], after[axis] = b, e
    return pad(data, before, after, 0.0, name=name)


def pad_spatial(data: Tensor, h_axis: int, w_axis: int, pads: tuple, name: str) -> Tensor:
    """``data`` zero-padded on its H and W axes by (top, left, bottom, right) (``pad_axes``)."""
    return pad_axes(data, (h_axis, w_axis), pads, name)


def window(out: Any, stride: int, red: Any, dilation: int) -> Any:
    """The input index ``out * stride + red * dilation`` (without multiplications by 1)."""
    base = out * stride if stride != 1 else out
    step = red * dilation if dilation != 1 else red
    return base + step


#: words for the axes of data and kernel layouts, for error messages
_DATA_AXES = {"N": "batch", "C": "in_channel", "D": "depth", "H": "height", "W": "width"}
_KERNEL_AXES = {"O": "out_channel", "I": "in_channel // groups", "D": "kd", "H": "kh", "W": "kw"}


def _describe(layout: str, words: dict, **fixed: Any) -> str:
    """``[batch, in_channel, width]`` for "NCW"; ``fixed`` puts known sizes in (I=3)."""
    return "[" + ", ".join(str(fixed.get(a, words[a])) for a in layout) + "]"


def conv_nd(
    op: str,
    data: Tensor,
    kernel: Tensor,
    layout: str,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: Any,
    out_dtype: str | None,
    names: tuple[str, str] = ("data", "kernel"),
) -> Tensor:
    """Grouped convolution over the spatial axes of ``layout`` (TVM's ``topi.nn.conv``).

    ``layout`` is channels-first ("NCW", "NCDHW": kernel [O, C / groups, *K]) or
    channels-last ("NWC", "NDHWC": kernel [*K, C / groups, O]). As TVM, the padding stage
    is ``pad_temp``, and the output is named and tagged ``[group_]conv{n}d_{layout}``.
    ``names`` are the caller's argument names, for the error messages.
    """
    channels_last = layout.endswith("C")
    spatial = layout[1:-1] if channels_last else layout[2:]
    kernel_layout = spatial + "IO" if channels_last else "OI" + spatial
    n = len(spatial)
    data_name, kernel_name = names
    check_tensor(data, f"{op}: {data_name} {_describe(layout, _DATA_AXES)}", n + 2)
    check_tensor(kernel, f"{op}: {kernel_name} {_describe(kernel_layout, _KERNEL_AXES)}", n + 2)
    groups = get_const_int(groups)
    if groups < 1:
        raise DSLError(f"{op}: groups must be >= 1, got {groups}")
    shape = dict(zip(layout, data.shape))
    kshape = dict(zip(kernel_layout, kernel.shape))
    batch, in_channel, out_channel = shape["N"], shape["C"], kshape["O"]
    if in_channel % groups or out_channel % groups:
        raise DSLError(
            f"{op}: in_channel {in_channel} and out_channel {out_channel} (from {kernel_name} "
            f"{kernel.shape}) must both be divisible by groups={groups}; pass a groups value "
            "that divides both"
        )
    group_in, group_out = in_channel // groups, out_channel // groups
    if kshape["I"] != group_in:
        raise DSLError(
            f"{op}: {kernel_name} {kernel.shape} has {kshape['I']} input channels but "
            f"in_channel // groups = {group_in}; {kernel_name} must be "
            f"{_describe(kernel_layout, _KERNEL_AXES, I=group_in)}"
        )
    g = conv_geometry(
        op,
        tuple(shape[a] for a in spatial),
        tuple(kshape[a] for a in spatial),
        stride,
        padding,
        dilation,
    )
    dt = out_dtype_of(op, data, kernel, out_dtype)
    first_spatial = 1 if channels_last else 2
    temp = pad_axes(data, tuple(range(first_spatial, first_spatial + n)), g.pads, "pad_temp")
    rc = reduce_axis((0, group_in), name="rc")
    # TVM's names: the reduction axes of the spatial axes are ry, rx, rz in layout order
    rs = [reduce_axis((0, kshape[a]), name=f"r{v}") for a, v in zip(spatial, "yxz")]

    def fcompute(*index):
        nn, ff, *out = (index[0], index[-1], *index[1:-1]) if channels_last else index
        channel = ff // group_out * group_in + rc if groups != 1 else rc
        taps = [window(o, s, r, d) for o, s, r, d in zip(out, g.stride, rs, g.dilation)]
        if channels_last:
            x, w = temp[(nn, *taps, channel)], kernel[(*rs, rc, ff)]
        else:
            x, w = temp[(nn, channel, *taps)], kernel[(ff, rc, *rs)]
        # reduction axes in layout order, as TVM's schedules expect
        axes = [*rs, rc] if channels_last else [rc, *rs]
        return intrin.sum(x.astype(dt) * w.astype(dt), axis=axes)

    out_shape = (
        (batch, *g.out_size, out_channel) if channels_last else (batch, out_channel, *g.out_size)
    )
    name = f"{'group_' if groups > 1 else ''}conv{n}d_{layout.lower()}"
    return compute(out_shape, fcompute, name=name, tag=name)
