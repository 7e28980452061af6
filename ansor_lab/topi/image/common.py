"""What the ``topi.image`` operators share: argument checks, layouts, source coordinates
and the taps (index, weight) one output position reads along one axis.

Every index read from the input is clamped into its axis, so no program reads out of
bounds whatever the coordinates (including data-dependent ones: boxes, grids).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...dsl import dtypes, expr as E, intrin
from ...dsl.construct import const, select
from ...errors import DSLError
from ..utils import get_const_int

#: resize's interpolation methods (TVM's names).
METHODS = ("nearest_neighbor", "linear", "cubic")
#: what people write for them elsewhere, and the name to write here
METHOD_HINTS = {
    "nearest": "nearest_neighbor",
    "bilinear": "linear",
    "trilinear": "linear",
    "bicubic": "cubic",
    "tricubic": "cubic",
}
#: how an output coordinate maps to an input coordinate (ONNX Resize's modes).
COORDINATE_MODES = (
    "half_pixel",
    "align_corners",
    "asymmetric",
    "pytorch_half_pixel",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)
#: how nearest_neighbor rounds a coordinate ("" is TVM's default: round for
#: align_corners, floor otherwise).
ROUNDING_METHODS = ("", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
#: TVM's epsilon of the "floor" and "ceil" roundings (against GPU rounding errors)
_EPSILON = 1e-5

#: (index expression, weight expression or None for 1) of one tap along one axis
Tap = tuple[Any, Any]


@dataclass(frozen=True)
class Layout:
    """Where batch, channel and the spatial axes (in D, H, W order) sit in a layout."""

    name: str
    channel: int
    spatial: tuple[int, ...]


def check_layout(layout: Any, k: int, op: str) -> Layout:
    """The Layout of ``layout`` for ``k`` spatial dimensions, or a DSLError saying what to
    write (packed layouts such as NCHW4c are refused)."""
    plain, last = _LAYOUTS[k]
    if layout in (plain, last):
        return Layout(layout, layout.index("C"), tuple(layout.index(c) for c in _SPATIAL[k]))
    if isinstance(layout, str) and layout.startswith(plain) and len(layout) > len(plain):
        raise DSLError(
            f"{op}: the packed layout {layout!r} is not supported; unpack the tensor with "
            f"topi.layout_transform(x, {layout!r}, {plain!r}), resize it in {plain!r}, and pack "
            f"the result with topi.layout_transform(out, {plain!r}, {layout!r})"
        )
    raise DSLError(f"{op}: layout {layout!r} is not supported; use {plain!r} or {last!r}")


def check_method(method: Any, allowed: Sequence[str], hints: dict, op: str) -> str:
    """``method`` lower-cased (as TVM), or a DSLError naming the one to write."""
    name = method.lower() if isinstance(method, str) else method
    if name in allowed:
        return name
    hint = hints.get(name)
    instead = f"write method={hint!r}" if hint else f"use one of {', '.join(map(repr, allowed))}"
    raise DSLError(f"{op}: method {method!r} is not supported; {instead}")


def check_choice(value: Any, allowed: Sequence[str], what: str, op: str) -> str:
    """``value`` if it is one of ``allowed``, else a DSLError listing them."""
    if value in allowed:
        return value
    raise DSLError(
        f"{op}: {what} {value!r} is not supported; use one of {', '.join(map(repr, allowed))}"
    )


def check_number(value: Any, what: str, op: str) -> float:
    """A Python float of a constant number (int, float, numpy scalar, IntImm/FloatImm)."""
    if isinstance(value, (E.IntImm, E.FloatImm)):
        return float(value.value)
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    raise DSLError(
        f"{op}: {what} must be a constant number, got {type(value).__name__} {value!r:.60}; "
        "expressions (te.var...) are not supported here"
    )


def check_sizes(size: Any, k: int, what: str, op: str) -> tuple[int, ...]:
    """``k`` positive constant ints (an int stands for one size when ``k`` is 1)."""
    items = [size] if k == 1 and not isinstance(size, (tuple, list)) else size
    if not isinstance(items, (tuple, list)) or len(items) != k:
        raise DSLError(f"{op}: {what} must be {k} ints, got {size!r}")
    out = tuple(get_const_int(s) for s in items)
    if any(s < 1 for s in out):
        raise DSLError(f"{op}: {what} {out} must be positive (at least one pixel per axis)")
    return out


def check_output_shape(output_shape: Any, shape: tuple, op: str) -> None:
    """TVM's dynamic-shape ``output_shape``: None, or the static shape the op computes."""
    if output_shape is None:
        return
    given = tuple(get_const_int(s) for s in output_shape)
    if given != tuple(shape):
        raise DSLError(
            f"{op}: output_shape {given} differs from the shape {tuple(shape)} given by size; "
            "leave output_shape None (it is TVM's argument for dynamic shapes)"
        )


