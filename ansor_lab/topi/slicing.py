"""Slicing and repetition: ``strided_slice``, ``split``, ``stack``, ``tile``, ``repeat`` and
``flip``, under TVM's names, signatures and stage names. Shapes are static, so slice
bounds are Python ints; an empty result (a zero-size dimension) is refused, as TVM does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dsl import expr as E
from ..dsl.tensor import Tensor, compute
from ..errors import DSLError
from .tag import BROADCAST, INJECTIVE
from .utils import check_tensor, get_const_int, normalize_axis

_INT64_MAX = 2**63 - 1


def _int_list(value: Any, what: str) -> list[int | None]:
    if isinstance(value, Tensor) or (
        isinstance(value, E.ExprOp) and not isinstance(value, E.IntImm)
    ):
        raise DSLError(
            f"topi.strided_slice: {what} must be Python ints (shapes are static here), got "
            f"{type(value).__name__}; pass a list such as [0, 1] (dynamic slices with tensor "
            "bounds are not supported)"
        )
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    out: list[int | None] = []
    for v in items:
        if v is None:
            out.append(None)
        elif isinstance(v, (Tensor, E.ExprOp)) and not isinstance(v, E.IntImm):
            raise DSLError(
                f"topi.strided_slice: {what} entries must be Python ints, got "
                f"{type(v).__name__} {v!r}; pass constant bounds"
            )
        else:
            out.append(get_const_int(v))
    return out


def _canonical(index: int, extent: int, stride: int) -> int:
    """TVM's CanonicalizeIndex: negative counts from the end, then clamp to the range."""
    lo, hi = (-1, extent - 1) if stride < 0 else (0, extent)
    if index < 0:
        index += extent
    return min(max(index, lo), hi)


def strided_slice(
    a: Tensor,
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    slice_mode: str = "end",
    assume_inbound: bool = True,
) -> Tensor:
    """``a[begin:end:strides]`` per axis, numpy's rules for negative indices and strides.

    Missing trailing entries slice whole axes; with ``axes`` the lists name those axes
    only. As in TVM, an omitted (None) end with a negative stride stops before index 0
    (numpy's ``a[::-1]`` reaches it): pass ``end=-(n + 1)`` to include it.
    ``slice_mode="size"``: ``end`` holds sizes (-1: to the end), strides are 1.
    ``begin``/``end`` must be Python ints (a Tensor raises; TVM's dynamic slice is not
    provided). ``assume_inbound`` is accepted and ignored: constant bounds are clamped.
    """
    check_tensor(a, "topi.strided_slice: a")
    if slice_mode not in ("end", "size"):
        raise DSLError(f"topi.strided_slice: slice_mode {slice_mode!r} is not 'end' or 'size'")
    b_list, e_list = _int_list(begin, "begin"), _int_list(end, "end")
    s_list = [] if strides is None else _int_list(strides, "strides")
    nd = a.ndim
    if axes is not None:
        ax_list = [normalize_axis(x, nd, "topi.strided_slice") for x in _int_list(axes, "axes")]
        if strides is None:
            s_list = [1] * len(ax_list)
        if not len(b_list) == len(e_list) == len(s_list) == len(ax_list):
            raise DSLError(
                "topi.strided_slice: with axes, begin, end, strides and axes must have the "
                f"same length, got {len(b_list)}, {len(e_list)}, {len(s_list)}, {len(ax_list)}"
            )
        name = "T_strided_slice_with_axes"
    else:
        if max(len(b_list), len(e_list), len(s_list)) > nd:
            raise DSLError(
                f"topi.strided_slice: begin/end/strides have more entries than the {nd} "
                f"dimensions of a {a.shape}"
            )
        ax_list = list(range(nd))
        s_list += [1] * (nd - len(s_list))
        b_list += [None] * (nd - len(b_list))
        e_list += [None] * (nd - len(e_list))
        name = "T_strided_slice"
    if slice_mode == "size":
        s_list = [1] * len(ax_list)
    starts, steps = {}, {}
    shape = list(a.shape)
    for ax, b, e, s in zip(ax_list, b_list, e_list, s_list):
        if s is None or s == 0:
            raise DSLError(f"topi.strided_slice: stride of axis {ax} is {s}; it must be non-zero")
        if b is None:
            b = 0 if s > 0 else _INT64_MAX
        if slice_mode == "size" and e is not None:
            e = _INT64_MAX if e < 0 else b + e
        if e is None:
            e = _INT64_MAX if s > 0 else 0
        extent = a.shape[ax]
        b0, e0 = _canonical(b, extent, s), _canonical(e, extent, s)
        size = (abs(e0 - b0) + abs(s) - 1) // abs(s)
        if (e0 <= b0 if s > 0 else e0 >= b0) or size == 0:
            raise DSLError(
                f"topi.strided_slice: begin {b}, end {e}, stride {s} select nothing of axis "
                f"{ax} (size {extent}); empty results are not supported"
            )
        starts[ax], steps[ax], shape[ax] = b0, s, size

    def body(*i):
        src = [i[d] * steps[d] + starts[d] if d in starts else i[d] for d in range(nd)]
        return a[tuple(src)]

    return compute(tuple(shape), body, name=name, tag=INJECTIVE)


