"""Text form of scalar expressions, close to TVMScript (``T.exp(x)``, ``A[i, k]``)."""

from __future__ import annotations

from collections.abc import Callable

from . import expr as E

_INFIX = {
    E.Add: ("+", 5),
    E.Sub: ("-", 5),
    E.Mul: ("*", 6),
    E.FloorDiv: ("//", 6),
    E.FloorMod: ("%", 6),
    E.EQ: ("==", 4),
    E.NE: ("!=", 4),
    E.LT: ("<", 4),
    E.LE: ("<=", 4),
    E.GT: (">", 4),
    E.GE: (">=", 4),
    E.And: ("and", 2),
    E.Or: ("or", 1),
}

_ATOM = 9

#: Printers for node kinds defined outside the DSL (the IR registers BufferLoad etc.).
#: Each takes (node, print_fn) and returns (text, precedence).
EXTRA_PRINTERS: dict[type, Callable] = {}


def register_printer(cls: type, fn: Callable) -> None:
    """Teach the expression printer a node kind defined in another layer."""
    EXTRA_PRINTERS[cls] = fn


def _float_text(value: float) -> str:
    return repr(float(value))


def _const_text(e: E.PrimExpr) -> str:
    if isinstance(e, E.IntImm):
        if e.dtype == "bool":
            return "True" if e.value else "False"
        if e.dtype == "int32":
            return str(e.value)
        return f"T.{e.dtype}({e.value})"
    return f"T.{e.dtype}({_float_text(e.value)})"


def _print(e: object) -> tuple[str, int]:
    if isinstance(e, E.IterVar):
        return e.var.name, _ATOM
    if isinstance(e, E.Var):
        return e.name, _ATOM
    if isinstance(e, (E.IntImm, E.FloatImm)):
        const_text = _const_text(e)
        return const_text, 7 if const_text.startswith("-") else _ATOM
    info = _INFIX.get(type(e))
    if info is not None:
        op, prec = info
        left, lp = _print(e.a)
        right, rp = _print(e.b)
        if lp < prec:
            left = f"({left})"
        # left-associative: the right operand needs parens at equal precedence
        if rp <= prec and not (rp == prec and type(e) in (E.Add, E.Mul, E.And, E.Or)):
            right = f"({right})"
        return f"{left} {op} {right}", prec
    if isinstance(e, E.Div):
        if e.dtype.startswith("float"):
            left, lp = _print(e.a)
            right, rp = _print(e.b)
            left = left if lp >= 6 else f"({left})"
            right = right if rp > 6 else f"({right})"
            return f"{left} / {right}", 6
        return f"T.truncdiv({text(e.a)}, {text(e.b)})", _ATOM
    if isinstance(e, E.Mod):
        return f"T.truncmod({text(e.a)}, {text(e.b)})", _ATOM
    if isinstance(e, E.Min):
        return f"T.min({text(e.a)}, {text(e.b)})", _ATOM
    if isinstance(e, E.Max):
        return f"T.max({text(e.a)}, {text(e.b)})", _ATOM
    if isinstance(e, E.Not):
        inner, p = _print(e.a)
        return f"not {inner if p >= 3 else '(' + inner + ')'}", 3
    if isinstance(e, E.Cast):
        return f'T.Cast("{e.dtype}", {text(e.value)})', _ATOM
    if isinstance(e, E.Select):
        args = ", ".join(text(x) for x in (e.condition, e.true_value, e.false_value))
        return f"T.Select({args})", _ATOM
    if isinstance(e, E.Call):
        return f"T.{e.op}({', '.join(text(a) for a in e.args)})", _ATOM
    if isinstance(e, E.TensorLoad):
        idx = ", ".join(text(i) for i in e.indices)
        return f"{e.tensor.name}[{idx}]", _ATOM
    if isinstance(e, E.Reduce):
        axes = ", ".join(a.var.name for a in e.axis)
        where = f", where={text(e.condition)}" if e.condition is not None else ""
        return f"T.{e.combiner}({text(e.source)}, axis=[{axes}]{where})", _ATOM
    printer = EXTRA_PRINTERS.get(type(e))
    if printer is not None:
        return printer(e, text)
    return f"<{type(e).__name__}>", _ATOM


def text(e: object) -> str:
    """The text of one expression."""
    return _print(e)[0]


def expr_to_str(e: object) -> str:
    """The text of one expression (alias kept for repr)."""
    return _print(e)[0]
