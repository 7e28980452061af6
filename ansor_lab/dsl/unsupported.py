"""TVM DSL names ansor_lab does not implement, each raising an error that says what to write.

Tutorial code that reaches one of these should stop with our message, not with an
AttributeError on ``te``.
"""

from __future__ import annotations

from typing import Any

from ..errors import DSLError


def comm_reducer(*args: Any, **kwargs: Any) -> Any:
    """Not supported: custom commutative reducers."""
    raise DSLError(
        "te.comm_reducer is not supported: reduce with te.sum, te.max or te.min; an argmax "
        "can be written as a te.max over the values, then a second te.compute that finds "
        "the index"
    )


def extern(*args: Any, **kwargs: Any) -> Any:
    """Not supported: external (opaque) operators."""
    raise DSLError(
        "te.extern is not supported: ansor_lab schedules and compiles only te.compute "
        "operators; write the operator as a te.compute, or call the library from numpy "
        "around the built function"
    )


def scan(*args: Any, **kwargs: Any) -> Any:
    """Not supported: recurrences over a scan axis."""
    raise DSLError(
        "te.scan is not supported: write one te.compute per step, or run the recurrence "
        "in Python around a built step"
    )


def size_var(name: str = "size", dtype: str = "int32") -> Any:
    """Not supported: symbolic sizes."""
    raise DSLError(
        f"te.size_var({name!r}): shapes are static in ansor_lab; build one function per "
        "size (e.g. n = 1024)"
    )
