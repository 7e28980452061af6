"""``with T.block("name"):``: iteration variables, init, predicate -> a Block of loop IR."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..dsl import expr as E
from ..dsl.construct import logical_and
from ..ir import nodes as N
from .deps import spatial_accumulation
from .stmts import _AXIS_KINDS, BlockInfo, IterVarInfo

if TYPE_CHECKING:
    from .stmts import FunctionParser

#: block-level declarations that describe the block but do not run
_DESCRIPTIVE = ("reads", "writes", "block_attr")


def _domain(parser: FunctionParser, dom: object, node: ast.AST) -> tuple[int, int]:
    if isinstance(dom, E.IntImm):
        dom = dom.value
    if isinstance(dom, int):
        return 0, dom
    if isinstance(dom, (tuple, list)) and len(dom) == 2:
        lo, hi = (d.value if isinstance(d, E.IntImm) else d for d in dom)
        if isinstance(lo, int) and isinstance(hi, int):
            return lo, hi - lo
    raise parser.source.error(node, f"an axis domain must be a number or (min, max), got {dom!r}")


def _loop_extent(parser: FunctionParser, var: E.Var, node: ast.AST) -> tuple[int, int]:
    for loop in reversed(parser.loop_stack):
        if loop.loop_var is var:
            lo, ext = loop.min, loop.extent
            if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm):
                return lo.value, ext.value
    raise parser.source.error(
        node, f"T.axis.remap binds {var.name!r}, which is not an enclosing loop variable"
    )


def _axes(parser: FunctionParser, node: ast.Assign) -> list[IterVarInfo] | None:
    call = node.value
    if not isinstance(call, ast.Call):
        return None
    kind = parser._is_t_axis(call.func)
    if kind is None:
        return None
    targets = node.targets[0].elts if isinstance(node.targets[0], ast.Tuple) else node.targets
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    if kind == "remap":
        kinds = parser.value(call.args[0])
        bindings = call.args[1].elts if isinstance(call.args[1], (ast.List, ast.Tuple)) else []
        if not (len(kinds) == len(bindings) == len(names)):
            raise parser.source.error(
                call,
                f"T.axis.remap({kinds!r}, ...) binds {len(bindings)} loops to {len(names)} names",
            )
        out = []
        for name, k, b in zip(names, kinds, bindings):
            if k not in "SR":
                raise parser.source.error(
                    call, f"axis kind {k!r}: use 'S' (spatial) or 'R' (reduce)"
                )
            value = parser.value(b)
            if not isinstance(value, E.Var):
                raise parser.source.error(b, "T.axis.remap binds loop variables")
            lo, ext = _loop_extent(parser, value, b)
            out.append(IterVarInfo(E.Var(name), k, lo, ext, value, ""))
        return out
    if kind not in _AXIS_KINDS:
        raise parser.source.error(
            call, f"T.axis.{kind} is not supported; use spatial, reduce or remap"
        )
    if len(names) != 1 or len(call.args) != 2:
        raise parser.source.error(call, f"write v = T.axis.{kind}(extent, binding)")
    lo, ext = _domain(parser, parser.value(call.args[0]), call)
    binding = parser.expr(call.args[1])
    return [IterVarInfo(E.Var(names[0]), _AXIS_KINDS[kind], lo, ext, binding, kind)]


def _check_axes(parser: FunctionParser, node: ast.With, name: str, iter_vars: list) -> None:
    """TVM's block bindings map loops to axes one-to-one: two axes bound to the same loop
    expression would only visit the diagonal of their domain."""
    seen: list[IterVarInfo] = []
    for iv in iter_vars:
        used = {lp.loop_var for lp in parser.loop_stack} & E.free_vars(iv.binding)
        for other in seen:
            if used and E.structural_equal(other.binding, iv.binding):
                raise parser.source.error(
                    node,
                    f"block {name!r}: {iv.binding} is bound to both {other.var.name} and "
                    f"{iv.var.name}; block axes map the loops one-to-one (each axis its own "
                    f'loop), e.g. T.axis.remap("SS", [i, j]) over for i, j in T.grid(...)',
                )
        seen.append(iv)


def _check_spatial(parser: FunctionParser, node: ast.With, name: str, info: list, body) -> None:
    found = spatial_accumulation(info, body)
    if found is not None:
        iv, access = found
        raise parser.source.error(
            node,
            f"block {name!r}: axis {iv.var.name} is declared spatial, but {access.text()} is "
            f"written at an index that does not use {iv.var.name} and read back, so its "
            f"iterations accumulate into one element: declare {iv.var.name} as a reduction "
            f'axis ({iv.var.name} = T.axis.reduce({iv.extent}, {iv.binding}), or "R" in '
            "T.axis.remap)",
        )


def parse_block(parser: FunctionParser, node: ast.With, call: ast.Call) -> N.Stmt:
    """The statement of one ``with T.block(...)``."""
    name = parser.value(call.args[0]) if call.args else "block"
    if not isinstance(name, str):
        raise parser.source.error(call, "T.block takes the block's name, e.g. T.block('C')")
    parser.scopes.append({})
    try:
        iter_vars: list[IterVarInfo] = []
        where = None
        init = None
        body_nodes = []
        for stmt in node.body:
            axes = _axes(parser, stmt) if isinstance(stmt, ast.Assign) else None
            if axes is not None:
                for iv in axes:
                    parser.bind(iv.var.name, iv.var)
                iter_vars.extend(axes)
                continue
            if isinstance(stmt, ast.Expr):
                inner = parser.t_call_name(stmt.value)
                if inner in _DESCRIPTIVE:
                    continue
                if inner == "where":
                    cond = parser.expr(stmt.value.args[0])
                    where = cond if where is None else logical_and(where, cond)
                    continue
            if (
                isinstance(stmt, ast.With)
                and parser.t_call_name(stmt.items[0].context_expr) == "init"
            ):
                init = parser._scoped(stmt.body)
                continue
            body_nodes.append(stmt)
        body = parser.stmts(body_nodes)
    finally:
        parser.scopes.pop()
    if name == "root" and not iter_vars:
        return body
    _check_axes(parser, node, name, iter_vars)
    _check_spatial(parser, node, name, iter_vars, body)
    inner = body
    reduce_vars = [iv for iv in iter_vars if iv.kind == "R"]
    if init is not None:
        if not reduce_vars:
            raise parser.source.error(node, f"block {name!r}: T.init() needs a reduction axis")
        first = None
        for iv in reduce_vars:
            term = iv.var == iv.min
            first = term if first is None else logical_and(first, term)
        inner = N.seq(N.IfThenElse(first, init), body)
    if where is not None:
        inner = N.IfThenElse(where, inner)
    for iv in reversed(iter_vars):
        inner = N.LetStmt(iv.var, iv.binding, inner)
    axes = tuple(N.BlockAxis(iv.kind, iv.min, iv.extent) for iv in iter_vars)
    block = N.Block(name, inner, axes=axes, has_where=where is not None, has_init=init is not None)
    parser.blocks.append(BlockInfo(name, iter_vars, init, body, where, block))
    return block