def accumulation_dtype(*tensor_dtypes: str) -> str:
    """float64 when any operand is float64, else float32 (TVM computes in float32)."""
    return "float64" if "float64" in tensor_dtypes else "float32"


def check_numeric(dtype: str, what: str, op: str) -> None:
    """Interpolation multiplies values: they must be numbers."""
    if not (dtypes.is_float(dtype) or dtypes.is_int(dtype)):
        raise DSLError(f"{op}: {what} needs a numeric tensor, got {dtype}; cast it first")


def const_of(value: float, dtype: str) -> E.PrimExpr:
    """``value`` as a constant of ``dtype``: truncated toward zero for ints (TVM casts the
    float extrapolation value to the output dtype)."""
    if dtypes.is_float(dtype):
        return const(float(value), dtype)
    if dtypes.is_bool(dtype):
        return const(bool(value), dtype)
    return const(math.trunc(value), dtype)


def clamp(index: Any, extent: int) -> Any:
    """``index`` clamped into ``[0, extent)``."""
    return intrin.min(intrin.max(index, 0), extent - 1)


def to_index(x: Any, extent: int, margin: int = 2) -> Any:
    """An integral float coordinate as int32, first clamped into
    ``[-margin, extent - 1 + margin]`` so the cast cannot overflow (taps that far out all
    read the border, or are masked, either way)."""
    lo, hi = float(-margin), float(extent - 1 + margin)
    return intrin.min(intrin.max(x, lo), hi).astype("int32")


# -- exact coordinates: in = (a * out + b) / d in integers ------------------------------


