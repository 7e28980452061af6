"""Tuple reducers (``te.comm_reducer`` whose combine function takes and returns tuples).

TVM's argmax: ``fcombine(x, y)`` returns ``(Select(x[1] >= y[1], x[0], y[0]),
Select(x[1] >= y[1], x[1], y[1]))`` and ``fidentity(t0, t1)`` returns ``(-1,
min_value(t1))``; ``argmax((idx[i, k], val[i, k]), axis=k)`` in a ``te.compute`` gives
two tensors updated together.

Here each output is its own compute op (``T`` and ``T_v1``, as multi-output computes
are named) whose body is a ``Reduce`` with a :class:`TupleCombiner` as its combiner and
every source as the arguments of a ``comm_reducer_sources`` call (so substitution and
the analyses reach them). The first op is the *primary*: its loop nest updates every
output from the old values of all of them (temporaries first, then the stores); the other
ops are its *companions*: their buffers are written by the primary's nest and they have
no loops of their own. ``topo_order`` keeps the outputs adjacent, primary first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import DSLError, TaskError
from . import expr as E

#: the Call op holding a tuple reduction's sources (one argument per element)
SOURCES = "comm_reducer_sources"


@dataclass(eq=False)
class TupleGroup:
    """The ops of one tuple reduction, primary first (filled once they exist)."""

    ops: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class TupleCombiner:
    """A tuple reducer's combine and identity, and which element this output is."""

    name: str
    lhs: tuple  # the accumulated values x0, x1, ... (Vars)
    rhs: tuple  # the new values y0, y1, ... (Vars)
    results: tuple  # the combined values, over lhs and rhs
    identities: tuple
    index: int
    group: TupleGroup = field(repr=False)

    @property
    def key(self) -> tuple:
        """What two combiners must share to be equal (the Vars print by name)."""
        return (
            self.name,
            self.index,
            tuple(map(str, self.results)),
            tuple(map(str, self.identities)),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TupleCombiner) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __str__(self) -> str:
        return self.name


def tuple_combiner(body: Any) -> TupleCombiner | None:
    """The tuple combiner of a compute body (a Reduce), or None."""
    if isinstance(body, E.Reduce) and isinstance(body.combiner, TupleCombiner):
        return body.combiner
    return None


def op_combiner(op: Any) -> TupleCombiner | None:
    """The tuple combiner of a compute op's body, or None."""
    body = getattr(op, "body", None)
    return tuple_combiner(body[0]) if body else None


def is_companion(op: Any) -> bool:
    """An output of a tuple reduction other than the first (written by the first's loops)."""
    c = op_combiner(op)
    return c is not None and c.index > 0


def sources(body: E.Reduce) -> tuple:
    """Every source of a tuple reduction (the arguments of its sources call)."""
    return tuple(body.source.args)


def group_adjacent(order: list) -> list:
    """``order`` with the outputs of each tuple reduction adjacent, primary first, at the
    place of the first of them (they read the same inputs, so that place is valid)."""
    out: list = []
    placed: set[int] = set()
    for op in order:
        c = op_combiner(op)
        if c is None:
            out.append(op)
            continue
        for sib in c.group.ops:  # all of them, those not reachable from the outputs too
            if id(sib) not in placed:
                placed.add(id(sib))
                out.append(sib)
    return out


def make_single_reducer(fcombine: Any, fidentity: Any, name: str) -> Any:
    """The reducer ``te.comm_reducer`` returns for a one-value combine function that is
    not a sum, max or min (TVM's reduction tutorial: ``lambda x, y: x * y``): a tuple
    reducer of one element, lowered and scheduled as tuple reducers are."""
    inner = make_reducer(
        lambda xs, ys: (fcombine(xs[0], ys[0]),), lambda t: (fidentity(t),), name, minimum=1
    )

    def reduce(expr: Any, axis: Any = None, where: Any = None, init: Any = None) -> Any:
        if isinstance(expr, (tuple, list)):
            raise DSLError(f"{name}: this reducer combines one value: {name}(A[i, k], axis=k)")
        return inner((expr,), axis=axis, where=where, init=init)[0]

    reduce.__name__ = name
    reduce.__doc__ = f"The reducer {name!r} (``{name}(A[i, k], axis=k)``)."
    return reduce


