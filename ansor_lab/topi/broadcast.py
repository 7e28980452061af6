"""Broadcasting binary operators with numpy's rules: ``topi.add``, ``topi.multiply``..."""

from __future__ import annotations

from collections.abc import Callable
from itertools import zip_longest
from typing import Any

import numpy as np

from ..dsl import expr as E, intrin, intrin_extra
from ..dsl.tensor import Tensor, compute
from ..errors import DSLError, DTypeError
from .tag import BROADCAST
from .utils import check_tensor, get_const_tuple


def broadcast_shape(shape1: Any, shape2: Any, what: str = "broadcast") -> tuple[int, ...]:
    """The numpy broadcast of two shapes; raises DSLError when they are incompatible."""
    s1, s2 = get_const_tuple(shape1), get_const_tuple(shape2)
    out = []
    for a, b in zip_longest(reversed(s1), reversed(s2), fillvalue=1):
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            raise DSLError(
                f"{what}: shapes {s1} and {s2} do not broadcast (dimension {a} vs {b}); "
                "each trailing dimension pair must be equal or contain a 1"
            )
    return tuple(reversed(out))


def broadcast_index(t: Tensor, out_shape: tuple, index: tuple) -> tuple:
    """The index into ``t`` that an ``out_shape`` index reads under numpy broadcasting."""
    offset = len(out_shape) - t.ndim
    return tuple(
        0 if t.shape[k] == 1 and out_shape[offset + k] != 1 else index[offset + k]
        for k in range(t.ndim)
    )


def broadcast_to(data: Tensor, shape: Any) -> Tensor:
    """``data`` broadcast to ``shape`` (numpy rules)."""
    check_tensor(data, "topi.broadcast_to: data")
    target = get_const_tuple(shape)
    if broadcast_shape(data.shape, target, "topi.broadcast_to") != target:
        raise DSLError(
            f"topi.broadcast_to: shape {data.shape} cannot be broadcast to {target}; "
            "the target must be at least as large in every dimension"
        )
    return compute(
        target,
        lambda *i: data[broadcast_index(data, target, i)],
        name="T_broadcast_to",
        tag=BROADCAST,
    )


_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating, E.ExprOp)


def _binary(name: str, fn: Callable, doc: str) -> Callable[[Any, Any], Any]:
    what = f"topi.{name}"

    def apply(a: Any, b: Any) -> Any:
        try:
            return fn(a, b)
        except DTypeError as err:
            raise DTypeError(f"{what}: {err}") from None

    def op(lhs: Any, rhs: Any) -> Any:
        for side, v in (("lhs", lhs), ("rhs", rhs)):
            if not isinstance(v, (Tensor,) + _SCALARS):
                raise DSLError(
                    f"{what}: {side} must be a te.Tensor or a scalar, got {type(v).__name__}"
                )
        if not isinstance(lhs, Tensor) and not isinstance(rhs, Tensor):
            return apply(lhs, rhs)  # two scalars give an expression, as in TVM
        if not isinstance(lhs, Tensor):
            return compute(
                rhs.shape, lambda *i: apply(lhs, rhs[i]), name=f"T_{name}", tag=BROADCAST
            )
        if not isinstance(rhs, Tensor):
            return compute(
                lhs.shape, lambda *i: apply(lhs[i], rhs), name=f"T_{name}", tag=BROADCAST
            )
        shape = broadcast_shape(lhs.shape, rhs.shape, what)
        return compute(
            shape,
            lambda *i: apply(
                lhs[broadcast_index(lhs, shape, i)], rhs[broadcast_index(rhs, shape, i)]
            ),
            name=f"T_{name}",
            tag=BROADCAST,
        )

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


add = _binary("add", lambda a, b: a + b, "lhs + rhs with numpy broadcasting (tensors or scalars).")
subtract = _binary(
    "subtract", lambda a, b: a - b, "lhs - rhs with numpy broadcasting (tensors or scalars)."
)
multiply = _binary(
    "multiply", lambda a, b: a * b, "lhs * rhs with numpy broadcasting (tensors or scalars)."
)
divide = _binary(
    "divide",
    lambda a, b: a / b,
    "lhs / rhs with broadcasting; true division on floats, truncating on integers (as TVM).",
)
floor_divide = _binary(
    "floor_divide", lambda a, b: a // b, "lhs // rhs (floor division) with numpy broadcasting."
)
floor_mod = _binary(
    "floor_mod", lambda a, b: a % b, "lhs % rhs (sign of the divisor) with numpy broadcasting."
)
maximum = _binary("maximum", intrin.max, "Elementwise max of lhs and rhs with broadcasting.")
minimum = _binary("minimum", intrin.min, "Elementwise min of lhs and rhs with broadcasting.")
power = _binary("power", intrin.power, "lhs ** rhs for floats with numpy broadcasting.")
bitwise_and = _binary("bitwise_and", intrin_extra.bitwise_and, "lhs & rhs of integers, broadcast.")
bitwise_or = _binary("bitwise_or", intrin_extra.bitwise_or, "lhs | rhs of integers, broadcast.")
bitwise_xor = _binary("bitwise_xor", intrin_extra.bitwise_xor, "lhs ^ rhs of integers, broadcast.")
left_shift = _binary(
    "left_shift", intrin_extra.shift_left, "lhs << rhs of integers (0 out of range), broadcast."
)
right_shift = _binary(
    "right_shift", intrin_extra.shift_right, "lhs >> rhs of integers (arithmetic), broadcast."
)
