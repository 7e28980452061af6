"""TVM's intrinsic registry: ``register_op_attr``, ``register_intrin_lowering``.

TVM's "Intrinsics and Math Functions" tutorial declares its own intrinsic
(``register_op_attr("tir.mylog", "TCallEffectKind", CallEffectKind.Pure)``), calls it with
``tir.call_intrin(dtype, "tir.mylog", x)`` and gives it a lowering rule per target
(``register_intrin_lowering("tir.mylog", target="cuda", f=rule, level=99)``); it also
overrides the rule of a built-in (``"tir.exp"``). A rule receives the call (``op.op.name``
is ``"tir.mylog"``, ``op.args``, ``op.dtype``) and returns an expression: our intrinsics,
``call_pure_extern`` of a math function we know, or the call itself (no translation).
Code generation applies the rules of its target (``apply_lowering_rules``) before it
reads the program; an intrinsic of the user's that has no rule for the target is a
clear error there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import CodegenError, DSLError
from . import expr as E


class CallEffectKind:
    """The effect kinds of an intrinsic call, as TVM names them."""

    ExprAnnotation = 0
    Pure = 1
    ReadState = 2
    UpdateState = 3
    Opaque = 4
    SpecialCallArg = 5
    Embedded = 6


#: attributes of intrinsics the user declared: op name -> {attribute: value}
_OP_ATTRS: dict[str, dict[str, Any]] = {}
#: lowering rules: (op name, target kind) -> (level, rule)
_RULES: dict[tuple[str, str], tuple[int, Callable]] = {}


def _full_name(op: str) -> str:
    return op if op.startswith("tir.") else f"tir.{op}"


def register_op_attr(op_name: str, attr_key: str, value: Any = None, level: int = 10) -> Any:
    """Declare an attribute of the intrinsic ``op_name`` (which declares the intrinsic).

    As in TVM, without ``value`` this returns a decorator that registers the function
    it decorates as the value.
    """
    if not isinstance(op_name, str) or not op_name:
        raise DSLError(
            f"register_op_attr: op_name must be a name like 'tir.mylog', got {op_name!r}"
        )

    def register(v: Any) -> Any:
        _OP_ATTRS.setdefault(_full_name(op_name), {})[attr_key] = v
        return v

    return register if value is None else register(value)


def register_intrin_lowering(
    op_name: str, target: str = "default", *, f: Callable | None = None, level: int = 10
) -> Any:
    """Register ``f`` as the lowering rule of ``op_name`` for ``target`` ("llvm", "cuda",
    or "default" for every target without its own). A rule of a higher ``level``
    replaces one of a lower level, as in TVM. Without ``f``, a decorator."""
    if not isinstance(target, str) or not target:
        raise DSLError(
            f"register_intrin_lowering: target must be a name like 'cuda', got {target!r}"
        )
    kind = target.split()[0]

    def register(rule: Callable) -> Callable:
        if not callable(rule):
            raise DSLError(f"register_intrin_lowering({op_name!r}): f must be callable")
        key = (_full_name(op_name), kind)
        old = _RULES.get(key)
        if old is None or level >= old[0]:
            _RULES[key] = (level, rule)
        _OP_ATTRS.setdefault(_full_name(op_name), {})
        return rule

    return register if f is None else register(f)


def is_user_intrinsic(op_name: str) -> bool:
    """Whether ``op_name`` was declared with ``register_op_attr`` / a lowering rule."""
    return _full_name(op_name) in _OP_ATTRS


def user_call(dtype: str, op_name: str, args: tuple) -> E.Call:
    """The call of a declared intrinsic (lowered by its rule when code is generated)."""
    return E.Call(_full_name(op_name), tuple(args), dtype)


def _rule(op: str, kind: str) -> Callable | None:
    name = _full_name(op)
    found = _RULES.get((name, kind)) or _RULES.get((name, "default"))
    return found[1] if found else None


def has_rules() -> bool:
    """Whether any rule was registered (code generation skips the walk otherwise)."""
    return bool(_RULES)


def lower_call(call: E.Call, kind: str) -> E.PrimExpr:
    """``call`` after the rule for ``kind`` (itself where there is none)."""
    rule = _rule(call.op, kind)
    if rule is None:
        if call.op.startswith("tir."):
            raise CodegenError(
                f"the intrinsic {call.op!r} has no lowering rule for target {kind!r}: "
                f"register one with tvm.ir.register_intrin_lowering({call.op!r}, "
                f"target={kind!r}, f=rule)"
            )
        return call
    view = E.Call(E.Op(_full_name(call.op)), call.args, call.dtype)
    out = rule(view)
    if out is view or out is None:
        if call.op.startswith("tir."):  # a user intrinsic the rule did not translate
            raise CodegenError(
                f"the lowering rule of {call.op!r} for target {kind!r} returned the call "
                "itself: it has no translation for this dtype "
                f"({call.dtype}); handle it in the rule"
            )
        return call
    if not isinstance(out, E.PrimExpr):
        raise CodegenError(
            f"the lowering rule of {call.op!r} for target {kind!r} returned "
            f"{type(out).__name__}; a rule returns an expression (e.g. "
            "tvm.tir.call_pure_extern('float32', 'logf', op.args[0]))"
        )
    return out
