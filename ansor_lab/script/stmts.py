"""TVMScript statements -> loop IR: loops, blocks, stores, allocations, lets, ifs.

A block becomes ``Block(name, LetStmt(vi, binding, ...))`` whose init runs where every
reduction variable is at the start of its domain (TVM's ``T.init()`` semantics); what the
block declared (its iteration variables with their kinds, init, predicate) is kept in a
``BlockInfo`` so ``to_dag`` can turn plain programs back into compute definitions.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..dsl import expr as E
from ..dsl.construct import cast, const
from ..errors import ScriptError
from ..ir import gpu, nodes as N
from .accesses import collect
from .deps import loop_dependence
from .exprs import DTYPE_NAMES, ExprParser
from .loops import LoopRange, loop_range
from .source import ScriptSource
from .stores import store_value

_LOOP_KINDS = {
    "serial": "serial",
    "parallel": "parallel",
    "vectorized": "vectorized",
    "unroll": "unrolled",
    "thread_binding": "thread_binding",
}
_AXIS_KINDS = {"spatial": "S", "S": "S", "reduce": "R", "R": "R", "scan": "S", "opaque": "S"}


@dataclass
class IterVarInfo:
    """One block iteration variable: kind "S" or "R", domain and its binding."""

    var: E.Var
    kind: str
    min: int
    extent: int
    binding: E.PrimExpr
    declared: str = ""  # how T.axis named it ("spatial", "scan", "opaque"...; "" for remap)


@dataclass
class BlockInfo:
    """What a ``with T.block(name):`` declared."""

    name: str
    iter_vars: list
    init: N.Stmt | None
    body: N.Stmt
    where: E.PrimExpr | None
    node: N.Block | None = None


@dataclass
class _Alias:
    """``T.Buffer(shape, data=A.data)``: another shape over a parameter's storage."""

    base: N.Buffer
    shape: tuple
    dtype: str
    name: str


@dataclass(frozen=True)
class _Loop:
    """An enclosing loop while its body is parsed (``T.axis.remap`` reads its domain)."""

    loop_var: E.Var
    min: E.PrimExpr
    extent: E.PrimExpr


