"""Operators that read at data-dependent places: ``where``, ``take``, ``gather``,
``gather_nd`` and ``one_hot``, under TVM's names, signatures and stage names.

Index tensors are data, so no program may read out of bounds whatever they hold: every
index read from a tensor is clamped into its axis (``take``'s ``"wrap"`` mode wraps it
instead). Where TVM reads out of bounds (``take(mode="fast")``, ``gather``, ``gather_nd``
on out-of-range or negative indices), these operators clamp; on in-range indices the
results are TVM's.
"""

from __future__ import annotations

from typing import Any

from ..dsl import dtypes, expr as E, intrin
from ..dsl.construct import select
from ..dsl.tensor import Tensor, compute
from ..errors import DSLError
from .broadcast import broadcast_index, broadcast_shape
from .tag import BROADCAST, INJECTIVE
from .utils import check_tensor, get_const_int, normalize_axis

_TAKE_MODES = ("clip", "wrap", "fast")


def _check_indices(indices: Any, what: str, allow_float: bool = False) -> Tensor:
    check_tensor(indices, f"{what}: indices")
    ok = dtypes.is_int(indices.dtype) or (allow_float and dtypes.is_float(indices.dtype))
    if not ok:
        raise DSLError(
            f"{what}: indices must be an int32 or int64 tensor, got {indices.dtype} tensor "
            f"{indices.name!r}; cast it with topi.cast({indices.name}, 'int32')"
        )
    return indices


def _wide(index: E.PrimExpr) -> E.PrimExpr:
    """An index value of at least 32 bits (int8 data cannot hold most extents)."""
    return index if index.dtype in ("int32", "int64") else index.astype("int32")


def _clamp(index: E.PrimExpr, extent: int) -> E.PrimExpr:
    """``index`` clamped into ``[0, extent)``, so a read never leaves the tensor."""
    return intrin.min(intrin.max(_wide(index), 0), extent - 1)


