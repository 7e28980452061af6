"""``topi.image.resize1d`` / ``resize2d`` / ``resize3d``: TVM's (and ONNX Resize's)
nearest, linear and cubic resizing under every coordinate transformation mode.

For every mode but "tf_crop_and_resize" the input coordinate of output index ``o`` is a
ratio of integers, ``(a * o + b) / d``: the pixel indices (and nearest_neighbor's
rounding) are computed exactly in integers and only the fractions in floats, where TVM
rounds float32 products (and adds 1e-5 before floor): the same pixels for any size below
10**5. "tf_crop_and_resize" maps through the float ``roi`` in float64.

Values are interpolated in float32 (float64 for float64 data) and cast to ``out_dtype``
(the data's dtype by default): integer results are truncated toward zero, as TVM.
"""

from __future__ import annotations

from typing import Any

from ...dsl import expr as E
from ...dsl.construct import select
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..tag import INJECTIVE
from ..utils import check_tensor
from .common import (
    COORDINATE_MODES,
    METHOD_HINTS,
    METHODS,
    ROUNDING_METHODS,
    accumulation_dtype,
    check_choice,
    check_layout,
    check_method,
    check_number,
    check_numeric,
    check_output_shape,
    check_sizes,
    clamp,
    const_of,
    exact_source,
    exact_taps,
    float_taps,
    interpolate,
)


def _roi(roi: Any, k: int, mode: str, op: str) -> list[tuple[float, float]]:
    """(start, end) per spatial axis from TVM's ``[starts..., ends...]`` roi."""
    if mode != "tf_crop_and_resize":
        return [(0.0, 1.0)] * k  # unused
    if not isinstance(roi, (tuple, list)) or len(roi) != 2 * k:
        raise DSLError(
            f"{op}: coordinate_transformation_mode='tf_crop_and_resize' needs roi, "
            f"{2 * k} numbers [start per axis..., end per axis...], got {roi!r}"
        )
    values = [check_number(v, "roi", op) for v in roi]
    return [(values[j], values[k + j]) for j in range(k)]


def _resize(
    k: int,
    op: str,
    data: Tensor,
    roi: Any,
    size: Any,
    layout: str,
    method: str,
    coordinate_transformation_mode: str,
    rounding_method: str,
    bicubic_alpha: float,
    bicubic_exclude: Any,
    extrapolation_value: Any,
    out_dtype: str | None,
    output_shape: Any,
) -> Tensor:
    check_tensor(data, f"{op}: data", ndim=k + 2)
    lay = check_layout(layout, k, op)
    method = check_method(method, METHODS, METHOD_HINTS, op)
    mode = check_choice(
        coordinate_transformation_mode, COORDINATE_MODES, "coordinate_transformation_mode", op
    )
    rounding = check_choice(rounding_method, ROUNDING_METHODS, "rounding_method", op)
    if rounding == "":
        rounding = "round" if mode == "align_corners" else "floor"
    alpha = check_number(bicubic_alpha, "bicubic_alpha", op)
    exclude = bicubic_exclude
    if not isinstance(exclude, bool):  # TVM takes 0 / 1
        exclude = check_number(exclude, "bicubic_exclude", op) != 0
    extrapolation = check_number(
        0.0 if extrapolation_value is None else extrapolation_value, "extrapolation_value", op
    )
    spans = _roi(roi, k, mode, op)
    sizes = check_sizes(size, k, "size", op)
    out_dtype = data.dtype if out_dtype is None else str(out_dtype)
    if method != "nearest_neighbor":
        check_numeric(data.dtype, method, op)
    acc = accumulation_dtype(data.dtype, out_dtype)
    extents = [data.shape[a] for a in lay.spatial]
    shape = list(data.shape)
    for axis, n_out in zip(lay.spatial, sizes):
        shape[axis] = n_out
    shape = tuple(shape)
    check_output_shape(output_shape, shape, op)
    ratios = None
    if mode != "tf_crop_and_resize":
        ratios = [exact_source(mode, n, m) for n, m in zip(extents, sizes)]

    def body(*i):
        taps, outside = [], None
        for j, (axis, n_in, n_out) in enumerate(zip(lay.spatial, extents, sizes)):
            o = i[axis]
            if ratios is not None:
                taps.append(exact_taps(o, ratios[j], n_in, method, rounding, alpha, exclude, acc))
                continue
            start, end = spans[j]
            if n_out > 1:
                span = (end - start) * (n_in - 1)
                x = start * (n_in - 1) + o.astype("float64") * span / float(n_out - 1)
            else:
                x = E.const(0.5 * (start + end) * (n_in - 1), "float64")
            taps.append(float_taps(x, n_in, method, rounding, alpha, exclude, acc))
            out_j = (x < 0.0) | (x > float(n_in - 1))
            outside = out_j if outside is None else outside | out_j

        def read(spatial, weighted):
            idx = list(i)
            for axis, n_in, s in zip(lay.spatial, extents, spatial):
                idx[axis] = clamp(s, n_in)
            value = data[tuple(idx)]
            return value.astype(acc) if weighted else value

        value = interpolate(read, taps, acc).astype(out_dtype)
        if outside is not None:
            value = select(outside, const_of(extrapolation, out_dtype), value)
        return value

    return compute(shape, body, name="resize", tag=INJECTIVE)


