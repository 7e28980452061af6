"""Nearest-neighbour and bilinear upsampling of H and W (``topi.nn.upsampling``).

TVM resizes to (round(H * scale_h), round(W * scale_w)) through ``topi.image.resize2d``
with the "asymmetric" coordinate transform (input y = y * H / OH), or "align_corners"
(y * (H - 1) / (OH - 1)). The source positions are computed here in integers, exactly,
where TVM rounds a float32 product (nearest adds 1e-5 before the floor): the same pixels
for any size below 10**5.
"""

from __future__ import annotations

from typing import Any

from ...dsl import dtypes, intrin
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..tag import INJECTIVE
from ..utils import check_tensor


def _out_size(size: int, scale: Any, what: str, op: str) -> int:
    try:
        value = float(scale)
    except (TypeError, ValueError):
        raise DSLError(f"{op}: {what} must be a number, got {scale!r}") from None
    out = round(size * value)  # Python's round: half to even, as TVM's reference
    if not value > 0 or out < 1:
        raise DSLError(
            f"{op}: {what}={scale!r} scales {size} to {out} pixels; pass a positive scale "
            "that leaves at least one pixel"
        )
    return out


def _source(o: Any, size: int, out: int, align_corners: bool) -> tuple[Any, Any]:
    """(numerator, denominator) of the input coordinate of output index ``o``."""
    if align_corners:
        return (o * (size - 1), out - 1) if out > 1 else (o * 0, 1)
    return o * size, out


def upsampling(
    data: Tensor,
    scale_h: float,
    scale_w: float,
    layout: str = "NCHW",
    method: str = "nearest_neighbor",
    align_corners: bool = False,
    output_shape: Any = None,
) -> Tensor:
    """Upsample H and W of 4-D ``data`` by ``scale_h`` / ``scale_w``.

    ``method`` is "nearest_neighbor" or "bilinear" (TVM's bicubic is not provided);
    ``layout`` "NCHW" or "NHWC". Bilinear works in float32 for float16 and integer data
    (cast back at the end, as TVM) and in float64 for float64 data, where TVM works in
    float32. ``output_shape`` (TVM's dynamic-shape argument) must be None.
    """
    op = "topi.nn.upsampling"
    check_tensor(data, f"{op}: data", ndim=4)
    if layout not in ("NCHW", "NHWC"):
        raise DSLError(f"{op}: layout {layout!r} is not supported; use 'NCHW' or 'NHWC'")
    if method not in ("nearest_neighbor", "bilinear", "linear"):
        raise DSLError(
            f"{op}: method {method!r} is not supported; use 'nearest_neighbor' or 'bilinear'"
        )
    if output_shape is not None:
        raise DSLError(f"{op}: output_shape is for dynamic shapes, not supported; leave it None")
    h_axis, w_axis = (2, 3) if layout == "NCHW" else (1, 2)
    in_h, in_w = data.shape[h_axis], data.shape[w_axis]
    out_h = _out_size(in_h, scale_h, "scale_h", op)
    out_w = _out_size(in_w, scale_w, "scale_w", op)
    shape = list(data.shape)
    shape[h_axis], shape[w_axis] = out_h, out_w
    shape = tuple(shape)
    corners = bool(align_corners)

    if method == "nearest_neighbor":

        def nearest(o: Any, size: int, out: int) -> Any:
            num, den = _source(o, size, out, corners)
            if corners:  # TVM rounds half away from zero here
                return (2 * num + den) // (2 * den)
            return num // den if den != 1 else num

        def fnearest(*i):
            idx = list(i)
            idx[h_axis] = nearest(i[h_axis], in_h, out_h)
            idx[w_axis] = nearest(i[w_axis], in_w, out_w)
            return data[tuple(idx)]

        return compute(shape, fnearest, name="resize", tag=INJECTIVE)

    acc = data.dtype if data.dtype in ("float32", "float64") else "float32"

    def taps(o: Any, size: int, out: int) -> tuple[Any, Any, Any]:
        num, den = _source(o, size, out, corners)
        lo = num // den if den != 1 else num
        frac = (num % den).astype(acc) / float(den) if den != 1 else None
        return lo, intrin.min(lo + 1, size - 1), frac

    def fbilinear(*i):
        y0, y1, fy = taps(i[h_axis], in_h, out_h)
        x0, x1, fx = taps(i[w_axis], in_w, out_w)

        def pixel(y, x):
            idx = list(i)
            idx[h_axis], idx[w_axis] = y, x
            v = data[tuple(idx)]
            return v if v.dtype == acc else v.astype(acc)

        def lerp(a, b, t):
            return a if t is None else a * (1.0 - t) + b * t

        value = lerp(
            lerp(pixel(y0, x0), pixel(y0, x1), fx), lerp(pixel(y1, x0), pixel(y1, x1), fx), fy
        )
        return value if acc == data.dtype else value.astype(data.dtype)

    if not (dtypes.is_float(data.dtype) or dtypes.is_int(data.dtype)):
        raise DSLError(f"{op}: bilinear needs a numeric tensor, got {data.dtype}")
    return compute(shape, fbilinear, name="resize", tag=INJECTIVE)
