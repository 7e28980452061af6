"""``tir.call_pure_extern`` / ``call_extern`` / ``call_intrin`` for the math we can lower.

TVM tutorials call C math functions by name (``tir.call_pure_extern("float32", "expf",
x)``) or TVM intrinsics (``tir.call_intrin("float32", "tir.exp", x)``); each name we know
becomes our intrinsic, so it is vectorized, checked against numpy and printed as usual.
Any other name is a clear error (no foreign C function is linked).
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import DSLError
from . import expr as E, intrin, intrin_extra, intrin_rules
from .construct import cast

_UNARY: dict[str, Callable] = {name: getattr(intrin, name) for name in intrin.FLOAT_UNARY}
_UNARY["fabs"] = intrin.abs
_UNARY["abs"] = intrin.abs
_BINARY: dict[str, Callable] = {
    "pow": intrin.power,
    "fmax": lambda a, b: E.binary(E.Max, a, b, "max"),
    "fmin": lambda a, b: E.binary(E.Min, a, b, "min"),
    "max": lambda a, b: E.binary(E.Max, a, b, "max"),
    "min": lambda a, b: E.binary(E.Min, a, b, "min"),
    **{name: intrin_extra.BY_NAME[name] for name in intrin_extra.FLOAT_BINARY},
}


def _base(name: str) -> str:
    """``expf`` / ``tir.exp`` / ``__expf`` / ``llvm.exp.f32`` -> ``exp``."""
    n = name.removeprefix("tir.").removeprefix("llvm.").lstrip("_")
    n = n.split(".")[0]
    if n not in _UNARY and n not in _BINARY and n.endswith("f"):
        n = n[:-1]  # the C float variants: expf, sqrtf, powf
    return n


def _call(kind: str, dtype: str, name: str, args: tuple) -> E.PrimExpr:
    if not isinstance(name, str):
        raise DSLError(f"tir.{kind}(dtype, name, *args): name must be a string, got {name!r}")
    if intrin_rules.is_user_intrinsic(name):  # declared by register_op_attr: its rule lowers it
        return intrin_rules.user_call(dtype, name, tuple(cast(a, dtype) for a in args))
    base = _base(name)
    values = [cast(a, dtype) for a in args]
    if base in _UNARY and len(values) == 1:
        return cast(_UNARY[base](values[0]), dtype)
    if base in _BINARY and len(values) == 2:
        return cast(_BINARY[base](*values), dtype)
    known = sorted(set(_UNARY) | set(_BINARY))
    raise DSLError(
        f"tir.{kind}({dtype!r}, {name!r}, ...) with {len(values)} arguments: only these math "
        f"functions can be lowered: {', '.join(known)} (C names like 'expf' and TVM names "
        "like 'tir.exp' both work); no other foreign function is linked. To add an "
        "intrinsic of your own, declare it with tvm.ir.register_op_attr(name, "
        "'TCallEffectKind', tvm.tir.CallEffectKind.Pure) and give it a rule per target with "
        "tvm.ir.register_intrin_lowering(name, target=..., f=rule)"
    )


def call_pure_extern(dtype: str, func_name: str, *args: object) -> E.PrimExpr:
    """A pure C math function by name (``"expf"``, ``"sqrtf"``, ``"powf"``...)."""
    return _call("call_pure_extern", dtype, func_name, args)


def call_extern(dtype: str, func_name: str, *args: object) -> E.PrimExpr:
    """Like ``call_pure_extern`` (only pure math functions are supported)."""
    return _call("call_extern", dtype, func_name, args)


def call_intrin(dtype: str, op_name: str, *args: object) -> E.PrimExpr:
    """A TVM intrinsic by name (``"tir.exp"``, ``"tir.sqrt"``...)."""
    return _call("call_intrin", dtype, op_name, args)


def call_llvm_pure_intrin(
    dtype: str, name: str, num_signature: object, *args: object
) -> E.PrimExpr:
    """An LLVM intrinsic by name (``"llvm.exp.f32"``); the signature count is ignored."""
    return _call("call_llvm_pure_intrin", dtype, name, args)
