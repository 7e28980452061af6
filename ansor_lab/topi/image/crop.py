"""``topi.image.crop_and_resize``: TensorFlow's crop_and_resize, under TVM's signature.

Box ``n`` = (y1, x1, y2, x2), in normalised coordinates of image ``box_indices[n]``, is
resampled to ``crop_size``: output row ``y`` reads input row
``y1 * (H - 1) + (y2 - y1) * (H - 1) * y / (crop_h - 1)`` (the box's centre when
``crop_h`` is 1, where TVM divides by zero), and likewise for columns: box edges at 0
and 1 land exactly on the first and last pixels. A coordinate
outside the image gives ``extrapolation_value``. Coordinates are computed in float64
from the boxes; values are interpolated in float32 (float64 for float64 data).
``box_indices`` are data: they are clamped into ``[0, batch)`` (TVM reads out of bounds).
"""

from __future__ import annotations

from typing import Any

from ...dsl import dtypes
from ...dsl.construct import select
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..tag import INJECTIVE
from ..utils import check_tensor
from .common import (
    accumulation_dtype,
    check_layout,
    check_method,
    check_number,
    check_numeric,
    check_sizes,
    clamp,
    const_of,
    float_taps,
    interpolate,
)

_METHODS = ("bilinear", "nearest_neighbor")
_HINTS = {"linear": "bilinear", "nearest": "nearest_neighbor"}


def crop_and_resize(
    data: Tensor,
    boxes: Tensor,
    box_indices: Tensor,
    crop_size: Any,
    layout: str = "NCHW",
    method: str = "bilinear",
    extrapolation_value: float | None = 0.0,
    out_dtype: str | None = None,
) -> Tensor:
    """Crop each box of ``boxes`` (``[num_boxes, 4]``: y1, x1, y2, x2) out of image
    ``box_indices[n]`` of 4-D ``data`` and resize it to ``crop_size`` = (height, width).

    ``layout``: "NCHW" (result ``[num_boxes, C, h, w]``) or "NHWC"
    (``[num_boxes, h, w, C]``); ``method``: "bilinear" or "nearest_neighbor" (which rounds
    half away from zero). ``extrapolation_value`` (None is 0) fills what falls outside the
    image; ``out_dtype`` defaults to the data's dtype.
    """
    op = "topi.image.crop_and_resize"
    check_tensor(data, f"{op}: data", ndim=4)
    check_tensor(boxes, f"{op}: boxes", ndim=2)
    check_tensor(box_indices, f"{op}: box_indices", ndim=1)
    lay = check_layout(layout, 2, op)
    method = check_method(method, _METHODS, _HINTS, op)
    if method == "bilinear":
        check_numeric(data.dtype, method, op)
    num_boxes = box_indices.shape[0]
    if boxes.shape != (num_boxes, 4):
        raise DSLError(
            f"{op}: boxes must have shape [num_boxes, 4] = ({num_boxes}, 4) (one y1, x1, "
            f"y2, x2 row per entry of box_indices), got {boxes.shape}"
        )
    if not dtypes.is_float(boxes.dtype):
        raise DSLError(f"{op}: boxes must be a float tensor, got {boxes.dtype}")
    if not dtypes.is_int(box_indices.dtype):
        raise DSLError(
            f"{op}: box_indices must be an int tensor, got {box_indices.dtype}; "
            f"cast it with topi.cast({box_indices.name}, 'int32')"
        )
    extrapolation = check_number(
        0.0 if extrapolation_value is None else extrapolation_value, "extrapolation_value", op
    )
    sizes = check_sizes(crop_size, 2, "crop_size", op)
    interp = "linear" if method == "bilinear" else method
    out_dtype = data.dtype if out_dtype is None else str(out_dtype)
    acc = accumulation_dtype(data.dtype, out_dtype)
    batch = data.shape[0]
    extents = [data.shape[a] for a in lay.spatial]
    shape = [num_boxes] + list(data.shape[1:])
    for axis, n_out in zip(lay.spatial, sizes):
        shape[axis] = n_out
    shape = tuple(shape)

    def body(*i):
        n = i[0]
        image = box_indices[n]
        if image.dtype not in ("int32", "int64"):
            image = image.astype("int32")
        image = clamp(image, batch)
        taps, outside = [], None
        for j, (axis, n_in, n_out) in enumerate(zip(lay.spatial, extents, sizes)):
            lo = boxes[n, j].astype("float64")
            hi = boxes[n, j + 2].astype("float64")
            if n_out > 1:
                span = (hi - lo) * float(n_in - 1)
                x = lo * float(n_in - 1) + span * i[axis].astype("float64") / float(n_out - 1)
            else:
                x = (lo + hi) * (0.5 * (n_in - 1))
            taps.append(float_taps(x, n_in, interp, "round", -0.5, False, acc))
            out_j = (x < 0.0) | (x > float(n_in - 1))
            outside = out_j if outside is None else outside | out_j

        def read(spatial, weighted):
            idx = [image] + list(i[1:])
            for axis, n_in, s in zip(lay.spatial, extents, spatial):
                idx[axis] = clamp(s, n_in)
            value = data[tuple(idx)]
            return value.astype(acc) if weighted else value

        value = interpolate(read, taps, acc).astype(out_dtype)
        return select(outside, const_of(extrapolation, out_dtype), value)

    return compute(shape, body, name="crop_and_resize", tag=INJECTIVE)