def split(ary: Tensor, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """``ary`` cut along ``axis`` into equal sections (an int) or at sorted indices.

    Returns a list of tensors (TVM returns an Array). Indices must be strictly increasing
    and inside the axis: the empty pieces numpy allows are refused.
    """
    check_tensor(ary, "topi.split: ary")
    ax = normalize_axis(axis, ary.ndim, "topi.split")
    n = ary.shape[ax]
    if isinstance(indices_or_sections, (list, tuple)):
        cuts = [get_const_int(v) for v in indices_or_sections]
        name = "T_split"
        if any(c <= p for c, p in zip(cuts, [0] + cuts)) or (cuts and cuts[-1] >= n):
            raise DSLError(
                f"topi.split: indices {tuple(cuts)} must be strictly increasing and inside "
                f"(0, {n}) for axis {ax} of {ary.shape}; empty pieces are not supported"
            )
    else:
        sections = get_const_int(indices_or_sections)
        name = "T_split_sections"
        if sections < 1 or n % sections:
            raise DSLError(
                f"topi.split: {sections} sections do not divide axis {ax} of size {n} "
                f"evenly; pass a divisor of {n} or a list of split indices"
            )
        cuts = [n // sections * k for k in range(1, sections)]
    bounds = [0, *cuts, n]
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        shape = ary.shape[:ax] + (hi - lo,) + ary.shape[ax + 1 :]

        def body(*i, lo=lo):
            return ary[tuple(i[:ax]) + (i[ax] + lo if lo else i[ax],) + tuple(i[ax + 1 :])]

        out.append(compute(shape, body, name=name, tag=INJECTIVE))
    return out


def stack(a: Sequence[Tensor], axis: int) -> Tensor:
    """Join tensors of one shape and dtype along a new dimension at ``axis``."""
    if isinstance(a, Tensor) or not isinstance(a, (list, tuple)) or not a:
        raise DSLError("topi.stack expects a non-empty list of tensors: stack([A, B], axis=0)")
    for k, t in enumerate(a):
        check_tensor(t, f"topi.stack: a[{k}]")
        if t.shape != a[0].shape or t.dtype != a[0].dtype:
            raise DSLError(
                f"topi.stack: a[{k}] is {t.dtype}{list(t.shape)} but a[0] is "
                f"{a[0].dtype}{list(a[0].shape)}; all must have one shape and dtype"
            )
    nd = a[0].ndim
    ax = get_const_int(axis)
    if not -nd - 1 <= ax <= nd:
        raise DSLError(
            f"topi.stack: axis {ax} is out of range for stacking {nd}-D tensors; "
            f"pass an axis in [{-nd - 1}, {nd}]"
        )
    ax %= nd + 1
    shape = a[0].shape[:ax] + (len(a),) + a[0].shape[ax:]

    def body(*i):
        src = tuple(i[:ax]) + tuple(i[ax + 1 :])
        value = a[0][src]
        for k in range(1, len(a)):
            value = E.if_then_else(i[ax] == k, a[k][src], value)
        return value

    return compute(shape, body, name="T_stack", tag=INJECTIVE)


def tile(a: Tensor, reps: Sequence[int]) -> Tensor:
    """``a`` repeated ``reps[d]`` times along each dimension, numpy's ``np.tile``."""
    check_tensor(a, "topi.tile: a")
    reps_t = tuple(get_const_int(r) for r in (reps if isinstance(reps, (list, tuple)) else [reps]))
    if not reps_t or any(r < 1 for r in reps_t):
        raise DSLError(f"topi.tile: reps {reps_t} must be a non-empty list of ints >= 1")
    nd = max(a.ndim, len(reps_t))
    data_shape = (1,) * (nd - a.ndim) + a.shape
    reps_t = (1,) * (nd - len(reps_t)) + reps_t
    shape = tuple(d * r for d, r in zip(data_shape, reps_t))
    off = nd - a.ndim

    def body(*i):
        return a[
            tuple(
                i[off + d] % e if r > 1 else i[off + d]
                for d, (e, r) in enumerate(zip(a.shape, reps_t[off:]))
            )
        ]

    return compute(shape, body, name="T_tile", tag=BROADCAST)


def repeat(a: Tensor, repeats: int, axis: int) -> Tensor:
    """Each element of ``a`` repeated ``repeats`` times along ``axis``, as ``np.repeat``."""
    check_tensor(a, "topi.repeat: a")
    r = get_const_int(repeats)
    if r < 1:
        raise DSLError(f"topi.repeat: repeats must be >= 1, got {repeats}")
    ax = normalize_axis(axis, a.ndim, "topi.repeat")
    shape = a.shape[:ax] + (a.shape[ax] * r,) + a.shape[ax + 1 :]

    def body(*i):
        return a[tuple(i[:ax]) + (i[ax] // r if r > 1 else i[ax],) + tuple(i[ax + 1 :])]

    return compute(shape, body, name="T_repeat", tag=BROADCAST)


def flip(a: Tensor, axis: int = 0) -> Tensor:
    """``a`` reversed along ``axis`` (TVM's stage name: ``T_reverse_sequence``)."""
    check_tensor(a, "topi.flip: a")
    ax = normalize_axis(axis, a.ndim, "topi.flip")
    last = a.shape[ax] - 1

    def body(*i):
        return a[tuple(i[:ax]) + (last - i[ax],) + tuple(i[ax + 1 :])]

    return compute(a.shape, body, name="T_reverse_sequence", tag=INJECTIVE)