@dataclass(frozen=True)
class Ratio:
    """The input coordinate ``(a * o + b) / d`` of output index ``o`` (``d > 0``)."""

    a: int
    b: int
    d: int

    @classmethod
    def of(cls, a: int, b: int, d: int) -> Ratio:
        g = math.gcd(a, b, d) or 1
        return cls(a // g, b // g, d // g)

    def num(self, o: Any) -> Any:
        return o * self.a + self.b if self.b else o * self.a

    def floor(self, o: Any) -> Any:
        return self.num(o) // self.d if self.d != 1 else self.num(o)

    def frac(self, o: Any, dtype: str) -> Any:
        """The fractional part, or None where every coordinate is an integer."""
        if self.d == 1:
            return None
        return (self.num(o) % self.d).astype(dtype) / float(self.d)

    def rounded(self, o: Any, rounding: str) -> Any:
        """The nearest_neighbor index, exactly (TVM rounds a float32 product and adds
        1e-5 before floor: the same index for every size below 10**5)."""
        if self.d == 1:
            return self.num(o)
        n, d = self.num(o), self.d
        if rounding == "floor":
            return n // d
        if rounding == "ceil":
            return (n + (d - 1)) // d
        if rounding == "round_prefer_floor":  # ceil(x - 0.5)
            return (n * 2 + (d - 1)) // (2 * d)
        # "round" (half away from zero) and "round_prefer_ceil" (floor(x + 0.5)) agree
        # here: every mode's coordinate is above -0.5
        return (n * 2 + d) // (2 * d)


def exact_source(mode: str, n_in: int, n_out: int) -> Ratio:
    """The Ratio of a coordinate transformation mode (all but tf_crop_and_resize)."""
    if mode in ("half_pixel", "pytorch_half_pixel"):
        if mode == "pytorch_half_pixel" and n_out == 1:
            return Ratio(0, 0, 1)
        return Ratio.of(2 * n_in, n_in - n_out, 2 * n_out)  # (o + 0.5) * in / out - 0.5
    if mode == "align_corners":
        return Ratio.of(n_in - 1, 0, n_out - 1) if n_out > 1 else Ratio(0, 0, 1)
    if mode == "asymmetric":
        return Ratio.of(n_in, 0, n_out)
    if mode == "tf_half_pixel_for_nn":
        return Ratio.of(2 * n_in, n_in, 2 * n_out)  # (o + 0.5) * in / out
    raise AssertionError(mode)


def cubic_weights(t: Any, alpha: float) -> list[Any]:
    """The four cubic-convolution weights of taps at -1, 0, 1, 2 for fraction ``t``."""
    t2 = t * t
    t3 = t2 * t
    return [
        (t3 - t2 * 2.0 + t) * alpha,
        t3 * (alpha + 2.0) - t2 * (alpha + 3.0) + 1.0,
        t3 * -(alpha + 2.0) + t2 * (2.0 * alpha + 3.0) - t * alpha,
        t3 * -alpha + t2 * alpha,
    ]


def _cubic_taps(x0: Any, t: Any, extent: int, alpha: float, exclude: bool) -> list[Tap]:
    idx = [x0 + (i - 1) for i in range(4)]
    w = cubic_weights(t, alpha)
    if exclude:  # weights of taps outside the image dropped, the rest renormalised
        w = [select((i < 0) | (i >= extent), const_of(0.0, t.dtype), wi) for i, wi in zip(idx, w)]
        total = w[0] + w[1] + w[2] + w[3]
        total = select(total == 0.0, const_of(1.0, t.dtype), total)
        w = [wi / total for wi in w]
    return list(zip(idx, w))


def exact_taps(
    o: Any,
    ratio: Ratio,
    extent: int,
    method: str,
    rounding: str,
    alpha: float,
    exclude: bool,
    acc: str,
) -> list[Tap]:
    """The taps of output index ``o`` along an axis of ``extent`` inputs (indices unclamped)."""
    if method == "nearest_neighbor":
        return [(ratio.rounded(o, rounding), None)]
    x0, t = ratio.floor(o), ratio.frac(o, acc)
    if t is None:  # an integer coordinate: one input pixel, for linear and cubic alike
        return [(x0, None)]
    if method == "linear":
        return [(x0, 1.0 - t), (x0 + 1, t)]
    return _cubic_taps(x0, t, extent, alpha, exclude)


def round_float(x: Any, rounding: str) -> Any:
    """A float coordinate rounded to an integral float as TVM's nearest_neighbor does."""
    if rounding == "floor":
        return intrin.floor(x + _EPSILON)
    if rounding == "ceil":
        return intrin.ceil(x - _EPSILON)
    if rounding == "round_prefer_floor":
        return intrin.ceil(x - 0.5)
    if rounding == "round_prefer_ceil":
        return intrin.floor(x + 0.5)
    # "round": half away from zero (TVM's round on LLVM), exactly: x - trunc(x) is exact
    whole = intrin.trunc(x)
    part = x - whole
    one, zero = const_of(1.0, x.dtype), const_of(0.0, x.dtype)
    return whole + select(part >= 0.5, one, select(part <= -0.5, -one, zero))


def float_taps(
    x: Any, extent: int, method: str, rounding: str, alpha: float, exclude: bool, acc: str
) -> list[Tap]:
    """The taps of a float coordinate ``x`` (indices unclamped, within a few pixels of the
    axis)."""
    if method == "nearest_neighbor":
        return [(to_index(round_float(x, rounding), extent), None)]
    xf = intrin.floor(x)
    t = (x - xf).astype(acc)
    x0 = to_index(xf, extent, margin=3)
    if method == "linear":
        return [(x0, 1.0 - t), (x0 + 1, t)]
    return _cubic_taps(x0, t, extent, alpha, exclude)


def interpolate(read: Any, taps: Sequence[Sequence[Tap]], acc: str) -> Any:
    """The sum over the tensor product of per-axis taps of weight * ``read(indices)``.

    ``read(indices, weighted)`` returns the pixel at the spatial ``indices`` (a tuple,
    one per axis), cast to ``acc`` when ``weighted``. Axes are interpolated innermost
    first (the last axis, W, first), as TVM's nested lerps.
    """
    weighted = any(w is not None for axis in taps for _, w in axis)

    def level(k: int, prefix: tuple) -> Any:
        if k == len(taps):
            return read(prefix, weighted)
        total = None
        for index, weight in taps[k]:
            value = level(k + 1, prefix + (index,))
            term = value if weight is None else value * weight
            total = term if total is None else total + term
        return total

    return level(0, ())
