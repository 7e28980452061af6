"""The range of a TVMScript ``for``: ``range(a, b, s)``, ``T.serial(a, b, step=s)``...

A step ``s > 1`` becomes what TVM lowers it to: a unit loop ``k`` over ``ceildiv(b - a, s)``
iterations, the written loop name standing for ``a + k * s`` in the body. Only a positive
constant step has that meaning for every start and stop, so anything else is refused with
the unit-step loop to write instead.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..dsl import expr as E, intrin

if TYPE_CHECKING:
    from .stmts import FunctionParser


@dataclass(frozen=True)
class LoopRange:
    """A loop over ``extent`` iterations whose written variable is ``start + k * step``."""

    start: Any  # an int or a PrimExpr
    extent: Any
    step: int = 1

    def loop_min(self) -> Any:
        """The minimum of the loop's own variable (0 when the loop steps)."""
        return self.start if self.step == 1 else 0

    def value(self, var: E.Var) -> Any:
        """What the written loop name means in the body, given the loop's variable."""
        if self.step == 1:
            return var
        scaled = E.as_expr(var) * self.step
        return scaled if _is_zero(self.start) else scaled + self.start


def _is_zero(x: Any) -> bool:
    return (isinstance(x, int) and x == 0) or (isinstance(x, E.IntImm) and x.value == 0)


def _number(x: Any) -> int | None:
    if isinstance(x, E.IntImm):
        return int(x.value)
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    return None


def loop_range(
    parser: FunctionParser, call: ast.Call, name: str, args: list, kwargs: dict
) -> LoopRange:
    """The range of ``for name in <call>(*args, **kwargs)`` (``kwargs`` loses its ``step``)."""
    if not args or len(args) > 3:
        raise parser.source.error(
            call, f"loop {name}: write range(stop), range(start, stop) or range(start, stop, step)"
        )
    step: Any = kwargs.pop("step", None)
    if len(args) == 3:
        if step is not None:
            raise parser.source.error(call, f"loop {name}: the step is given twice")
        step = args[2]
    start, stop = (0, args[0]) if len(args) == 1 else (args[0], args[1])
    if step is None:
        return LoopRange(start, stop - start)
    value = _number(step)
    if value is None:
        raise parser.source.error(
            call,
            f"loop {name}: the step must be a constant positive integer, got {step}; "
            "write a unit loop (for k in range(n)) and compute the index from k",
        )
    if value <= 0:
        raise parser.source.error(call, _backwards(name, start, stop, value))
    if value == 1:
        return LoopRange(start, stop - start)
    lo, hi = _number(start), _number(stop)
    if lo is not None and hi is not None:
        extent: Any = max(0, -(-(hi - lo) // value))  # ceildiv, and no trips when hi <= lo
    else:
        extent = intrin.floordiv(E.as_expr(stop) - start + (value - 1), value)
    return LoopRange(start, extent, value)


def _backwards(name: str, start: Any, stop: Any, step: int) -> str:
    """The refusal of a zero or negative step, with the counting-up loop that replaces it."""
    if step == 0:
        return (
            f"loop {name}: step 0 never advances; loops count up by a positive constant "
            "step, e.g. range(0, 8, 2)"
        )
    lo, hi = _number(start), _number(stop)
    down = -step
    if lo is not None and hi is not None:
        trips = str(max(0, -(-(lo - hi) // down)))
    else:
        trips = f"T.ceildiv({start} - ({stop}), {down})"
    use = f"{start} - k" if down == 1 else f"{start} - k * {down}"
    return (
        f"loop {name}: step {step} is not supported (loops count up by a positive constant "
        f"step): write `for k in range({trips}):` and use `{use}` where the body uses {name}"
    )