class FunctionParser(ExprParser):
    """Parses one ``@T.prim_func`` function definition."""

    def __init__(self, source: ScriptSource, env: dict, fn: ast.FunctionDef) -> None:
        self.source = source
        self.env = env
        self.fn = fn
        self.scopes: list[dict] = [{}]
        self.blocks: list[BlockInfo] = []
        self.attrs: dict = {}
        self.params: list = []
        self.handles: dict[str, int] = {}
        self.pending_data: dict[str, tuple] = {}
        self.loop_stack: list[_Loop] = []
        #: vectorized and parallel loops (with their statements), checked once parsed
        self.concurrent_loops: list[tuple] = []
        #: ``n = T.int32()`` shape variables: name -> the value this parse gives it (the
        #: probe's, or a call's when the function is re-parsed for that call's shapes)
        self.shape_values: dict[str, int] = {}
        self.shape_binding: dict[str, int] = {}
        #: match_buffer'd buffer name -> per dimension, the shape variable's name or None
        self.dim_names: dict[str, list] = {}

    # -- names ---------------------------------------------------------------------
    def bind(self, name: str, value: Any) -> None:
        self.scopes[-1][name] = value

    def lookup(self, name: str, node: ast.AST) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.env and isinstance(self.env[name], (int, float, bool, str)):
            return self.env[name]
        if name in ("inf", "nan"):  # how our printer writes T.float32(-inf)
            return float(name)
        raise self.source.error(node, f"name {name!r} is not defined in this function")

    def is_namespace(self, node: ast.AST, *names: str) -> bool:
        if isinstance(node, ast.Name):
            value = self.env.get(node.id)
            if value is not None:
                return getattr(value, "__name__", "").startswith("ansor_lab.script")
            return node.id in names
        return False

    def _is_t_axis(self, func: ast.AST) -> str | None:
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Attribute)
            and func.value.attr == "axis"
            and self.is_namespace(func.value.value, "T", "tir")
        ):
            return func.attr
        return None

    # -- buffers -------------------------------------------------------------------
    def buffer_decl(self, node: ast.Call, name: str, *, scope: str = "global") -> N.Buffer:
        args = [self.value(a) for a in node.args]
        kwargs = {k.arg: self.value(k.value) for k in node.keywords if k.arg}
        shape = kwargs.pop("shape", args[0] if args else None)
        dtype = kwargs.pop("dtype", args[1] if len(args) > 1 else "float32")
        scope = kwargs.pop("scope", args[2] if len(args) > 2 else scope)
        strides = tuple(int(getattr(x, "value", x)) for x in kwargs.pop("strides", ()) or ())
        if isinstance(shape, (int, E.IntImm)):
            shape = (shape,)
        dims = []
        for d in shape or ():
            if isinstance(d, E.IntImm):
                d = d.value
            if not isinstance(d, int):
                raise self.source.error(
                    node,
                    f"buffer {name!r}: shape {shape} must be numbers or shape variables "
                    "declared as n = T.int32() and used alone as a dimension",
                )
            dims.append(d)
        if not dims:
            raise self.source.error(node, f"buffer {name!r} needs a shape, e.g. (128, 128)")
        try:
            return N.Buffer(name, tuple(dims), str(dtype), str(scope), strides)
        except Exception as err:
            raise self.source.error(node, str(err)) from None

    def _linear(self, alias: _Alias, indices: tuple) -> tuple:
        offset: Any = 0
        stride = 1
        for idx, extent in reversed(list(zip(indices, alias.shape))):
            offset = offset + idx * stride
            stride *= extent
        out = []
        for extent in reversed(alias.base.shape):
            out.append(offset % extent if extent > 1 else const(0))
            offset = offset // extent
        return tuple(reversed(out))

    def load(self, buffer: Any, indices: tuple, node: ast.AST) -> E.PrimExpr:
        if isinstance(buffer, _Alias):
            return super().load(buffer.base, self._linear(buffer, indices), node)
        return super().load(buffer, indices, node)

    def _e_Subscript(self, node: ast.Subscript) -> Any:
        target = self.value(node.value)
        if isinstance(target, _Alias):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return self.load(target, tuple(self.expr(x) for x in items), node)
        return super()._e_Subscript(node)

    def _e_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr == "data" and isinstance(node.value, ast.Name):
            base = self.lookup(node.value.id, node)
            if isinstance(base, N.Buffer):
                return ("data", base)
        return super()._e_Attribute(node)

    # -- the function --------------------------------------------------------------
    def parse(self) -> tuple[tuple, N.Stmt]:
        """The parameters and the body of the function."""
        for arg in self.fn.args.args:
            self._param(arg)
        body = self.stmts(self.fn.body)
        params = []
        for p in self.params:
            if isinstance(p, str):
                raise self.source.error(
                    self.fn, f"parameter {p!r} is a T.handle with no T.match_buffer"
                )
            params.append(p)
        self._check_independent(body)
        return tuple(params), body

    def _param(self, arg: ast.arg) -> None:
        ann = arg.annotation
        if ann is None:
            raise self.source.error(
                arg, f"parameter {arg.arg!r} needs a type, e.g. T.Buffer((128,), 'float32')"
            )
        if isinstance(ann, ast.Subscript) and self.t_call_name(ann.value) == "Buffer":
            ann = _subscript_as_call(ann)  # older TVMScript: T.Buffer[(128,), "float32"]
        if isinstance(ann, ast.Call) and self.t_call_name(ann) == "Buffer":
            buf = self.buffer_decl(ann, arg.arg)
            self.params.append(buf)
            self.bind(arg.arg, buf)
            return
        if isinstance(ann, ast.Attribute) and self.t_call_name(ann) == "handle":
            self.handles[arg.arg] = len(self.params)
            self.params.append(arg.arg)
            self.bind(arg.arg, ("handle", arg.arg))
            return
        if isinstance(ann, ast.Attribute) and self.t_call_name(ann) in DTYPE_NAMES:
            raise self.source.error(
                arg,
                f"scalar parameter {arg.arg!r}: functions take buffers only here; pass "
                "a one-element buffer, or make the value a constant",
            )
        raise self.source.error(arg, f"parameter {arg.arg!r}: unsupported type; use T.Buffer(...)")

    # -- statements ----------------------------------------------------------------
    def stmts(self, body: list) -> N.Stmt:
        """A statement list; allocations and lets scope over the statements after them."""
        out: list[N.Stmt] = []
        body = [part for node in body for part in _unpack_tuple_assign(node)]
        for k, node in enumerate(body):
            wrapped = self._scoping(node)
            if wrapped is not None:
                kind, value = wrapped
                rest = self.stmts(body[k + 1 :])
                if kind == "alloc":
                    out.append(N.Allocate(value, rest))
                elif kind == "let":
                    var, expr = value
                    out.append(N.LetStmt(var, expr, rest))
                else:
                    out.append(rest)
                return N.seq(*out)
            stmt = self.stmt(node)
            if stmt is not None:
                out.append(stmt)
        return N.seq(*out) if out else N.NOP

    def _scoping(self, node: ast.stmt) -> tuple | None:
        """Statements that bind a name for what follows: buffers and lets."""
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and isinstance(node.value, ast.Call):
                name = self.t_call_name(node.value)
                if name in ("alloc_buffer", "decl_buffer"):
                    buf = self.buffer_decl(node.value, target.id)
                    self.bind(target.id, buf)
                    return ("alloc", buf)
                if name == "match_buffer":
                    return self._match_buffer(node.value, target.id)
                if name in DTYPE_NAMES and not node.value.args and not node.value.keywords:
                    return self._shape_var(node.value, target.id, name)
                if name == "allocate":
                    args = [self.value(a) for a in node.value.args]
                    self.pending_data[target.id] = tuple(args)
                    self.bind(target.id, ("data", target.id))
                    return ("none", None)
                if name == "Buffer":
                    return self._buffer_view(node.value, target.id)
            if isinstance(target, ast.Name):  # ``x = expr``: a let over what follows
                value = self.expr(node.value)
                var = E.Var(target.id, value.dtype)
                self.bind(target.id, var)
                return ("let", (var, value))
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            value = self.expr(node.value)
            var = E.Var(node.target.id, value.dtype)
            self.bind(node.target.id, var)
            return ("let", (var, value))
        return None

    def _shape_var(self, call: ast.Call, name: str, dtype: str) -> tuple:
        """``n = T.int32()``: a shape variable, a number in this parse (see dim_names)."""
        if dtype not in ("int32", "int64"):
            raise self.source.error(call, f"shape variable {name!r} must be T.int32() or T.int64()")
        from ..dsl.symbolic import PROBE_VALUE  # noqa: PLC0415 - only symbolic scripts need it

        value = int(self.shape_binding.get(name, PROBE_VALUE))
        self.shape_values[name] = value
        self.bind(name, value)
        return ("none", None)

    def _match_buffer(self, call: ast.Call, name: str) -> tuple:
        handle = call.args[0] if call.args else None
        if not (isinstance(handle, ast.Name) and handle.id in self.handles):
            raise self.source.error(
                call, "T.match_buffer's first argument must be a T.handle parameter"
            )
        sub = ast.Call(func=call.func, args=call.args[1:], keywords=call.keywords)
        ast.copy_location(sub, call)
        shape = call.args[1] if len(call.args) > 1 else None
        dims = shape.elts if isinstance(shape, (ast.Tuple, ast.List)) else [shape]
        self.dim_names[name] = [
            d.id if isinstance(d, ast.Name) and d.id in self.shape_values else None for d in dims
        ]
        buf = self.buffer_decl(sub, name)
        self.params[self.handles[handle.id]] = buf
        self.bind(name, buf)
        return ("none", None)

    def _buffer_view(self, call: ast.Call, name: str) -> tuple:
        data = next((k.value for k in call.keywords if k.arg == "data"), None)
        if data is None:
            raise self.source.error(call, "T.Buffer(...) in a body needs data=; use T.alloc_buffer")
        ref = self.value(data)
        kw = [k for k in call.keywords if k.arg != "data"]
        sub = ast.copy_location(ast.Call(func=call.func, args=call.args, keywords=kw), call)
        if isinstance(ref, tuple) and ref[0] == "data" and isinstance(ref[1], N.Buffer):
            shape_buf = self.buffer_decl(sub, name)
            self.bind(name, _Alias(ref[1], shape_buf.shape, shape_buf.dtype, name))
            return ("none", None)
        if isinstance(ref, tuple) and ref[0] == "data" and ref[1] in self.pending_data:
            args = self.pending_data.pop(ref[1])
            scope = args[2] if len(args) > 2 else "global"
            buf = self.buffer_decl(sub, name, scope=scope)
            buf = N.Buffer(name, buf.shape, buf.dtype, scope)
            self.bind(name, buf)
            self.bind(ref[1], ("data", buf))
            return ("alloc", buf)
        raise self.source.error(call, "data= must be a T.allocate result or a buffer's .data")

    def stmt(self, node: ast.stmt) -> N.Stmt | None:
        method = getattr(self, f"_s_{type(node).__name__}", None)
        if method is None:
            raise self.source.error(node, f"{type(node).__name__} statements are not TVMScript")
        return method(node)

    def _s_Pass(self, node: ast.Pass) -> None:
        return None

    def _s_Expr(self, node: ast.Expr) -> N.Stmt | None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # a docstring
        name = self.t_call_name(node.value)
        if name == "func_attr":
            self.attrs.update(self.value(node.value.args[0]))
            return None
        if name == "tvm_storage_sync":
            return gpu.barrier()
        if name == "evaluate":
            return N.Evaluate(self.expr(node.value.args[0]))
        if name in ("reads", "writes", "block_attr", "where"):
            raise self.source.error(node, f"T.{name} belongs at the top of a T.block body")
        if isinstance(node.value, ast.Call):
            return N.Evaluate(self.expr(node.value))
        raise self.source.error(node, "an expression statement does nothing; remove it")

    def _store(
        self, target: ast.Subscript, value: Any, node: ast.AST, value_node: ast.AST
    ) -> N.Stmt:
        if not isinstance(value, (bool, int, float, E.ExprOp)):
            raise self.source.error(
                value_node, f"expected a scalar expression, got {type(value).__name__}"
            )
        buf = self.value(target.value)
        items = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        indices = tuple(cast(self.expr(x), "int32") for x in items)
        if isinstance(buf, _Alias):
            indices, buf = self._linear(buf, indices), buf.base
        if not isinstance(buf, N.Buffer):
            raise self.source.error(target, "only buffers can be stored to")
        if len(indices) != len(buf.shape):
            raise self.source.error(
                target,
                f"buffer {buf.name!r} has {len(buf.shape)} dimensions, stored with {len(indices)}",
            )
        try:
            value = store_value(target, value_node, buf.dtype, value)
        except ScriptError as err:
            raise self.source.error(node, err.msg) from None
        return N.BufferStore(buf, value, indices)

    def _s_Assign(self, node: ast.Assign) -> N.Stmt:
        target = node.targets[0]
        if len(node.targets) != 1 or not isinstance(target, ast.Subscript):
            raise self.source.error(node, "assign to a buffer element, e.g. C[i, j] = ...")
        return self._store(target, self.value(node.value), node, node.value)

    def _s_AugAssign(self, node: ast.AugAssign) -> N.Stmt:
        if not isinstance(node.target, ast.Subscript):
            raise self.source.error(node, "augmented assignment works on buffer elements")
        load = ast.copy_location(
            ast.Subscript(value=node.target.value, slice=node.target.slice, ctx=ast.Load()), node
        )
        # B[i] += x is B[i] = B[i] + x: the whole right-hand side must fit B's dtype
        combined = ast.copy_location(ast.BinOp(left=load, op=node.op, right=node.value), node)
        return self._store(node.target, self.value(combined), node, combined)

    def _s_If(self, node: ast.If) -> N.Stmt:
        cond = self.expr(node.test)
        then = self._scoped(node.body)
        other = self._scoped(node.orelse) if node.orelse else None
        return N.IfThenElse(cond, then, other)

    def _scoped(self, body: list) -> N.Stmt:
        self.scopes.append({})
        try:
            return self.stmts(body)
        finally:
            self.scopes.pop()

    def _s_For(self, node: ast.For) -> N.Stmt:
        call = node.iter
        if not isinstance(call, ast.Call):
            raise self.source.error(node, "loop over range(n), T.grid(...), T.serial(n)...")
        name = self.t_call_name(call)
        if name is None and isinstance(call.func, ast.Name) and call.func.id == "range":
            name = "serial"
        args = [self.value(a) for a in call.args]
        kwargs = {k.arg: self.value(k.value) for k in call.keywords if k.arg}
        if name == "grid":
            targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
            if len(targets) != len(args):
                raise self.source.error(
                    node, f"T.grid has {len(args)} extents for {len(targets)} names"
                )
            specs = [(t, LoopRange(0, a), "serial", "", ()) for t, a in zip(targets, args)]
        elif name in _LOOP_KINDS:
            annotations = kwargs.pop("annotations", None) or {}
            thread = kwargs.pop("thread", "")
            if (
                name == "thread_binding"
                and not thread
                and len(args) >= 2
                and isinstance(args[-1], str)
            ):
                thread = args.pop()
            if not isinstance(node.target, ast.Name):
                raise self.source.error(node, "one loop variable per loop")
            if name == "thread_binding" and thread not in gpu.ALL_TAGS:
                raise self.source.error(call, f"unknown thread tag {thread!r}; use {gpu.ALL_TAGS}")
            span = loop_range(self, call, node.target.id, args, kwargs)
            if name == "thread_binding" and span.step != 1:
                raise self.source.error(call, "a thread_binding loop takes no step")
            kind = _LOOP_KINDS[name]
            specs = [(node.target, span, kind, thread, tuple(sorted(annotations.items())))]
        else:
            raise self.source.error(
                call,
                "loops iterate over range, T.grid or T.serial/parallel/vectorized/unroll/"
                f"thread_binding, not {ast.unparse(call.func)}",
            )
        self.scopes.append({})
        try:
            loop_vars = []
            for target, span, _, _, _ in specs:
                var = E.Var(target.id)
                self.bind(target.id, span.value(var))
                loop_vars.append(var)
                lo, extent = E.as_expr(span.loop_min()), E.as_expr(span.extent)
                self.loop_stack.append(_Loop(var, lo, extent))
            body = self.stmts(node.body)
        finally:
            self.scopes.pop()
            del self.loop_stack[len(self.loop_stack) - len(specs) :]
        for var, (_, span, kind, tag, annotations) in reversed(list(zip(loop_vars, specs))):
            lo, extent = E.as_expr(span.loop_min()), E.as_expr(span.extent)
            body = N.For(var, lo, extent, kind, body, tag, annotations)
            if kind in ("vectorized", "parallel"):
                self.concurrent_loops.append((body, node))
        return body

    def _check_independent(self, body: N.Stmt) -> None:
        """Refuse a vectorized or parallel loop whose iterations depend on each other (once
        the whole body is known: which buffers only one loop uses decides privacy)."""
        if not self.concurrent_loops:
            return
        params = tuple(p for p in self.params if isinstance(p, N.Buffer))
        uses = Counter(id(a.buffer) for a in collect(body, keep_local=True))
        for loop, node in self.concurrent_loops:
            why = loop_dependence(loop, params, uses)
            if why is not None:
                raise self.source.error(node, why)

    def _s_With(self, node: ast.With) -> N.Stmt:
        item = node.items[0].context_expr
        name = self.t_call_name(item)
        if name == "block":
            from .blocks import parse_block  # noqa: PLC0415 - blocks imports this module

            return parse_block(self, node, item)
        if name == "init":
            raise self.source.error(node, "T.init() belongs inside a T.block, after its axes")
        raise self.source.error(node, f"with {ast.unparse(item)}: only T.block(...) is supported")


