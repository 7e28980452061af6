"""Small helpers shared by the operators: constant shapes, argument checks, axis handling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dsl.expr import IntImm
from ..dsl.tensor import Tensor
from ..errors import DSLError


def get_const_int(value: Any) -> int:
    """The Python int of a constant (int, numpy integer or IntImm)."""
    if isinstance(value, bool):
        raise DSLError(f"expected a constant int, got the bool {value!r}")
    if isinstance(value, (int, np.integer, IntImm)):
        return int(value)
    raise DSLError(
        f"expected a constant int, got {type(value).__name__} {value!r}; "
        "this needs static shapes (a te.var dimension has no value until a call)"
    )


def get_const_tuple(shape: Any) -> tuple[int, ...]:
    """A shape (tuple/list of ints or IntImms, or a Tensor) as a tuple of Python ints."""
    if isinstance(shape, Tensor):
        shape = shape.shape
    if isinstance(shape, (int, np.integer, IntImm)) and not isinstance(shape, bool):
        return (int(shape),)
    if not isinstance(shape, (tuple, list)):
        raise DSLError(f"expected a shape (a tuple of ints), got {type(shape).__name__} {shape!r}")
    return tuple(get_const_int(s) for s in shape)


def check_tensor(x: Any, what: str, ndim: int | None = None) -> Tensor:
    """Raise DSLError unless ``x`` is a Tensor (of ``ndim`` dimensions when given)."""
    if not isinstance(x, Tensor):
        raise DSLError(
            f"{what} must be a te.Tensor (from te.placeholder or te.compute), "
            f"got {type(x).__name__}"
        )
    if ndim is not None and x.ndim != ndim:
        raise DSLError(
            f"{what} must be {ndim}-D, got {x.ndim}-D tensor {x.name!r} of shape {x.shape}"
        )
    return x


def normalize_axis(axis: Any, ndim: int, what: str) -> int:
    """A possibly negative axis as an index in ``[0, ndim)``."""
    a = get_const_int(axis)
    if not -ndim <= a < ndim:
        raise DSLError(
            f"{what}: axis {a} is out of range for a {ndim}-D tensor; "
            f"pass an axis in [{-ndim}, {ndim - 1}]"
        )
    return a % ndim


def normalize_axes(axis: Any, ndim: int, what: str) -> tuple[int, ...]:
    """``None`` (all), an int or a sequence of ints as sorted, distinct, non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    items: Sequence = axis if isinstance(axis, (tuple, list)) else [axis]
    out = [normalize_axis(a, ndim, what) for a in items]
    if len(set(out)) != len(out):
        raise DSLError(f"{what}: axis {tuple(items)} names an axis twice; list each axis once")
    return tuple(sorted(out))


def int_tuple(value: Any, n: int, what: str) -> tuple[int, ...]:
    """An int or a length-``n`` sequence of ints as an ``n``-tuple (strides, dilations...)."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            value = value[0]
        elif len(value) != n:
            raise DSLError(f"{what} must be an int or {n} ints, got {tuple(value)!r}")
        else:
            return tuple(get_const_int(v) for v in value)
    return (get_const_int(value),) * n
