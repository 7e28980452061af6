"""Injective layout operators: transpose, reshape, concatenate, expand_dims, squeeze,
layout_transform; the creation operators full, full_like, arange; and TVM's plain
``topi.matmul``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dsl import dtypes, expr as E
from ..dsl.tensor import Tensor, compute
from ..errors import DSLError
from .nn.dense import matmul_product
from .tag import ELEMWISE, INJECTIVE
from .utils import check_tensor, get_const_int, get_const_tuple, normalize_axes, normalize_axis


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


def full(shape: Any, dtype: str, fill_value: Any) -> Tensor:
    """A tensor of ``shape`` and ``dtype`` holding ``fill_value`` everywhere."""
    dt = dtypes.canonical(dtype)
    value = E.cast(fill_value, dt)
    return compute(get_const_tuple(shape), lambda *i: value, name="T_full", tag=ELEMWISE)


def full_like(x: Tensor, fill_value: Any) -> Tensor:
    """A tensor of ``x``'s shape and dtype holding ``fill_value`` everywhere."""
    check_tensor(x, "topi.full_like: x")
    value = E.cast(fill_value, x.dtype)
    return compute(x.shape, lambda *i: value, name="T_full_like", tag=ELEMWISE)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: str = "float32") -> Tensor:
    """Evenly spaced values in ``[start, stop)``, as TVM's: ``cast(dtype, start + step*i)``.

    The bounds must be Python numbers or constants (the length is static). As in TVM, an
    all-int range has ``ceil((stop - start) / step)`` elements, a float one that count in
    float32, and float values are computed in float32 before the cast to ``dtype``.
    """
    if stop is None:
        start, stop = 0, start
    start, stop, step = (
        v.value if isinstance(v, (E.IntImm, E.FloatImm)) else v for v in (start, stop, step)
    )
    for what, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise DSLError(
                f"topi.arange: {what} must be a Python number, got {type(v).__name__} {v!r}; "
                "the length of the result must be known when the operator is built"
            )
    if step == 0:
        raise DSLError("topi.arange: step must be non-zero")
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        n = -((int(start) - int(stop)) // int(step))  # ceil division of exact ints
        first, delta, dt0 = E.const(int(start)), E.const(int(step)), "int32"
    else:
        f32 = np.float32
        n = int(np.ceil(f32(f32(stop) - f32(start)) / f32(step)))
        first, delta, dt0 = E.const(float(start)), E.const(float(step)), "float32"
    if n < 1:
        raise DSLError(
            f"topi.arange: start={start}, stop={stop}, step={step} is empty; "
            "empty tensors are not supported"
        )
    dt = dtypes.canonical(dtype)
    return compute(
        (n,), lambda i: (first + delta * i.astype(dt0)).astype(dt), name="T_arange", tag=INJECTIVE
    )


def matmul(a: Tensor, b: Tensor, transp_a: bool = False, transp_b: bool = False) -> Tensor:
    """The matrix product of 2-D ``a`` and ``b``, each transposed first when asked.

    TVM's ``topi.matmul`` (stage ``T_matmul``, tag ``matmul``): the operands share a dtype,
    the result's; ``topi.nn.matmul`` adds a bias and an output dtype.
    """
    check_tensor(a, "topi.matmul: a", 2)
    check_tensor(b, "topi.matmul: b", 2)
    if a.dtype != b.dtype:
        raise DSLError(
            f"topi.matmul: a is {a.dtype} but b is {b.dtype}; cast one with topi.cast, or "
            "use topi.nn.matmul(a, b, out_dtype=...)"
        )
    return matmul_product("topi.matmul", a, b, transp_a, transp_b, a.dtype, "T_matmul")


def _parse_layout(layout: Any, what: str) -> list[tuple[str, int]]:
    """``"NCHW16c"`` as ``[("N", 0), ("C", 0), ("H", 0), ("W", 0), ("c", 16)]``."""
    if not isinstance(layout, str) or not layout:
        raise DSLError(f"topi.layout_transform: {what} must be a layout string like 'NCHW'")
    out, factor = [], ""
    for ch in layout:
        if ch.isdigit():
            factor += ch
        elif ch.isalpha() and ch.isupper() and not factor:
            out.append((ch, 0))
        elif ch.isalpha() and ch.islower() and factor and int(factor) > 0:
            out.append((ch, int(factor)))
            factor = ""
        else:
            raise DSLError(
                f"topi.layout_transform: {what} {layout!r} is not a layout: write axes as "
                "capitals, split ones as a factor and the lower-case letter ('NCHW16c')"
            )
    names = [a for a, _ in out]
    primal = {a for a in names if a.isupper()}
    if factor or len(set(names)) != len(names) or any(a.upper() not in primal for a in names):
        raise DSLError(
            f"topi.layout_transform: {what} {layout!r} repeats an axis, ends in a number or "
            "splits an axis it does not have (each 16c needs a C)"
        )
    return out


def layout_transform(
    array: Tensor, src_layout: str, dst_layout: str, schedule_rule: str = "None"
) -> Tensor:
    """``array`` from ``src_layout`` to ``dst_layout``: permutations (``"NCHW"`` to
    ``"NHWC"``) and split axes (``"NCHW"`` to ``"NCHW4c"`` and back), as TVM's.

    A split that does not divide its axis pads with zeros, as TVM does. Equal layouts
    return ``array`` itself. ``schedule_rule`` is accepted and ignored.
    """
    check_tensor(array, "topi.layout_transform: array")
    src = _parse_layout(src_layout, "src_layout")
    dst = _parse_layout(dst_layout, "dst_layout")
    if src_layout == dst_layout:
        return array
    if len(src) != array.ndim:
        raise DSLError(
            f"topi.layout_transform: src_layout {src_layout!r} has {len(src)} axes but "
            f"array is {array.ndim}-D {array.shape}"
        )
    if {a for a, _ in src if a.isupper()} != {a for a, _ in dst if a.isupper()}:
        raise DSLError(
            f"topi.layout_transform: cannot convert {src_layout!r} to {dst_layout!r}: "
            "both must have the same capital axes"
        )
    src_pos = {a: d for d, (a, _) in enumerate(src)}
    src_split = {a.upper(): f for a, f in src if f}
    dst_split = {a.upper(): f for a, f in dst if f}
    full_size = {
        a: array.shape[d] * src_split.get(a, 1) for d, (a, _) in enumerate(src) if a.isupper()
    }
    shape = tuple(f if f else -(-full_size[a] // dst_split.get(a, 1)) for a, f in dst)
    padded = any(full_size[a] % f for a, f in dst_split.items())
    dst_pos = {a: d for d, (a, _) in enumerate(dst)}

    def body(*i):
        idx: list = [None] * array.ndim
        for a in full_size:
            whole = i[dst_pos[a]]
            if a in dst_split:
                whole = whole * dst_split[a] + i[dst_pos[a.lower()]]
            if a in src_split:
                idx[src_pos[a]] = whole // src_split[a]
                idx[src_pos[a.lower()]] = whole % src_split[a]
            else:
                idx[src_pos[a]] = whole
        if not padded:
            return array[tuple(idx)]
        inside = None
        for a, size in full_size.items():
            if a in dst_split and size % dst_split[a]:
                whole = i[dst_pos[a]] * dst_split[a] + i[dst_pos[a.lower()]]
                cond = whole < size
                inside = cond if inside is None else E.logical_and(inside, cond)
        return E.if_then_else(inside, array[tuple(idx)], E.const(0, array.dtype))

    return compute(shape, body, name="T_layout_trans", tag=INJECTIVE)