def resize1d(
    data: Tensor,
    roi: Any,
    size: Any,
    layout: str = "NCW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    bicubic_alpha: float = -0.5,
    bicubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    out_dtype: str | None = None,
    output_shape: Any = None,
) -> Tensor:
    """Resize the W axis of 3-D ``data`` ("NCW" or "NWC") to ``size`` = (width,).

    ``method``: "nearest_neighbor", "linear" or "cubic" (``bicubic_alpha`` is the spline
    coefficient; ``bicubic_exclude`` drops taps outside the image and renormalises).
    ``coordinate_transformation_mode``: "half_pixel", "align_corners", "asymmetric",
    "pytorch_half_pixel", "tf_half_pixel_for_nn" or "tf_crop_and_resize" (which maps the
    output onto ``roi`` = [start_w, end_w], in normalised input coordinates, and writes
    ``extrapolation_value`` where it falls outside the input). ``rounding_method`` (nearest
    only): "round" (half away from zero), "floor", "ceil", "round_prefer_floor",
    "round_prefer_ceil", or "" for round with align_corners and floor otherwise.
    """
    return _resize(
        1, "topi.image.resize1d", data, roi, size, layout, method,
        coordinate_transformation_mode, rounding_method, bicubic_alpha, bicubic_exclude,
        extrapolation_value, out_dtype, output_shape,
    )  # fmt: skip


def resize2d(
    data: Tensor,
    roi: Any,
    size: Any,
    layout: str = "NCHW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    bicubic_alpha: float = -0.5,
    bicubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    out_dtype: str | None = None,
    output_shape: Any = None,
) -> Tensor:
    """Resize H and W of 4-D ``data`` ("NCHW" or "NHWC") to ``size`` = (height, width).

    The arguments are ``resize1d``'s; ``roi`` is [start_h, start_w, end_h, end_w].
    Linear and cubic are separable: the value is TVM's nested 1-D interpolations.
    """
    return _resize(
        2, "topi.image.resize2d", data, roi, size, layout, method,
        coordinate_transformation_mode, rounding_method, bicubic_alpha, bicubic_exclude,
        extrapolation_value, out_dtype, output_shape,
    )  # fmt: skip


def resize3d(
    data: Tensor,
    roi: Any,
    size: Any,
    layout: str = "NCDHW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    bicubic_alpha: float = -0.5,
    bicubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    out_dtype: str | None = None,
    output_shape: Any = None,
) -> Tensor:
    """Resize D, H and W of 5-D ``data`` ("NCDHW" or "NDHWC") to ``size`` = (d, h, w).

    The arguments are ``resize1d``'s; ``roi`` is [start_d, start_h, start_w, end_d, end_h,
    end_w] (TVM's documented order). Where TVM's 3-D cubic and tf_crop_and_resize
    mix up axes, this follows the 1-D and 2-D definitions on every axis.
    """
    return _resize(
        3, "topi.image.resize3d", data, roi, size, layout, method,
        coordinate_transformation_mode, rounding_method, bicubic_alpha, bicubic_exclude,
        extrapolation_value, out_dtype, output_shape,
    )  # fmt: skip