def where(condition: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """``x`` where ``condition`` is true (non-zero), else ``y``; all three broadcast.

    ``x`` and ``y`` must share a dtype, the result's; ``condition`` may be bool or a
    number (non-zero is true), as in TVM. Both values are read (a select, not a branch).
    """
    check_tensor(condition, "topi.where: condition")
    check_tensor(x, "topi.where: x")
    check_tensor(y, "topi.where: y")
    if x.dtype != y.dtype:
        raise DSLError(
            f"topi.where: x is {x.dtype} but y is {y.dtype}; they must have the same dtype "
            f"(cast one with topi.cast, e.g. topi.cast({y.name}, '{x.dtype}'))"
        )
    shape = broadcast_shape(x.shape, y.shape, "topi.where")
    shape = broadcast_shape(condition.shape, shape, "topi.where")

    def body(*i):
        c = condition[broadcast_index(condition, shape, i)]
        if not dtypes.is_bool(c.dtype):
            c = c != 0
        return select(c, x[broadcast_index(x, shape, i)], y[broadcast_index(y, shape, i)])

    return compute(shape, body, name="T_where", tag=BROADCAST)


def _take_index(raw: E.PrimExpr, extent: int, mode: str) -> E.PrimExpr:
    if mode == "wrap":
        return _wide(raw) % extent  # floor mod: what TVM's truncmod(truncmod(i, n) + n, n) gives
    return _clamp(raw, extent)  # "clip", and "fast" (clamped here: indices are data)


def take(
    a: Tensor, indices: Tensor, axis: int | None = None, batch_dims: int = 0, mode: str = "clip"
) -> Tensor:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when None).

    The result has shape ``a.shape[:axis] + indices.shape[batch_dims:] + a.shape[axis+1:]``.
    ``mode``: ``"clip"`` clamps indices into range, ``"wrap"`` wraps them (numpy's
    ``mode="wrap"``), ``"fast"`` is TVM's unchecked read: here it clamps like ``"clip"``, so
    an out-of-range index never reads outside ``a``. ``batch_dims`` leading dimensions of
    ``indices`` index the same leading dimensions of ``a`` (in every mode; TVM honours them
    in ``"clip"`` mode only).
    """
    check_tensor(a, "topi.take: a")
    _check_indices(indices, "topi.take")
    if mode not in _TAKE_MODES:
        raise DSLError(f"topi.take: mode {mode!r} is not one of {_TAKE_MODES}")
    if a.ndim == 0:
        raise DSLError("topi.take: a is 0-D; take from a tensor of at least one dimension")
    if axis is None:
        size = 1
        for e in a.shape:
            size *= e

        def flat(*i):
            rest = _take_index(indices[i], size, mode)
            src = []
            for e in reversed(a.shape):
                src.append(rest % e)
                rest = rest // e
            return a[tuple(reversed(src))]

        return compute(indices.shape, flat, name="T_take", tag=INJECTIVE)
    ax = normalize_axis(axis, a.ndim, "topi.take")
    nb = get_const_int(batch_dims)
    if nb < 0:
        nb += indices.ndim
    if not 0 <= nb <= min(ax, indices.ndim):
        raise DSLError(
            f"topi.take: batch_dims {batch_dims} is out of range for axis {ax} and "
            f"{indices.ndim}-D indices; pass 0 <= batch_dims <= min(axis, indices.ndim)"
        )
    if a.shape[:nb] != indices.shape[:nb]:
        raise DSLError(
            f"topi.take: the {nb} batch dimensions of a {a.shape} and indices "
            f"{indices.shape} differ; they must be equal"
        )
    n_idx = indices.ndim - nb
    shape = a.shape[:ax] + indices.shape[nb:] + a.shape[ax + 1 :]

    def body(*i):
        pos = tuple(i[:nb]) + tuple(i[ax : ax + n_idx])
        src = tuple(i[:ax]) + (_take_index(indices[pos], a.shape[ax], mode),)
        return a[src + tuple(i[ax + n_idx :])]

    return compute(shape, body, name="T_take", tag=INJECTIVE)


def gather(data: Tensor, axis: int, indices: Tensor) -> Tensor:
    """``out[i, j, k] = data[i, indices[i, j, k], k]`` (for ``axis=1``), numpy's
    ``take_along_axis``; the result has ``indices``' shape.

    ``indices`` has ``data``'s rank and no larger dimension off ``axis``. Indices outside
    ``[0, data.shape[axis])``, negative ones included, are clamped (TVM reads out of bounds).
    """
    check_tensor(data, "topi.gather: data")
    _check_indices(indices, "topi.gather")
    if data.ndim == 0:
        raise DSLError("topi.gather: cannot gather from a 0-D tensor")
    if indices.ndim != data.ndim:
        raise DSLError(
            f"topi.gather: indices is {indices.ndim}-D but data is {data.ndim}-D; "
            "they must have the same rank"
        )
    ax = normalize_axis(axis, data.ndim, "topi.gather")
    for d, (ie, de) in enumerate(zip(indices.shape, data.shape)):
        if d != ax and ie > de:
            raise DSLError(
                f"topi.gather: indices {indices.shape} is larger than data {data.shape} "
                f"in dimension {d}; off the axis it must be no larger"
            )

    def body(*i):
        src = list(i)
        src[ax] = _clamp(indices[i], data.shape[ax])
        return data[tuple(src)]

    return compute(indices.shape, body, name="T_gather", tag=INJECTIVE)


def gather_nd(a: Tensor, indices: Tensor, batch_dims: int = 0) -> Tensor:
    """Gather ``a`` at the coordinates listed along ``indices``' first dimension.

    ``indices`` is ``(M, Y...)``: the result is ``Y... + a.shape[batch_dims + M:]`` with
    ``out[y..., rest...] = a[b..., indices[0, y...], ..., indices[M-1, y...], rest...]``,
    where the first ``batch_dims`` of ``y`` are the batch coordinates ``b``. Float indices
    are truncated to int32 (as TVM); every coordinate is clamped into its axis.
    """
    check_tensor(a, "topi.gather_nd: a")
    _check_indices(indices, "topi.gather_nd", allow_float=True)
    if indices.ndim < 1:
        raise DSLError("topi.gather_nd: indices must have at least one dimension (M, ...)")
    m, nb = indices.shape[0], get_const_int(batch_dims)
    if nb < 0 or nb + m > a.ndim or nb > indices.ndim - 1:
        raise DSLError(
            f"topi.gather_nd: indices {indices.shape} with batch_dims {batch_dims} index "
            f"{nb + m} dimensions of the {a.ndim}-D a {a.shape}; "
            "indices.shape[0] + batch_dims must be at most a.ndim"
        )
    if indices.shape[1 : 1 + nb] != a.shape[:nb]:
        raise DSLError(
            f"topi.gather_nd: the batch dimensions of indices {indices.shape[1 : 1 + nb]} "
            f"and of a {a.shape[:nb]} differ; they must be equal"
        )
    y = indices.ndim - 1
    shape = indices.shape[1:] + a.shape[nb + m :]

    def body(*i):
        src = list(i[:nb])
        for k in range(m):
            v = indices[(k,) + tuple(i[:y])]  # float indices: _wide truncates, as TVM
            src.append(_clamp(v, a.shape[nb + k]))
        return a[tuple(src) + tuple(i[y:])]

    return compute(shape, body, name="T_gather_nd", tag=INJECTIVE)


def one_hot(
    indices: Tensor, on_value: Any, off_value: Any, depth: int, axis: int, dtype: str
) -> Tensor:
    """``on_value`` where the new ``axis`` position equals ``indices``, else ``off_value``.

    The result is ``dtype`` with a new dimension of size ``depth`` at ``axis`` (-1: last;
    other negative axes count from the end of the result, an extension of TVM's).
    """
    _check_indices(indices, "topi.one_hot")
    d = get_const_int(depth)
    if d < 1:
        raise DSLError(f"topi.one_hot: depth must be >= 1, got {depth}")
    nd = indices.ndim + 1
    ax = get_const_int(axis)
    if not -nd <= ax < nd:
        raise DSLError(
            f"topi.one_hot: axis {axis} is out of range for a {nd}-D result; "
            f"pass an axis in [{-nd}, {nd - 1}] (-1 puts the new dimension last)"
        )
    ax %= nd
    dt = dtypes.canonical(dtype)
    on, off = E.cast(on_value, dt), E.cast(off_value, dt)
    shape = indices.shape[:ax] + (d,) + indices.shape[ax:]

    def body(*i):
        pos = tuple(i[:ax]) + tuple(i[ax + 1 :])
        return select(_wide(indices[pos]) == i[ax], on, off)

    return compute(shape, body, name="T_one_hot", tag=INJECTIVE)
