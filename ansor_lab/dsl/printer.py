"""Text form of scalar expressions, close to TVMScript (``T.exp(x)``, ``A[i, k]``)."""

from __future__ import annotations

from collections.abc import Callable

from . import expr as E
from .visitor import EXPR, Visitor

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
    """Teach the expression printer a node kind defined in another layer.

    ``fn(node, text)`` returns (text, precedence); it becomes the printer's
    ``expr_<cls name>`` handler, so the node kind joins the one dispatch convention.
    """
    EXTRA_PRINTERS[cls] = fn

    def handler(self: ExprPrinter, e: object) -> tuple[str, int]:
        return fn(e, text)

    handler.__name__ = f"expr_{cls.__name__}"
    setattr(ExprPrinter, handler.__name__, handler)


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


class ExprPrinter(Visitor):
    """Prints one expression: ``expr_X(e)`` returns (text, precedence)."""

    def visit(self, e: object) -> tuple[str, int]:
        """The text and precedence of ``e``."""
        return self.handler(EXPR, e)(e)

    def expr_IterVar(self, e: E.IterVar) -> tuple[str, int]:
        return e.var.name, _ATOM

    def expr_Var(self, e: E.Var) -> tuple[str, int]:
        return e.name, _ATOM

    def _const(self, e: E.PrimExpr) -> tuple[str, int]:
        const_text = _const_text(e)
        return const_text, 7 if const_text.startswith("-") else _ATOM

    expr_IntImm = expr_FloatImm = _const

    def _infix(self, e: E.PrimExpr) -> tuple[str, int]:
        op, prec = _INFIX[type(e)]
        left, lp = self.visit(e.a)
        right, rp = self.visit(e.b)
        if lp < prec:
            left = f"({left})"
        # left-associative: the right operand needs parens at equal precedence, even of
        # an associative operator (a float a + (b + c) is not (a + b) + c, and the text
        # must parse back to the same tree)
        if rp <= prec:
            right = f"({right})"
        return f"{left} {op} {right}", prec

    expr_Add = expr_Sub = expr_Mul = expr_FloorDiv = expr_FloorMod = _infix
    expr_EQ = expr_NE = expr_LT = expr_LE = expr_GT = expr_GE = _infix
    expr_And = expr_Or = _infix

    def expr_Div(self, e: E.Div) -> tuple[str, int]:
        if e.dtype.startswith("float"):
            left, lp = self.visit(e.a)
            right, rp = self.visit(e.b)
            left = left if lp >= 6 else f"({left})"
            right = right if rp > 6 else f"({right})"
            return f"{left} / {right}", 6
        return f"T.truncdiv({text(e.a)}, {text(e.b)})", _ATOM

    def expr_Mod(self, e: E.Mod) -> tuple[str, int]:
        return f"T.truncmod({text(e.a)}, {text(e.b)})", _ATOM

    def expr_Min(self, e: E.Min) -> tuple[str, int]:
        return f"T.min({text(e.a)}, {text(e.b)})", _ATOM

    def expr_Max(self, e: E.Max) -> tuple[str, int]:
        return f"T.max({text(e.a)}, {text(e.b)})", _ATOM

    def expr_Not(self, e: E.Not) -> tuple[str, int]:
        inner, p = self.visit(e.a)
        return f"not {inner if p >= 3 else '(' + inner + ')'}", 3

    def expr_Cast(self, e: E.Cast) -> tuple[str, int]:
        return f'T.Cast("{e.dtype}", {text(e.value)})', _ATOM

    def expr_Select(self, e: E.Select) -> tuple[str, int]:
        args = ", ".join(text(x) for x in (e.condition, e.true_value, e.false_value))
        return f"T.Select({args})", _ATOM

    def expr_Call(self, e: E.Call) -> tuple[str, int]:
        return f"T.{e.op}({', '.join(text(a) for a in e.args)})", _ATOM

    def expr_TensorLoad(self, e: E.TensorLoad) -> tuple[str, int]:
        idx = ", ".join(text(i) for i in e.indices)
        return f"{e.tensor.name}[{idx}]", _ATOM

    def expr_Reduce(self, e: E.Reduce) -> tuple[str, int]:
        axes = ", ".join(a.var.name for a in e.axis)
        where = f", where={text(e.condition)}" if e.condition is not None else ""
        return f"T.{e.combiner}({text(e.source)}, axis=[{axes}]{where})", _ATOM


#: The printer is stateless, so one instance serves every call.
_PRINTER = ExprPrinter()


def text(e: object) -> str:
    """The text of one expression."""
    return _PRINTER.visit(e)[0]


def expr_to_str(e: object) -> str:
    """The text of one expression (alias kept for repr)."""
    return _PRINTER.visit(e)[0]
