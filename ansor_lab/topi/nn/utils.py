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
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return (0, 0, 0, 0)
        if mode == "SAME":
            kh, kw = (get_const_int(k) for k in kernel)
            pad_h, pad_w = kh - 1, kw - 1
            top, left = (pad_h + 1) // 2, (pad_w + 1) // 2
            return (top, left, pad_h - top, pad_w - left)
        raise DSLError(f"padding {padding!r} is not understood; use 'SAME', 'VALID' or ints")
    if isinstance(padding, (tuple, list)):
        if len(padding) == 1:
            padding = padding[0]
        elif len(padding) == 2:
            ph, pw = (get_const_int(p) for p in padding)
            pads = (ph, pw, ph, pw)
        elif len(padding) == 4:
            pads = tuple(get_const_int(p) for p in padding)
        else:
            raise DSLError(
                f"padding {tuple(padding)!r} has {len(padding)} entries; pass an int, "
                "(pad_h, pad_w) or (top, left, bottom, right)"
            )
    if not isinstance(padding, (tuple, list)):
        p = get_const_int(padding)
        pads = (p, p, p, p)
    if any(p < 0 for p in pads):
        raise DSLError(f"padding {pads} has a negative entry; padding must be >= 0")
    return pads  # type: ignore[return-value]


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
