"""Symbolic shapes: ``n = te.var("n"); A = te.placeholder((n,))``, as TVM's first tutorial.

A DAG whose shapes hold variables is a *recipe*: its placeholders and computes keep their
symbolic dimensions, and ``specialize(tensors, {n: 1024})`` rebuilds it with numbers (every
compute's body rewritten: shape variables become constants, reads of symbolic tensors read
their specialized copies, reduce axes over a variable get their concrete range). The static
stack (schedules, lowering, code generation) only ever sees specialized DAGs; schedules and
built functions of a symbolic DAG specialize on demand (``schedule.symbolic_schedule``,
``runtime.symbolic_module``). The auto-scheduler needs static shapes and refuses these DAGs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import DSLError
from . import expr as E
from .tensor import ComputeOp, PlaceholderOp, Tensor, _check_free_vars
from .tuple_reduce import TupleGroup, op_combiner

#: the value every shape variable takes in the probe specialization (what a schedule of a
#: symbolic DAG is checked against and what ``lower`` prints)
PROBE_VALUE = 64


#: the variables made by ``size_var`` (by id, kept alive so an id is never reused):
#: ``tvm.arith.Analyzer`` knows they are >= 0
_SIZE_VARS: dict[int, E.Var] = {}


def size_var(name: str = "size", dtype: str = "int32") -> E.Var:
    """A shape variable known to be non-negative (TVM's ``te.size_var`` / ``tir.SizeVar``)."""
    v = E.Var(name, dtype)
    _SIZE_VARS[id(v)] = v
    return v


def is_size_var(v: object) -> bool:
    """True for a variable made by ``size_var``."""
    return _SIZE_VARS.get(id(v)) is v


def is_symbolic_dim(d: object) -> bool:
    """True for a dimension that is an expression of variables (not a number)."""
    return isinstance(d, E.PrimExpr) and not isinstance(d, (E.IntImm, E.FloatImm))


def has_symbolic(shape: object) -> bool:
    """True when a shape (a dim or a tuple of dims) holds a variable."""
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    return any(is_symbolic_dim(d) for d in items)


def is_symbolic_tensor(t: object) -> bool:
    """True for a tensor of a symbolic DAG (its op is a symbolic placeholder or compute)."""
    return isinstance(t, Tensor) and isinstance(t.op, (SymbolicPlaceholderOp, SymbolicComputeOp))


def _dim_expr(d: object, what: str) -> E.PrimExpr:
    if is_symbolic_dim(d):
        if d.dtype not in ("int32", "int64"):
            raise DSLError(f"{what}: shape variable {d} is {d.dtype}; shape variables are ints")
        return d
    if isinstance(d, (int, E.IntImm)) and not isinstance(d, bool) and int(d) > 0:
        return E.IntImm(int(d))
    raise DSLError(f"{what}: dimension {d!r} must be a positive int or a te.var")


def dim_vars(dims: Sequence) -> list[E.Var]:
    """The variables in ``dims``, in first-use order."""
    out: list = []
    for d in dims:
        if isinstance(d, E.PrimExpr):
            for v in E.post_order(d):
                if isinstance(v, E.Var) and v not in out:
                    out.append(v)
    return out


class SymbolicPlaceholderOp(PlaceholderOp):
    """An input tensor whose shape holds variables."""

    def __post_init__(self) -> None:
        self._output = Tensor(self, 0, self.shape, self.dtype)


class SymbolicComputeOp(ComputeOp):
    """A compute over a symbolic shape (or reading a symbolic tensor): a recipe."""

    def __post_init__(self) -> None:
        shape = tuple(iv.dom.extent for iv in self.axis)
        self._output = Tensor(self, 0, shape, self.body[0].dtype)
        from .tensor import _tensors_read  # noqa: PLC0415 - private helper, same package

        self._inputs = _tensors_read(self.body[0])


def symbolic_placeholder(shape: tuple, dtype: str, name: str) -> Tensor:
    """``te.placeholder`` with variables among the dims."""
    dims = tuple(_dim_expr(d, f"placeholder {name!r}") for d in shape)
    return SymbolicPlaceholderOp(name, dims, dtype).output(0)


def symbolic_reduce_axis(lo: object, hi: object, name: str) -> E.IterVar:
    """``te.reduce_axis((lo, hi))`` where a bound is an expression of shape variables."""
    lo_e = E.as_expr(lo)
    extent = E.as_expr(hi) if isinstance(lo_e, E.IntImm) and lo_e.value == 0 else hi - lo
    return E.IterVar(E.Var(name), E.Range(lo_e, extent), "reduce")


def symbolic_compute(
    dims: tuple, body: Any, axis: tuple, name: str, tag: str, attrs: dict | None
) -> Tensor:
    """The op of a compute whose shape or body is symbolic (``body`` already built)."""
    reduce_axes = body.axis if isinstance(body, E.Reduce) else ()
    known = set(dim_vars(dims))
    for iv in reduce_axes:
        known |= set(dim_vars((iv.dom.min, iv.dom.extent)))
    known |= set(shape_vars(_tensors_in(body)))  # any variable upstream is bound at a call
    bound = {iv.var for iv in axis} | {iv.var for iv in reduce_axes} | known
    for v in E.free_vars(body):
        if v not in bound:
            raise DSLError(
                f"compute {name!r}: variable {v.name!r} is not an axis of this compute nor a "
                "shape variable of the tensors it reads (a reduction axis used outside te.sum, "
                "or a free te.var)"
            )
    op = SymbolicComputeOp(name, axis, reduce_axes, (body,), tag, dict(attrs or {}))
    return op.output(0)


def _tensors_in(e: E.PrimExpr) -> list:
    return [n.tensor for n in E.post_order(e) if isinstance(n, E.TensorLoad)]


def needs_symbolic(dims: tuple, body: E.PrimExpr) -> bool:
    """Whether a compute must be a recipe: symbolic dims, symbolic inputs or reduce ranges."""
    if has_symbolic(dims):
        return True
    if any(is_symbolic_tensor(t) for t in _tensors_in(body)):
        return True
    if isinstance(body, E.Reduce):
        return any(has_symbolic((iv.dom.min, iv.dom.extent)) for iv in body.axis)
    return False


# -- specialization ---------------------------------------------------------------------


def evaluate_dim(d: object, binding: dict) -> int:
    """The value of dimension ``d`` under ``binding`` (Var -> int)."""
    if not isinstance(d, E.PrimExpr):
        return int(d)
    e = _fold(E.substitute(d, {v: E.IntImm(int(x)) for v, x in binding.items()}))
    if not isinstance(e, E.IntImm):
        names = ", ".join(v.name for v in dim_vars((d,)) if v not in binding)
        raise DSLError(f"shape {d} needs a value for the shape variable(s) {names}")
    return e.value


_FOLD: dict[type, Callable[[int, int], int]] = {
    E.Add: lambda a, b: a + b,
    E.Sub: lambda a, b: a - b,
    E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: a // b,
    E.FloorMod: lambda a, b: a % b,
    E.Max: max,
    E.Min: min,
}


def _fold(e: E.PrimExpr) -> E.PrimExpr:
    fn = _FOLD.get(type(e))
    if fn is None:
        return e
    a, b = _fold(e.a), _fold(e.b)
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return E.IntImm(int(fn(a.value, b.value)))
    return e


class Specialization:
    """One concrete copy of a symbolic DAG: ``tensor(t)`` maps any tensor of it."""

    def __init__(self, binding: dict) -> None:
        self.binding = {v: int(x) for v, x in binding.items()}
        self._consts = {v: E.IntImm(x) for v, x in self.binding.items()}
        self._tensors: dict[int, Tensor] = {}
        self._iters: dict[int, E.IterVar] = {}

    def tensor(self, t: Tensor) -> Tensor:
        """The concrete tensor standing for ``t`` (``t`` itself when it is static)."""
        if not is_symbolic_tensor(t):
            return t
        hit = self._tensors.get(id(t))
        if hit is None:
            hit = self._tensors[id(t)] = self._make(t)
        return hit

    def dim(self, d: object) -> int:
        """A dimension's value here."""
        return evaluate_dim(d, self.binding)

    def _iter(self, iv: E.IterVar) -> E.IterVar:
        if iv.dom is None or not has_symbolic((iv.dom.min, iv.dom.extent)):
            return iv
        hit = self._iters.get(id(iv))
        if hit is None:
            lo, ext = self.dim(iv.dom.min), self.dim(iv.dom.extent)
            if ext <= 0:
                raise DSLError(f"axis {iv.var.name!r}: extent {iv.dom.extent} = {ext} is empty")
            hit = self._iters[id(iv)] = E.IterVar(iv.var, E.Range.of(lo, ext), iv.kind)
        return hit

    def _make(self, t: Tensor) -> Tensor:
        op = t.op
        if isinstance(op, SymbolicPlaceholderOp):
            shape = tuple(self._positive(d, op.name) for d in op.shape)
            return PlaceholderOp(op.name, shape, op.dtype, op.tag, dict(op.attrs)).output(0)
        if op_combiner(op) is not None:
            return self._tuple_group(t)
        if hasattr(op, "specialized_group"):  # a te.scan (dsl.scan): all its states at once
            for old, new in zip(op.specialized_group(self), op.group_outputs()):
                self._tensors[id(new)] = old
            return self._tensors[id(t)]
        axis = tuple(self._iter(iv) for iv in op.axis)
        for iv in axis:
            if int(iv.dom.extent) <= 0:
                raise DSLError(f"compute {op.name!r}: dimension {iv.dom.extent} is not positive")
        body = self._rewrite(op.body[0])
        reduce_axes = body.axis if isinstance(body, E.Reduce) else ()
        _check_free_vars(op.name, body, axis, reduce_axes)
        new = ComputeOp(op.name, axis, reduce_axes, (body,), op.tag, dict(op.attrs))
        return new.output(0)

    def _tuple_group(self, t: Tensor) -> Tensor:
        """``t`` of a tuple reduction: every output of its group specialized at once, as
        one new group (the primary's loops write all of them)."""
        group = TupleGroup()
        new_ops = []
        for op in op_combiner(t.op).group.ops:
            axis = tuple(self._iter(iv) for iv in op.axis)
            body = self._rewrite(op.body[0])
            body = E.Reduce(
                dataclasses.replace(body.combiner, group=group),
                body.source,
                body.axis,
                body.condition,
                body.dtype,
            )
            _check_free_vars(op.name, body, axis, body.axis)
            new = ComputeOp(op.name, axis, body.axis, (body,), op.tag, dict(op.attrs))
            self._tensors[id(op.output(0))] = new.output(0)
            new_ops.append(new)
        group.ops[:] = new_ops
        return self._tensors[id(t)]

    def _positive(self, d: object, name: str) -> int:
        value = self.dim(d)
        if value <= 0:
            raise DSLError(f"tensor {name!r}: dimension {d} = {value} must be positive")
        return value

    def _rewrite(self, e: E.PrimExpr) -> E.PrimExpr:
        memo: dict[int, E.PrimExpr] = {}

        def visit(node: E.PrimExpr) -> E.PrimExpr:
            if isinstance(node, E.Var):
                return self._consts.get(node, node)
            hit = memo.get(id(node))
            if hit is not None:
                return hit
            if isinstance(node, E.TensorLoad):
                idx = tuple(visit(i) for i in node.indices)
                out: E.PrimExpr = E.TensorLoad(self.tensor(node.tensor), idx, node.dtype)
            elif isinstance(node, E.Reduce):
                cond = visit(node.condition) if node.condition is not None else None
                axes = tuple(self._iter(iv) for iv in node.axis)
                out = E.Reduce(node.combiner, visit(node.source), axes, cond, node.dtype)
            else:
                out = E.map_children(node, visit)
            memo[id(node)] = out
            return out

        return visit(e)


def symbolic_ops(tensors: Sequence[Tensor]) -> list:
    """The symbolic ops reachable from ``tensors``, producers first."""
    order: list = []
    seen: set = set()

    def walk(t: Tensor) -> None:
        if id(t.op) in seen:
            return
        seen.add(id(t.op))
        for x in t.op.input_tensors:
            walk(x)
        order.append(t.op)

    for t in tensors:
        walk(t)
    return [op for op in order if isinstance(op, (SymbolicPlaceholderOp, SymbolicComputeOp))]


def shape_vars(tensors: Sequence[Tensor]) -> list[E.Var]:
    """Every shape variable of the DAG behind ``tensors``, in first-use order."""
    dims: list = []
    for op in symbolic_ops(tensors):
        dims.extend(op.shape)
        for iv in getattr(op, "reduce_axis", ()):
            dims.extend((iv.dom.min, iv.dom.extent))
    return dim_vars(dims)


def specialize(tensors: Sequence[Tensor], binding: dict) -> tuple[list[Tensor], Specialization]:
    """Concrete copies of ``tensors`` with every shape variable bound (Var -> int)."""
    spec = Specialization(binding)
    return [spec.tensor(t) for t in tensors], spec


def probe_binding(tensors: Sequence[Tensor]) -> dict:
    """The probe specialization's binding: every shape variable = ``PROBE_VALUE``."""
    return {v: PROBE_VALUE for v in shape_vars(tensors)}
