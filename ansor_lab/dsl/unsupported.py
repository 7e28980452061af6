"""TVM DSL names ansor_lab does not implement, each raising an error that says what to write.

Tutorial code that reaches one of these should stop with our message, not with an
AttributeError on ``te``.
"""

from __future__ import annotations

from typing import Any

from ..errors import DSLError


def comm_reducer(fcombine: Any, fidentity: Any, name: str = "reduce") -> Any:
    """A reducer from a combine function and an identity, as TVM's ``te.comm_reducer``.

    Combiners that are a sum, a max or a min (``lambda x, y: x + y`` with identity 0,
    ``te.max(x, y)`` with ``min_value``) become ``te.sum`` / ``te.max`` / ``te.min``; a
    combine function over tuples (argmax) makes a tuple reducer (``tuple_reduce``); other
    combiners raise an error saying what to write.
    """
    from . import expr as E, intrin  # noqa: PLC0415 - intrin imports this module's package

    x, y = E.Var("x", "float32"), E.Var("y", "float32")
    try:
        combined = fcombine(x, y)
    except (TypeError, IndexError, DSLError):
        combined = None  # it indexes its arguments: a tuple reducer (argmax)
    if combined is None or isinstance(combined, (tuple, list)):
        from .tuple_reduce import make_reducer  # noqa: PLC0415 - only tuple reducers need it

        return make_reducer(fcombine, fidentity, name)
    kinds = {E.Add: "sum", E.Max: "max", E.Min: "min"}
    combiner = kinds.get(type(combined))
    if combiner is None or {combined.a, combined.b} != {x, y}:
        # any other combine function (a product x * y...): a tuple reducer of one element
        from .tuple_reduce import make_single_reducer  # noqa: PLC0415 - only these need it

        return make_single_reducer(fcombine, fidentity, name)
    reducer = getattr(intrin, combiner)

    def reduce(expr: Any, axis: Any = None, where: Any = None, init: Any = None) -> Any:
        source = E.as_expr(expr)
        identity = E.as_expr(fidentity(source.dtype))
        expected = intrin.reduce_identity(combiner, source.dtype)
        if not isinstance(identity, (E.IntImm, E.FloatImm)) or float(identity.value) != float(
            expected.value
        ):
            raise DSLError(
                f"te.comm_reducer({name!r}): the identity of a {combiner} must be "
                f"{expected}, got {identity}; add a constant after the reduction instead"
            )
        if init is not None:
            raise DSLError(f"{name}(init=...) is not supported; combine it after the reduction")
        return reducer(source, axis=axis, where=where)

    reduce.__name__ = name
    return reduce


def extern(*args: Any, **kwargs: Any) -> Any:
    """Not supported: external (opaque) operators."""
    raise DSLError(
        "te.extern is not supported: ansor_lab schedules and compiles only te.compute "
        "operators; write the operator as a te.compute, or call the library from numpy "
        "around the built function"
    )


def gradient(*args: Any, **kwargs: Any) -> Any:
    """Not supported: automatic differentiation of tensor expressions."""
    raise DSLError(
        "te.gradient is not supported: ansor_lab has no automatic differentiation; write "
        "the backward computation as its own te.compute (its numpy reference checks it)"
    )


def hybrid(*args: Any, **kwargs: Any) -> Any:
    """Not supported: TVM's hybrid script (superseded by TVMScript)."""
    raise DSLError(
        "te.hybrid is not supported: write the operator as a te.compute, or as TVMScript "
        "(@T.prim_func, from ansor_lab.script import tir as T)"
    )


# ExprOp's abs() and ** (TVM's PrimExpr has neither): so code written here runs under TVM,
# they point to the intrinsics instead of Python's bare "bad operand type" TypeError
def no_abs(x: Any) -> Any:
    """``abs(x)`` of an expression: refused, naming ``te.abs``."""
    raise DSLError("abs(x) is not defined on expressions; write te.abs(x)")


def no_pow(x: Any, y: Any) -> Any:
    """``x ** y`` of an expression ``x``: refused, naming ``te.power``."""
    y = y if isinstance(y, (int, float)) else "y"
    raise DSLError(
        f"x ** {y} is not defined on expressions; write te.power(x, {y}) (a float x), "
        "or x * x for a square"
    )


def no_rpow(y: Any, x: Any) -> Any:
    """``x ** y`` of a number ``x`` and an expression ``y``: refused, naming ``te.power``."""
    number = isinstance(x, (int, float))
    base = float(x) if number else "x"
    raise DSLError(
        f"{x if number else 'x'} ** y is not defined on expressions; write "
        f"te.power({base}, y) (a float y)" + (", or te.exp2(y)" if base == 2 else "")
    )
