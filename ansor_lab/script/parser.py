"""The entry points: a decorated function, a decorated class, or source text -> PrimFunc(s)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from typing import Any

from ..errors import AnsorLabError, ScriptError
from ..ir.nodes import IRModule, PrimFunc
from .source import ScriptSource
from .stmts import FunctionParser
from .to_dag import NotPlain, ScriptOnlySource, to_tensors


def _env_of(func: Any) -> dict:
    env = dict(getattr(func, "__globals__", {}))
    try:
        env.update(inspect.getclosurevars(func).nonlocals)
    except (TypeError, ValueError):
        pass
    return env


def _function_def(tree: ast.Module, source: ScriptSource) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return node
    raise source.error(tree, "no function definition found")


def build_prim_func(
    fn: ast.FunctionDef, source: ScriptSource, env: dict, shapes: dict | None = None
) -> PrimFunc:
    """Parse one function definition; plain programs get a schedulable source.

    ``n = T.int32()`` shape variables take the values in ``shapes`` (by name; the probe
    value otherwise), and the function is marked symbolic (``symbolic_script``).
    """
    parser = FunctionParser(source, env, fn)
    parser.shape_binding = dict(shapes or {})
    func = _build(parser, fn, source)
    if parser.shape_values and shapes is None:
        return symbolic_script(
            func, parser, lambda values: build_prim_func(fn, source, env, values)
        )
    return func


def _build(parser: FunctionParser, fn: ast.FunctionDef, source: ScriptSource) -> PrimFunc:
    params, body = parser.parse()
    attrs = dict(parser.attrs)
    name = str(attrs.pop("global_symbol", fn.name))
    attrs.pop("tir.noalias", None)
    try:
        args = to_tensors(params, body, parser.blocks)
    except NotPlain as why:
        kinds = {iv.var: iv.kind for b in parser.blocks for iv in b.iter_vars}
        attr_items = tuple(sorted(attrs.items()))
        return PrimFunc(params, body, name, attr_items, ScriptOnlySource(str(why), kinds))
    except AnsorLabError as err:
        raise source.error(fn, f"function {fn.name!r}: {err}") from None
    from ..schedule.create import create_prim_func  # noqa: PLC0415 - heavy, and above script

    func = create_prim_func(args, name=name)
    # it prints and compares as written (loop kinds, scopes, names), computes as defined
    written = PrimFunc(params, body, name)
    func = PrimFunc(
        func.params, func.body, name, func.attrs, dataclasses.replace(func.source, written=written)
    )
    return func.with_attr(attrs) if attrs else func


def parse_function(func: Any) -> PrimFunc:
    """``@T.prim_func`` on a Python function: parse its source (never run its body)."""
    if isinstance(func, PrimFunc):
        return func
    if not callable(func):
        raise ScriptError("@T.prim_func decorates a function definition")
    source = ScriptSource.of(func)
    tree = source.parse()
    return build_prim_func(_function_def(tree, source), source, _env_of(func))


def _is_decorated(node: ast.AST, name: str) -> bool:
    for dec in getattr(node, "decorator_list", ()):
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute) and target.attr == name:
            return True
        if isinstance(target, ast.Name) and target.id == name:
            return True
    return False


def from_source(text: str, *, filename: str = "<script>") -> PrimFunc | IRModule:
    """Parse TVMScript text: a ``@T.prim_func`` function or an ``@I.ir_module`` class.

    The text may carry its imports (``from tvm.script import tir as T``); they are not run.
    """
    if not isinstance(text, str):
        raise ScriptError(f"from_source takes the script's text, got {type(text).__name__}")
    source = ScriptSource(text, filename)
    tree = source.parse()
    env: dict = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and _is_decorated(node, "ir_module"):
            funcs = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    funcs[item.name] = build_prim_func(item, source, env)
            if not funcs:
                raise source.error(node, "the module class has no @T.prim_func methods")
            return IRModule(funcs)
        if isinstance(node, ast.FunctionDef):
            return build_prim_func(node, source, env)
    raise ScriptError(f"{filename}: no @T.prim_func function or @I.ir_module class in the text")


def symbolic_script(func: PrimFunc, parser: FunctionParser, reparse: Any) -> PrimFunc:
    """A parsed function with ``T.int32()`` shape variables: the probe parse, marked so
    that ``tvm.build`` re-parses it per call's shapes and ``tir.Schedule`` replays onto that."""
    from ..dsl import expr as E  # noqa: PLC0415 - only symbolic scripts
    from ..dsl.tensor import placeholder  # noqa: PLC0415
    from ..schedule.symbolic_schedule import SymbolicPrimFuncSource  # noqa: PLC0415

    variables = {name: E.Var(name) for name in parser.shape_values}
    args = []
    for buf in func.params:
        names = parser.dim_names.get(buf.name, [None] * len(buf.shape))
        dims = tuple(variables[n] if n else d for n, d in zip(names, buf.shape))
        args.append(placeholder(dims, buf.dtype, buf.name))
    old = func.source
    source = SymbolicPrimFuncSource(
        getattr(old, "args", None),
        getattr(old, "body", None),
        tuple(args),
        tuple((variables[n], v) for n, v in parser.shape_values.items()),
        reparse=lambda binding: reparse({v.name: x for v, x in binding.items()}),
    )
    return PrimFunc(func.params, func.body, func.name, func.attrs, source)
