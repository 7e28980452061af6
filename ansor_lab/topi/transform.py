"""Injective layout operators: transpose, reshape, concatenate, expand_dims, squeeze."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dsl import expr as E
from ..dsl.tensor import Tensor, compute
from ..errors import DSLError
from .tag import INJECTIVE
from .utils import check_tensor, get_const_int, normalize_axes, normalize_axis


def transpose(x: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    """Permute the dimensions of ``x`` (reverse them when ``axes`` is None), like numpy."""
    check_tensor(x, "topi.transpose: x")
    nd = x.ndim
    if axes is None:
        perm = tuple(reversed(range(nd)))
    else:
        axes = list(axes)
        if len(axes) != nd:
            raise DSLError(
                f"topi.transpose: axes {tuple(axes)} has {len(axes)} entries but x is {nd}-D; "
                f"pass a permutation of range({nd})"
            )
        perm = tuple(normalize_axis(a, nd, "topi.transpose") for a in axes)
        if sorted(perm) != list(range(nd)):
            raise DSLError(
                f"topi.transpose: axes {tuple(axes)} is not a permutation of range({nd}); "
                "list every axis exactly once"
            )
    shape = tuple(x.shape[p] for p in perm)

    def fcompute(*i):
        src = [None] * nd
        for out_axis, in_axis in enumerate(perm):
            src[in_axis] = i[out_axis]
        return x[tuple(src)]

    return compute(shape, fcompute, name="T_transpose", tag=INJECTIVE)


def _resolve_shape(size: int, newshape: Sequence[int], old: tuple) -> tuple[int, ...]:
    dims = [get_const_int(d) for d in newshape]
    if dims.count(-1) > 1:
        raise DSLError(f"topi.reshape: newshape {tuple(dims)} has more than one -1; infer one only")
    if any(d == 0 or d < -1 for d in dims):
        raise DSLError(
            f"topi.reshape: newshape {tuple(dims)} has a zero or negative dimension; "
            "use positive sizes and at most one -1"
        )
    known = 1
    for d in dims:
        if d != -1:
            known *= d
    if -1 in dims:
        if size % known:
            raise DSLError(
                f"topi.reshape: cannot infer -1 in {tuple(dims)} for {size} elements "
                f"(shape {old}); the other dimensions must divide {size}"
            )
        dims[dims.index(-1)] = size // known
    elif known != size:
        raise DSLError(
            f"topi.reshape: cannot reshape {old} ({size} elements) into {tuple(dims)} "
            f"({known} elements); the element counts must match"
        )
    return tuple(dims)


def reshape(x: Tensor, newshape: Any) -> Tensor:
    """``x`` viewed with ``newshape`` in row-major order; one entry may be -1 (inferred)."""
    check_tensor(x, "topi.reshape: x")
    size = 1
    for d in x.shape:
        size *= d
    if isinstance(newshape, int):
        newshape = (newshape,)
    shape = _resolve_shape(size, newshape, x.shape)

    def fcompute(*i):
        flat: Any = i[0] if i else 0
        for k in range(1, len(i)):
            flat = flat * shape[k] + i[k]
        src = []
        stride = size
        for k, extent in enumerate(x.shape):
            stride //= extent
            q = flat // stride if stride != 1 else flat
            src.append(q % extent if k else q)
        return x[tuple(src)]

    return compute(shape, fcompute, name="T_reshape", tag=INJECTIVE)


def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join tensors of equal dtype and equal shape (except along ``axis``) along ``axis``."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)) or not tensors:
        raise DSLError("topi.concatenate expects a non-empty list of tensors: concatenate([A, B])")
    for k, t in enumerate(tensors):
        check_tensor(t, f"topi.concatenate: tensors[{k}]")
    first = tensors[0]
    ax = normalize_axis(axis, first.ndim, "topi.concatenate")
    for k, t in enumerate(tensors[1:], start=1):
        if t.dtype != first.dtype:
            raise DSLError(
                f"topi.concatenate: tensors[{k}] is {t.dtype} but tensors[0] is {first.dtype}; "
                "cast them to one dtype with topi.cast first"
            )
        same = t.ndim == first.ndim and all(
            a == b for d, (a, b) in enumerate(zip(t.shape, first.shape)) if d != ax
        )
        if not same:
            raise DSLError(
                f"topi.concatenate: tensors[{k}] has shape {t.shape}, incompatible with "
                f"{first.shape} along axis {ax}; all dimensions but the axis must match"
            )
    offsets = [0]
    for t in tensors:
        offsets.append(offsets[-1] + t.shape[ax])
    shape = tuple(offsets[-1] if d == ax else e for d, e in enumerate(first.shape))

    def fcompute(*i):
        def read(k: int):
            idx = list(i)
            idx[ax] = i[ax] - offsets[k] if offsets[k] else i[ax]
            return tensors[k][tuple(idx)]

        value = read(len(tensors) - 1)
        for k in reversed(range(len(tensors) - 1)):
            value = E.if_then_else(i[ax] < offsets[k + 1], read(k), value)
        return value

    return compute(shape, fcompute, name="T_concat", tag=INJECTIVE)


def expand_dims(a: Tensor, axis: int, num_newaxis: int = 1) -> Tensor:
    """Insert ``num_newaxis`` unit dimensions at ``axis`` (which may be negative, as in TVM)."""
    check_tensor(a, "topi.expand_dims: a")
    nd = a.ndim
    if not -nd - 1 <= axis <= nd:
        raise DSLError(
            f"topi.expand_dims: axis {axis} is out of range for a {nd}-D tensor; "
            f"pass an axis in [{-nd - 1}, {nd}]"
        )
    if num_newaxis < 0:
        raise DSLError(f"topi.expand_dims: num_newaxis must be >= 0, got {num_newaxis}")
    pos = axis if axis >= 0 else nd + axis + 1
    shape = a.shape[:pos] + (1,) * num_newaxis + a.shape[pos:]
    return compute(
        shape,
        lambda *i: a[tuple(i[:pos]) + tuple(i[pos + num_newaxis :])],
        name="T_expand_dims",
        tag=INJECTIVE,
    )


def squeeze(a: Tensor, axis: Any = None) -> Tensor:
    """Remove unit dimensions (all of them, or those listed in ``axis``)."""
    check_tensor(a, "topi.squeeze: a")
    if axis is None:
        drop = tuple(d for d, e in enumerate(a.shape) if e == 1)
    else:
        drop = normalize_axes(axis, a.ndim, "topi.squeeze")
        for d in drop:
            if a.shape[d] != 1:
                raise DSLError(
                    f"topi.squeeze: dimension {d} of shape {a.shape} has size {a.shape[d]}, "
                    "not 1; only unit dimensions can be squeezed"
                )
    keep = [d for d in range(a.ndim) if d not in drop]
    shape = tuple(a.shape[d] for d in keep)

    def fcompute(*i):
        src: list = [0] * a.ndim
        for out_axis, d in enumerate(keep):
            src[d] = i[out_axis]
        return a[tuple(src)]

    return compute(shape, fcompute, name="T_squeeze", tag=INJECTIVE)