def make_reducer(fcombine: Any, fidentity: Any, name: str, minimum: int = 2) -> Any:
    """The reducer ``te.comm_reducer`` returns for a tuple combine function."""

    def reduce(exprs: Any, axis: Any = None, where: Any = None, init: Any = None) -> tuple:
        from .intrin import _axis_tuple, any_reduce  # noqa: PLC0415 - intrin imports dsl

        if not isinstance(exprs, (tuple, list)) or len(exprs) < minimum:
            raise DSLError(
                f"{name}: a tuple reducer takes a tuple of expressions, e.g. "
                f"{name}((idx[i, k], val[i, k]), axis=k)"
            )
        if init is not None:
            raise DSLError(f"{name}(init=...) is not supported; combine it after the reduction")
        srcs = tuple(E.as_expr(x) for x in exprs)
        if any(any_reduce(s) for s in srcs):
            raise DSLError(f"{name}: a reduction cannot contain another reduction")
        dts = [s.dtype for s in srcs]
        lhs = tuple(E.Var(f"x{k}", d) for k, d in enumerate(dts))
        rhs = tuple(E.Var(f"y{k}", d) for k, d in enumerate(dts))
        results = fcombine(lhs, rhs)
        identities = fidentity(*dts)
        for what, got in (("combine function", results), ("identity function", identities)):
            if not isinstance(got, (tuple, list)) or len(got) != len(srcs):
                raise DSLError(
                    f"te.comm_reducer({name!r}): the {what} must return {len(srcs)} values "
                    f"(one per element of the tuple), got {got!r}"
                )
        results = tuple(E.as_expr(r) for r in results)
        identities = tuple(E.as_expr(v) for v in identities)
        for k, (r, v, d) in enumerate(zip(results, identities, dts)):
            if r.dtype != d or v.dtype != d:
                raise DSLError(
                    f"te.comm_reducer({name!r}): element {k} is {d}, but the combine gives "
                    f"{r.dtype} and the identity {v.dtype}; cast them (tir.const(v, t{k}))"
                )
        allowed = set(lhs) | set(rhs)
        for r in results:
            extra = [v.name for v in E.free_vars(r) if v not in allowed]
            if extra:
                raise DSLError(
                    f"te.comm_reducer({name!r}): the combine function uses {extra}; it may "
                    "use only its arguments x and y"
                )
        axes = _axis_tuple(axis)
        cond = None if where is None else E.as_bool(where, f"{name}(where=)")
        group = TupleGroup()
        out = []
        for k, d in enumerate(dts):
            comb = TupleCombiner(name, lhs, rhs, results, identities, k, group)
            src = E.Call(SOURCES, srcs, d)
            out.append(E.Reduce(comb, src, axes, cond, d))
        return tuple(out)

    reduce.__name__ = name
    reduce.__doc__ = f"The tuple reducer {name!r} (``{name}((a, b), axis=k)``)."
    return reduce


def tuple_compute(dims: tuple, axis: tuple, bodies: tuple, name: str, tag: str, attrs) -> list:
    """The ops of ``te.compute(shape, lambda ...: reducer((a, b), axis=k))``."""
    from .tensor import ComputeOp, _check_free_vars  # noqa: PLC0415 - tensor imports this

    combs = [tuple_combiner(b) for b in bodies]
    group = combs[0].group
    if any(c is None or c.group is not group for c in combs) or [c.index for c in combs] != list(
        range(len(bodies))
    ):
        raise DSLError(
            f"compute {name!r}: return the whole tuple of one tuple reducer, in order "
            "(T0, T1 = te.compute(shape, lambda i: argmax((a, b), axis=k)))"
        )
    from . import symbolic  # noqa: PLC0415 - symbolic builds on tensor, which imports this

    if any(symbolic.needs_symbolic(dims, b) for b in bodies):
        # recipes, specialized together per shape (symbolic.Specialization._tuple_group)
        outs = [
            symbolic.symbolic_compute(dims, b, axis, name if k == 0 else f"{name}_v{k}", tag, attrs)
            for k, b in enumerate(bodies)
        ]
        group.ops[:] = [t.op for t in outs]
        return outs
    ops = []
    for k, body in enumerate(bodies):
        _check_free_vars(name, body.source, axis, body.axis)
        op_name = name if k == 0 else f"{name}_v{k}"
        ops.append(ComputeOp(op_name, axis, body.axis, (body,), tag, dict(attrs or {})))
    group.ops[:] = ops
    return [op.output(0) for op in ops]


def refuse_in_search(ops: Any) -> None:
    """The auto-scheduler's refusal of tuple reductions (a TaskError naming the op)."""
    for op in ops:
        c = op_combiner(op)
        if c is not None:
            raise TaskError(
                f"op {op.name!r} is a tuple reduction ({c.name}): the "
                "auto-scheduler does not search tuple reductions and its records cannot "
                "store them. Schedule it by hand (te.create_schedule or tir.Schedule: split, "
                "reorder, fuse, parallel, unroll of its loops)"
            )