def _unpack_tuple_assign(node: ast.stmt) -> list[ast.stmt]:
    """``M, N = T.int32(), T.int32()`` as one assignment per name (TVM's printer and
    tutorials declare shape variables this way); any other statement as it is."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return [node]
    target, value = node.targets[0], node.value
    if not (
        isinstance(target, ast.Tuple)
        and isinstance(value, ast.Tuple)
        and len(target.elts) == len(value.elts)
        and all(isinstance(t, ast.Name) for t in target.elts)
    ):
        return [node]
    return [
        ast.copy_location(ast.Assign(targets=[t], value=v, lineno=node.lineno), node)
        for t, v in zip(target.elts, value.elts)
    ]


def _subscript_as_call(node: ast.Subscript) -> ast.Call:
    """``T.Buffer[(128, 128), "float32"]`` as the call ``T.Buffer((128, 128), "float32")``
    (a bare shape, ``T.Buffer[(128, 128)]``, as ``T.Buffer((128, 128))``)."""
    key = node.slice
    if isinstance(key, ast.Tuple) and key.elts and isinstance(key.elts[0], (ast.Tuple, ast.List)):
        args = list(key.elts)
    else:
        args = [key]
    return ast.copy_location(ast.Call(func=node.value, args=args, keywords=[]), node)
