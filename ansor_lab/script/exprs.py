"""TVMScript expressions -> loop-IR expressions (``A[i, j] * 2``, ``T.exp(x)``, ``T.float32(0)``).

Only the AST is read: nothing of the user's function body is executed. Names resolve to
loop and block variables, buffers, and plain numbers from the enclosing Python scope.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ..dsl import dtypes, expr as E, intrin, intrin_extra
from ..dsl.construct import cast, const, if_then_else, select
from ..errors import AnsorLabError
from ..ir import nodes as N
from .source import ScriptSource

_BINOPS: dict[type, Callable] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    # logical on bools, bitwise on integers (``ExprOp``)
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
}
_CMPOPS: dict[type, Callable] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: E.binary(E.EQ, a, b, "=="),
    ast.NotEq: lambda a, b: E.binary(E.NE, a, b, "!="),
}

#: ``T.<name>(x)`` intrinsics of one float operand
_UNARY = {name: getattr(intrin, name) for name in intrin.FLOAT_UNARY}

#: the dtypes ``T.float32(x)``-style constructors name
DTYPE_NAMES = (
    "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool",
)  # fmt: skip


def _py_binop(op: ast.operator, a: Any, b: Any) -> Any:
    if isinstance(op, ast.Div) and isinstance(a, int) and isinstance(b, int):
        return a / b
    return _BINOPS[type(op)](a, b)


#: the names newer TVM (``tvm.script.tirx``, TVM >= 0.22) gives the same constructs
_NEW_NAMES = {
    "sblock": "block",
    "sblock_alloc_buffer": "alloc_buffer",
    "sblock_attr": "block_attr",
}


#: the strings a float constructor accepts (TVM prints T.float32("inf") and "nan")
_SPECIAL_FLOATS = ("inf", "-inf", "+inf", "nan", "-nan", "+nan", "infinity", "-infinity")


class ExprParser:
    """Evaluates expression nodes; subclasses provide ``lookup`` and the T-namespace check."""

    source: ScriptSource

    # -- hooks ---------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def is_namespace(self, node: ast.AST, *names: str) -> bool:  # pragma: no cover
        raise NotImplementedError

    def t_call_name(self, node: ast.AST) -> str | None:
        """``"exp"`` for ``T.exp(...)`` (the callee's attribute under the T namespace)."""
        if isinstance(node, ast.Call):
            node = node.func
        if isinstance(node, ast.Attribute) and self.is_namespace(node.value, "T", "tir", "tirx"):
            return _NEW_NAMES.get(node.attr, node.attr)
        return None

    # -- evaluation ----------------------------------------------------------------
    def value(self, node: ast.AST) -> Any:
        """The value of an expression node (a PrimExpr, number, string, tuple, buffer...)."""
        method = getattr(self, f"_e_{type(node).__name__}", None)
        if method is None:
            raise self.source.error(
                node,
                f"{type(node).__name__} expressions are not TVMScript; write "
                "arithmetic on buffers, loop variables and T.* intrinsics",
            )
        try:
            return method(node)
        except AnsorLabError as err:
            if getattr(err, "lineno", None):
                raise
            raise self.source.error(node, str(err)) from None

    def expr(self, node: ast.AST) -> E.PrimExpr:
        """An expression node as a PrimExpr (numbers become constants)."""
        v = self.value(node)
        if isinstance(v, (E.PrimExpr, E.ExprOp)):
            return E.as_expr(v)
        if isinstance(v, (bool, int, float)):
            return const(v)
        raise self.source.error(node, f"expected a scalar expression, got {type(v).__name__}")

    def _e_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def _e_Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def _e_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.value(x) for x in node.elts)

    def _e_List(self, node: ast.List) -> list:
        return [self.value(x) for x in node.elts]

    def _e_Dict(self, node: ast.Dict) -> dict:
        return {self.value(k): self.value(v) for k, v in zip(node.keys, node.values) if k}

    def _e_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.value(node.operand)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            return (not v) if isinstance(v, (bool, int)) else E.logical_not(v)
        return ~v  # ast.Invert: bitwise on integers, logical on bools (``ExprOp``)

    def _e_BinOp(self, node: ast.BinOp) -> Any:
        if type(node.op) not in _BINOPS:
            raise self.source.error(node, f"operator {type(node.op).__name__} is not supported")
        return _py_binop(node.op, self.value(node.left), self.value(node.right))

    def _e_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self.value(v) for v in node.values]
        out = values[0]
        for v in values[1:]:
            out = E.logical_and(out, v) if isinstance(node.op, ast.And) else E.logical_or(out, v)
        return out

    def _e_Compare(self, node: ast.Compare) -> Any:
        left = self.value(node.left)
        out = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.value(right_node)
            if type(op) not in _CMPOPS:
                raise self.source.error(node, f"comparison {type(op).__name__} is not supported")
            term = _CMPOPS[type(op)](left, right)
            out = term if out is None else E.logical_and(out, term)
            left = right
        return out

    def _e_IfExp(self, node: ast.IfExp) -> Any:
        return if_then_else(self.value(node.test), self.value(node.body), self.value(node.orelse))

    def _e_Subscript(self, node: ast.Subscript) -> Any:
        target = self.value(node.value)
        index = node.slice
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        if isinstance(target, N.Buffer):
            if any(isinstance(x, ast.Slice) for x in items):
                raise self.source.error(
                    node, f"buffer {target.name!r}: slices are only for T.reads/T.writes"
                )
            indices = tuple(self.expr(x) for x in items)
            return self.load(target, indices, node)
        if isinstance(target, (tuple, list)) and len(items) == 1:
            return target[self.value(items[0])]
        raise self.source.error(node, f"cannot index a {type(target).__name__}")

    def load(self, buffer: N.Buffer, indices: tuple, node: ast.AST) -> E.PrimExpr:
        """``buffer[indices]`` read in an expression."""
        if len(indices) != len(buffer.shape):
            raise self.source.error(
                node,
                f"buffer {buffer.name!r} has {len(buffer.shape)} dimensions {buffer.shape} "
                f"but was indexed with {len(indices)}",
            )
        return N.BufferLoad(buffer, tuple(cast(i, "int32") for i in indices), buffer.dtype)

    def _e_Attribute(self, node: ast.Attribute) -> Any:
        if self.is_namespace(node.value, "T", "tir", "tirx"):
            if node.attr in DTYPE_NAMES:
                return node.attr
            raise self.source.error(node, f"T.{node.attr} is not a value; call it")
        base = self.value(node.value)
        if isinstance(base, N.Buffer) and node.attr in ("shape", "dtype", "name"):
            return getattr(base, node.attr)
        raise self.source.error(node, f"attribute {node.attr!r} is not supported here")

    def _e_Call(self, node: ast.Call) -> Any:
        name = self.t_call_name(node)
        if name is None:
            if isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
                name = node.func.id
            elif isinstance(node.func, ast.Name) and node.func.id in ("int", "float", "len"):
                args = [self.value(a) for a in node.args]
                return {"int": int, "float": float, "len": len}[node.func.id](*args)
            else:
                raise self.source.error(
                    node,
                    "only T.* intrinsics can be called in TVMScript (a function calling "
                    "another function is not supported)",
                )
        return self.intrinsic(name, node)

    def intrinsic(self, name: str, node: ast.Call) -> Any:
        """The value of ``T.<name>(...)`` in an expression."""
        args = [self.value(a) for a in node.args]
        kwargs = {k.arg: self.value(k.value) for k in node.keywords if k.arg}
        if name in DTYPE_NAMES:
            if not args:
                raise self.source.error(
                    node,
                    f"T.{name}() declares a shape variable: write it as its own statement "
                    f"(n = T.{name}()) and use n in T.match_buffer(a, (n,))",
                )
            if isinstance(args[0], str) and dtypes.is_float(name):
                # TVM's printer writes the special values as strings: T.float32("-inf")
                if args[0].strip().lower() not in _SPECIAL_FLOATS:
                    raise self.source.error(
                        node, f"T.{name}({args[0]!r}): a string names one of {_SPECIAL_FLOATS}"
                    )
                return const(float(args[0]), name)
            return (
                cast(args[0], name)
                if not isinstance(args[0], (int, float, bool))
                else const(args[0], name)
            )
        if name in _UNARY:
            return _UNARY[name](args[0])
        table: dict[str, Callable] = {
            "max": lambda a, b: E.binary(E.Max, a, b, "max"),
            "min": lambda a, b: E.binary(E.Min, a, b, "min"),
            "abs": intrin.abs,
            "pow": intrin.power,
            "power": intrin.power,
            "floordiv": intrin.floordiv,
            "ceildiv": lambda a, b: intrin.floordiv(a + (b - 1), b),
            "floormod": intrin.floormod,
            "truncdiv": intrin.truncdiv,
            "truncmod": intrin.truncmod,
            "if_then_else": if_then_else,
            "Select": select,
            "likely": lambda x: x,
            "Cast": lambda dtype, x: cast(x, dtype),
            "cast": lambda x, dtype: cast(x, dtype),
            "max_value": intrin.max_value,
            "min_value": intrin.min_value,
            **intrin_extra.BY_NAME,
        }
        if name == "infinity" or name == "inf":
            return const(float("inf"), args[0] if args else "float32")
        if name in table:
            return table[name](*args, **kwargs)
        raise self.source.error(node, f"T.{name} is not supported in expressions")


def is_float_dtype(dtype: str) -> bool:
    """True for float dtypes (re-exported for the statement parser)."""
    return dtypes.is_float(dtype)
