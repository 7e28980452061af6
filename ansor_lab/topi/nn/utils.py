"""Helpers of the nn operators: padding tuples and output sizes of sliding windows."""

from __future__ import annotations

from typing import Any

from ...errors import DSLError
from ..utils import get_const_int


def get_pad_tuple(padding: Any, kernel: Any) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) from TVM-style padding and the (dilated) kernel size.

    ``padding`` is an int, (pad_h, pad_w), (top, left, bottom, right), or "SAME"/"VALID"
    ("SAME" pads kernel-1 in total, more at the bottom/right, and ignores the stride, as TVM).
    """
    begin, end = get_pad_tuple_generic(padding, kernel)
    return begin + end  # type: ignore[return-value]


def get_pad_tuple_generic(padding: Any, kernel: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(pad_begin, pad_end), one entry per spatial axis of ``kernel`` (its dilated sizes).

    TVM's helper of the same name, for any number of spatial axes: ``padding`` is an int
    (every side), one int per axis (both sides of it), two per axis (all the begins, then
    all the ends: (front, top, left, back, bottom, right) in 3-D), or "SAME"/"VALID".
    """
    n = len(kernel)
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return (0,) * n, (0,) * n
        if mode == "SAME":
            totals = [get_const_int(k) - 1 for k in kernel]
            begin = tuple((t + 1) // 2 for t in totals)
            return begin, tuple(t - b for t, b in zip(totals, begin))
        raise DSLError(f"padding {padding!r} is not understood; use 'SAME', 'VALID' or ints")
    if isinstance(padding, (tuple, list)) and len(padding) == 1:
        padding = padding[0]
    if isinstance(padding, (tuple, list)):
        if len(padding) not in (n, 2 * n):
            raise DSLError(
                f"padding {tuple(padding)!r} has {len(padding)} entries; pass an int, one int "
                f"per spatial axis ({n}) or two per axis ({2 * n}: the begins, then the ends)"
            )
        pads = [get_const_int(p) for p in padding]
        begin, end = (pads, pads) if len(pads) == n else (pads[:n], pads[n:])
    else:
        begin = end = [get_const_int(padding)] * n
    if any(p < 0 for p in begin + end):
        raise DSLError(f"padding {tuple(begin + end)} has a negative entry; padding must be >= 0")
    return tuple(begin), tuple(end)


def check_positive(values: tuple, what: str, op: str) -> None:
    """Raise DSLError unless every entry of ``values`` (strides, dilations...) is >= 1."""
    if any(v < 1 for v in values):
        raise DSLError(f"{op}: {what} {values} must be positive integers (>= 1)")


def window_out_size(size: int, kernel: int, stride: int, dilation: int, pad: int, op: str) -> int:
    """Output length of a sliding window over ``size`` elements plus ``pad`` in total."""
    dilated = (kernel - 1) * dilation + 1
    out = (size + pad - dilated) // stride + 1
    if size + pad < dilated:
        raise DSLError(
            f"{op}: the dilated kernel ({dilated}) is larger than the padded input "
            f"({size} + {pad} padding); use a smaller kernel or dilation, or more padding"
        )
    return out


_LAYOUT_EXAMPLES = {"W": "'NCW' or 'NWC'", "HW": "'NCHW' or 'NHWC'", "DHW": "'NCDHW' or 'NDHWC'"}


def layout_axes(layout: Any, ndim: int, letters: str, op: str) -> tuple[int, ...]:
    """The positions of ``letters`` (the spatial axes, e.g. "HW") in ``layout``, one
    distinct upper-case letter per dimension of the ``ndim``-D data; a DSLError else."""
    if (
        not isinstance(layout, str)
        or len(layout) != ndim
        or not layout.isalpha()
        or not layout.isupper()
        or len(set(layout)) != ndim
        or any(c not in layout for c in letters)
    ):
        example = _LAYOUT_EXAMPLES.get(letters, "'NCHW'")
        raise DSLError(
            f"{op}: layout {layout!r} does not describe a {ndim}-D tensor; pass one distinct "
            f"upper-case letter per dimension including {' and '.join(letters)}, e.g. "
            f"{example}"
        )
    return tuple(layout.index(c) for c in letters)
