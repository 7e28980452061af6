"""Max/avg pooling (``topi.nn.pool1d``, ``pool2d``, ``pool3d``, ``max_pool2d``, ``avg_pool2d``,
``global_pool``): one N-d core over the spatial axes of the layout."""

from __future__ import annotations

from typing import Any

from ...dsl import intrin
from ...dsl.tensor import Tensor, compute, reduce_axis
from ...errors import DSLError
from ..tag import ELEMWISE
from ..utils import check_tensor, int_tuple
from .pad import pad
from .utils import check_positive, get_pad_tuple_generic, layout_axes


def _out_size(
    size: int, k: int, s: int, d: int, before: int, after: int, ceil_mode: bool, op: str
) -> int:
    dilated = (k - 1) * d + 1
    span = size + before + after - dilated
    if span < 0:
        raise DSLError(
            f"{op}: the dilated kernel ({dilated}) is larger than the padded input "
            f"({size} + {before + after} padding); use a smaller kernel or more padding"
        )
    if not ceil_mode:
        return span // s + 1
    out = -(-span // s) + 1
    if (out - 1) * s >= size + before:  # the last window would start in the padding
        out -= 1
    return out


def _div(x: Any, d: int) -> Any:
    return x // d if d != 1 else x


def _window_count(
    o: Any, size: int, k: int, s: int, d: int, before: int, after: int, out: int, include_pad: bool
) -> Any:
    """How many of a window's k taps fall inside the counted region, as an expression of o."""
    lo, hi = (-before, size + after - 1) if include_pad else (0, size - 1)
    start = o * s - before if s != 1 else o - before
    first_static = lo + before <= 0  # every window starts inside the region
    last_static = hi - ((out - 1) * s - before) >= (k - 1) * d
    if first_static and last_static:
        return k
    # clamp before dividing (floor(max(x, 0) / d) == max(floor(x / d), 0)): a dividend that
    # is a min/max rather than a linear `a*o + c` dodges ir.simplify folding
    # `(a*o + c) // d` wrongly when c >= d and d does not divide a
    k0 = 0 if first_static else _div(intrin.max(lo - start + d - 1, 0), d)
    k1 = k - 1 if last_static else _div(intrin.min(hi - start, (k - 1) * d), d)
    return intrin.max(k1 - k0 + 1, 0)


def _pool_nd(
    op: str,
    letters: str,
    data: Tensor,
    kernel: Any,
    stride: Any,
    dilation: Any,
    padding: Any,
    pool_type: str,
    ceil_mode: bool,
    layout: str,
    count_include_pad: bool,
) -> Tensor:
    """Max or avg pooling over the axes ``letters`` ("W", "HW", "DHW") of ``layout``.

    ``padding`` is an int, one int per axis, or all the begins then all the ends (as
    ``get_pad_tuple_generic``); the shared core of pool1d, pool2d and pool3d.
    """
    check_tensor(data, f"{op}: data")
    if pool_type not in ("max", "avg"):
        raise DSLError(f"{op}: pool_type {pool_type!r} is not supported; use 'max' or 'avg'")
    n = len(letters)
    axes = layout_axes(layout, data.ndim, letters, op)
    ks = int_tuple(kernel, n, f"{op}: kernel")
    check_positive(ks, "kernel", op)
    ss = int_tuple(stride, n, f"{op}: stride")
    ds = int_tuple(dilation, n, f"{op}: dilation")
    check_positive(ss, "stride", op)
    check_positive(ds, "dilation", op)
    dilated = tuple((k - 1) * d + 1 for k, d in zip(ks, ds))
    begin, end = get_pad_tuple_generic(padding, dilated)
    sizes = tuple(data.shape[a] for a in axes)
    outs = tuple(_out_size(*args, ceil_mode, op) for args in zip(sizes, ks, ss, ds, begin, end))
    before, after = [0] * data.ndim, [0] * data.ndim
    out_shape = list(data.shape)
    for a, size, o, s, dk, b, e in zip(axes, sizes, outs, ss, dilated, begin, end):
        # ceil_mode's last window may reach past the given padding: pad a little more
        extra = max(0, (o - 1) * s + dk - (size + b + e))
        before[a], after[a] = b, e + extra
        out_shape[a] = o
    pad_value = intrin.min_value(data.dtype) if pool_type == "max" else 0
    padded = pad(data, before, after, pad_value, name="pad_temp") if any(before + after) else data
    out_shape = tuple(out_shape)
    rs = [reduce_axis((0, k), name=f"rv{m}") for m, k in enumerate(ks)]

    def source(i):
        idx = list(i)
        for a, s, d, r in zip(axes, ss, ds, rs):
            idx[a] = (i[a] * s if s != 1 else i[a]) + (r * d if d != 1 else r)
        return padded[tuple(idx)]

    if pool_type == "max":
        return compute(
            out_shape, lambda *i: intrin.max(source(i), axis=rs), name="pool_max", tag="pool_max"
        )
    pool_sum = compute(
        out_shape, lambda *i: intrin.sum(source(i), axis=rs), name="pool_sum", tag="pool_sum"
    )

    def average(*i):
        counts = [
            _window_count(i[a], size, k, s, d, b, e, o, count_include_pad)
            for a, size, k, s, d, b, e, o in zip(axes, sizes, ks, ss, ds, begin, end, outs)
        ]
        count = counts[0]
        for c in counts[1:]:
            count = count * c
        if not count_include_pad and not isinstance(count, int):
            count = intrin.max(count, 1)
        return pool_sum[i] / count

    return compute(out_shape, average, name="pool_avg", tag=ELEMWISE)


def pool1d(
    data: Tensor,
    kernel: Any,
    stride: Any,
    dilation: Any,
    padding: Any,
    pool_type: str,
    ceil_mode: bool = False,
    layout: str = "NCW",
    count_include_pad: bool = True,
) -> Tensor:
    """Max or avg pooling over W of ``layout``; padding is (left, right) (or an int).

    Windows as ``pool2d``; kernel, stride and dilation are an int or one int.
    """
    return _pool_nd(
        "topi.nn.pool1d",
        "W",
        data,
        kernel,
        stride,
        dilation,
        padding,
        pool_type,
        ceil_mode,
        layout,
        count_include_pad,
    )


def pool2d(
    data: Tensor,
    kernel: Any,
    stride: Any,
    dilation: Any,
    padding: Any,
    pool_type: str = "max",
    ceil_mode: bool = False,
    layout: str = "NCHW",
    count_include_pad: bool = True,
) -> Tensor:
    """Max or avg pooling over H and W of ``layout``; padding is (top, left, bottom, right).

    Windows follow PyTorch/TVM: with ``ceil_mode`` the output rounds up but no window
    starts in the bottom/right padding; an average divides by the taps inside the padded
    input (``count_include_pad``) or inside the real input (at least 1).
    """
    return _pool_nd(
        "topi.nn.pool2d",
        "HW",
        data,
        kernel,
        stride,
        dilation,
        padding,
        pool_type,
        ceil_mode,
        layout,
        count_include_pad,
    )


def pool3d(
    data: Tensor,
    kernel: Any,
    stride: Any,
    dilation: Any,
    padding: Any,
    pool_type: str,
    ceil_mode: bool = False,
    layout: str = "NCDHW",
    count_include_pad: bool = True,
) -> Tensor:
    """Max or avg pooling over D, H and W of ``layout``; padding is (front, top, left,
    back, bottom, right), (d, h, w) or an int. Windows as ``pool2d``.
    """
    return _pool_nd(
        "topi.nn.pool3d",
        "DHW",
        data,
        kernel,
        stride,
        dilation,
        padding,
        pool_type,
        ceil_mode,
        layout,
        count_include_pad,
    )


def max_pool2d(
    data: Tensor,
    pool_size: Any,
    strides: Any = 1,
    dilation: Any = 1,
    padding: Any = 0,
    layout: str = "NCHW",
    ceil_mode: bool = False,
) -> Tensor:
    """Max pooling: ``pool2d(..., pool_type="max")``."""
    return pool2d(data, pool_size, strides, dilation, padding, "max", ceil_mode, layout)


def avg_pool2d(
    data: Tensor,
    pool_size: Any,
    strides: Any = 1,
    dilation: Any = 1,
    padding: Any = 0,
    layout: str = "NCHW",
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Average pooling: ``pool2d(..., pool_type="avg")``."""
    return pool2d(
        data, pool_size, strides, dilation, padding, "avg", ceil_mode, layout, count_include_pad
    )


def global_pool(data: Tensor, pool_type: str = "max", layout: str = "NCHW") -> Tensor:
    """Max or average over the whole H x W plane; H and W become 1 (TVM's global_pool)."""
    op = "topi.nn.global_pool"
    check_tensor(data, f"{op}: data")
    if pool_type not in ("max", "avg"):
        raise DSLError(f"{op}: pool_type {pool_type!r} is not supported; use 'max' or 'avg'")
    h_axis, w_axis = layout_axes(layout, data.ndim, "HW", op)
    in_h, in_w = data.shape[h_axis], data.shape[w_axis]
    rh = reduce_axis((0, in_h), name="rv0")
    rw = reduce_axis((0, in_w), name="rv1")
    out_shape = tuple(1 if d in (h_axis, w_axis) else e for d, e in enumerate(data.shape))

    def source(i):
        idx = list(i)
        idx[h_axis], idx[w_axis] = rh, rw
        return data[tuple(idx)]

    if pool_type == "max":
        return compute(
            out_shape,
            lambda *i: intrin.max(source(i), axis=[rh, rw]),
            name="adaptive_pool_max",
            tag="adaptive_pool_max",
        )
    pool_sum = compute(
        out_shape,
        lambda *i: intrin.sum(source(i), axis=[rh, rw]),
        name="adaptive_pool_sum",
        tag="adaptive_pool_sum",
    )
    return compute(
        out_shape, lambda *i: pool_sum[i] / (in_h * in_w), name="adaptive_pool_avg", tag=ELEMWISE
    )
