"""Tensors and the operations that produce them: placeholder, compute, reduce_axis."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DSLError, DTypeError
from . import dtypes, expr as E
from .intrin import any_reduce
from .limits import check_expr_depth


class Operation:
    """Base of the operations that produce tensors; compared by identity."""

    name: str
    tag: str
    attrs: dict

    def output(self, index: int = 0) -> Tensor:
        """The ``index``-th output tensor (operations here have exactly one)."""
        if index != 0:
            raise DSLError(f"operation {self.name!r} has one output; asked for output {index}")
        return self._output

    @property
    def num_outputs(self) -> int:
        """Number of output tensors (always 1)."""
        return 1

    @property
    def input_tensors(self) -> list[Tensor]:
        """Tensors read by this operation, in first-use order."""
        return []

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


class Dim(int):
    """A shape dimension: a plain int that also has TVM's ``.value`` (``C.shape[0].value``)."""

    __slots__ = ()
    dtype = "int32"

    @property
    def value(self) -> int:
        """The dimension as a plain int (TVM's ``IntImm.value``)."""
        return int(self)


def _is_var_dim(d: object) -> bool:
    return isinstance(d, E.PrimExpr) and not isinstance(d, (E.IntImm, E.FloatImm))


@dataclass(frozen=True, eq=False)
class Tensor:
    """A multi-dimensional array produced by an operation; index it as ``A[i, j]``."""

    op: Operation
    value_index: int
    shape: tuple
    dtype: str

    def __post_init__(self) -> None:
        # every dimension answers TVM's `.value`, whichever op made the tensor
        # a shape variable (te.var) stays an expression: the tensor is symbolic (dsl.symbolic)
        shape = tuple(d if _is_var_dim(d) else Dim(d) for d in self.shape)
        object.__setattr__(self, "shape", shape)

    @property
    def name(self) -> str:
        """The producing operation's name."""
        return self.op.name

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def __call__(self, *indices: Any) -> E.PrimExpr:
        """``A(i, j)`` is ``A[i, j]``, as in TVM (handy in ``lambda *i: A(*i)``)."""
        return self[indices]

    def __getitem__(self, indices: Any) -> E.PrimExpr:
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) != len(self.shape):
            raise DSLError(
                f"tensor {self.name!r} has {len(self.shape)} dimensions {self.shape} "
                f"but was indexed with {len(indices)} indices"
            )
        converted = []
        for axis, (idx, extent) in enumerate(zip(indices, self.shape)):
            if isinstance(idx, slice):
                raise DSLError(
                    f"tensor {self.name!r}: slices are not supported in the DSL; "
                    "index with expressions, one per dimension"
                )
            e = E.as_expr(idx)
            if not dtypes.is_int(e.dtype):
                raise DTypeError(
                    f"tensor {self.name!r}: index {axis} is a {e.dtype} expression ({e}); "
                    "indices must be integers (use .astype('int32'))"
                )
            if isinstance(e, E.IntImm) and isinstance(extent, int) and not 0 <= e.value < extent:
                raise DSLError(
                    f"tensor {self.name!r}: constant index {e.value} is out of range for "
                    f"dimension {axis} of extent {extent}"
                )
            converted.append(e)
        return E.TensorLoad(self, tuple(converted), self.dtype)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __bool__(self) -> bool:
        return True

    # elementwise arithmetic with numpy broadcasting, as TVM's tensors have (via topi)
    def __add__(self, other):
        return broadcast_binary(self, other, lambda a, b: a + b, "T_add")

    def __radd__(self, other):
        return broadcast_binary(other, self, lambda a, b: a + b, "T_add")

    def __sub__(self, other):
        return broadcast_binary(self, other, lambda a, b: a - b, "T_subtract")

    def __rsub__(self, other):
        return broadcast_binary(other, self, lambda a, b: a - b, "T_subtract")

    def __mul__(self, other):
        return broadcast_binary(self, other, lambda a, b: a * b, "T_multiply")

    def __rmul__(self, other):
        return broadcast_binary(other, self, lambda a, b: a * b, "T_multiply")

    def __truediv__(self, other):
        return broadcast_binary(self, other, lambda a, b: a / b, "T_divide")

    def __rtruediv__(self, other):
        return broadcast_binary(other, self, lambda a, b: a / b, "T_divide")

    def __neg__(self):
        return broadcast_binary(self, 0, lambda a, b: -a, "T_negative")

    def __repr__(self) -> str:
        return f"Tensor(shape={self.shape}, op.name={self.name}, dtype={self.dtype})"


@dataclass(eq=False)
class PlaceholderOp(Operation):
    """An input tensor supplied by the caller."""

    name: str
    shape: tuple
    dtype: str
    tag: str = ""
    attrs: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._output = Tensor(self, 0, self.shape, self.dtype)

    __hash__ = Operation.__hash__
    __eq__ = Operation.__eq__

    def __repr__(self) -> str:
        return f"placeholder({self.name}, {self.shape}, {self.dtype})"


@dataclass(eq=False)
class ComputeOp(Operation):
    """A tensor defined elementwise by an expression of its axes (maybe a reduction)."""

    name: str
    axis: tuple
    reduce_axis: tuple
    body: tuple  # one expression (TVM keeps a list)
    tag: str = ""
    attrs: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        shape = tuple(int(iv.dom.extent) for iv in self.axis)
        self._output = Tensor(self, 0, shape, self.body[0].dtype)
        self._inputs = _tensors_read(self.body[0])

    __hash__ = Operation.__hash__
    __eq__ = Operation.__eq__

    @property
    def input_tensors(self) -> list[Tensor]:
        """Tensors read by the body, in first-use order."""
        return list(self._inputs)

    @property
    def shape(self) -> tuple:
        """The output shape."""
        return self._output.shape

    @property
    def dtype(self) -> str:
        """The output dtype."""
        return self._output.dtype

    def __repr__(self) -> str:
        return f"compute({self.name}, {self.shape}, {self.dtype})"


def _tensors_read(e: E.PrimExpr) -> tuple:
    seen: dict[int, Tensor] = {}
    for node in E.post_order(e):
        if isinstance(node, E.TensorLoad):
            seen.setdefault(id(node.tensor), node.tensor)
    return tuple(seen.values())


def _dimension(s: object, what: str) -> int:
    """A constant dimension as an int; integral floats pass because TVM code writes
    ``N / bn`` for a dimension it knows divides evenly."""
    if isinstance(s, E.IntImm) or (isinstance(s, (int, np.integer)) and not isinstance(s, bool)):
        return int(s)
    if isinstance(s, (float, np.floating)):
        if float(s).is_integer():
            return int(s)
        raise DSLError(
            f"{what}: dimension {s!r} is not a constant int (a fraction): divide with // "
            "(e.g. N // bn) and pick sizes that divide evenly"
        )
    raise DSLError(
        f"{what}: dimension {s!r} is not a constant int; a dimension is an int or a shape "
        "variable (n = te.var('n'))"
    )


def _check_index_range(value: int, what: str, item: str) -> None:
    """Loop indices are int32: a dimension or range beyond it would wrap around."""
    if value > dtypes.INDEX_MAX:
        raise DSLError(
            f"{what}: {item} exceeds the int32 index range (at most {dtypes.INDEX_MAX}); "
            "loop indices are int32: split the tensor into smaller dimensions"
        )


def _static_shape(shape: object, what: str) -> tuple:
    if isinstance(shape, (int, float, np.number, E.IntImm)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise DSLError(f"{what}: shape must be a tuple of ints, got {shape!r}")
    out = []
    for s in shape:
        value = _dimension(s, what)
        if value <= 0:
            raise DSLError(f"{what}: dimension {value} must be positive (shape {tuple(shape)})")
        _check_index_range(value, what, f"dimension {value} (shape {tuple(shape)})")
        out.append(value)
    return tuple(out)


def placeholder(shape: object, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor of ``shape`` and ``dtype``; dims may be shape variables (``te.var``)."""
    from . import symbolic  # noqa: PLC0415 - symbolic builds on this module

    if symbolic.has_symbolic(shape):
        return symbolic.symbolic_placeholder(tuple(shape), dtypes.canonical(dtype), name)
    op = PlaceholderOp(name, _static_shape(shape, f"placeholder {name!r}"), dtypes.canonical(dtype))
    return op.output(0)


def var(name: str = "tindex", dtype: str = "int32") -> E.Var:
    """A scalar variable: a shape variable (``te.placeholder((n,))``) or an expression's."""
    return E.Var(name, dtypes.canonical(dtype))


def reduce_axis(dom: object, name: str = "rv") -> E.IterVar:
    """A reduction axis over ``dom`` = (min, max) exclusive, like TVM: ``reduce_axis((0, K))``."""
    if isinstance(dom, E.Range):
        lo, extent = int(dom.min), int(dom.extent)
    else:
        try:
            lo, hi = dom  # type: ignore[misc]
        except (TypeError, ValueError):
            raise DSLError(
                f"reduce_axis {name!r}: dom must be (min, max) of constant ints, got {dom!r}"
            ) from None
        from . import symbolic  # noqa: PLC0415 - symbolic builds on this module

        if symbolic.has_symbolic((lo, hi)):
            return symbolic.symbolic_reduce_axis(lo, hi, name)
        # int() would silently truncate a bound like K / 2 for an odd K
        what = f"reduce_axis {name!r}"
        lo, hi = _dimension(lo, what), _dimension(hi, what)
        extent = hi - lo
    if extent <= 0:
        raise DSLError(f"reduce_axis {name!r}: empty range {dom!r}")
    for bound, item in ((extent, "extent"), (abs(lo), "min"), (abs(lo + extent - 1), "last")):
        _check_index_range(bound, f"reduce_axis {name!r}", f"the range's {item} {bound}")
    return E.IterVar(E.Var(name), E.Range.of(lo, extent), "reduce")


THREAD_TAGS = (
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "vthread",
    "vthread.x",
    "vthread.y",
    "vthread.z",
)


def thread_axis(dom: object = None, tag: str = "", name: str = "") -> E.IterVar:
    """A hardware thread index to bind a loop to: ``te.thread_axis("threadIdx.x")``."""
    if isinstance(dom, str):
        dom, tag = None, dom
    if tag not in THREAD_TAGS:
        raise DSLError(f"unknown thread tag {tag!r}; use one of {', '.join(THREAD_TAGS)}")
    rng = None
    if dom is not None:
        lo, hi = (int(x) for x in dom)  # type: ignore[union-attr]
        rng = E.Range.of(lo, hi - lo)
    return E.IterVar(E.Var(name or tag), rng, "thread", tag)


def _arg_names(fcompute: Callable, ndim: int, name: str) -> list[str]:
    try:
        params = list(inspect.signature(fcompute).parameters.values())
    except (TypeError, ValueError):
        return [f"i{k}" for k in range(ndim)]
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return [f"i{k}" for k in range(ndim)]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if not len(required) <= ndim <= len(positional):
        raise DSLError(
            f"compute {name!r}: the shape has {ndim} dimensions but the lambda takes "
            f"{len(positional)} index arguments; give one argument per dimension"
        )
    return [p.name for p in positional[:ndim]]


#: tags of the ``te.tag_scope`` blocks entered, innermost last
TAG_SCOPES: list[str] = []


class tag_scope:  # noqa: N801 - TVM's name
    """``with te.tag_scope("elemwise"):`` (or ``@te.tag_scope(tag="elemwise")`` on a
    function): every ``te.compute`` made inside, without a tag of its own, gets ``tag``."""

    def __init__(self, tag: str) -> None:
        if not isinstance(tag, str):
            raise DSLError(f"te.tag_scope(tag) takes a string, got {tag!r}")
        self.tag = tag

    def __enter__(self) -> tag_scope:
        TAG_SCOPES.append(self.tag)
        return self

    def __exit__(self, *exc: object) -> None:
        TAG_SCOPES.pop()

    def __call__(self, fn: Callable) -> Callable:
        """As a decorator: ``fn`` runs inside the scope."""

        def tagged(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        tagged.__name__ = getattr(fn, "__name__", "tagged")
        tagged.__doc__ = fn.__doc__
        return tagged


def compute(
    shape: object,
    fcompute: Callable,
    name: str = "compute",
    tag: str = "",
    attrs: dict | None = None,
) -> Tensor:
    """A tensor whose element at ``(i, j, ...)`` is ``fcompute(i, j, ...)``.

    The body may be a reduction at its top (``te.sum(A[i, k] * B[k, j], axis=k)``).
    """
    from . import symbolic  # noqa: PLC0415 - symbolic builds on this module

    if not tag and TAG_SCOPES:
        tag = TAG_SCOPES[-1]  # te.tag_scope: the tag of every compute made inside it
    if symbolic.has_symbolic(shape):
        items = shape if isinstance(shape, (tuple, list)) else (shape,)
        dims = tuple(symbolic._dim_expr(d, f"compute {name!r}") for d in items)
    else:
        dims = _static_shape(shape, f"compute {name!r}")
    names = _arg_names(fcompute, len(dims), name)
    axis = tuple(
        E.IterVar(E.Var(n), _axis_range(extent), "spatial") for n, extent in zip(names, dims)
    )
    body = fcompute(*[iv.var for iv in axis])
    if isinstance(body, (list, tuple)):
        from .tuple_reduce import tuple_combiner, tuple_compute  # noqa: PLC0415 - builds on this

        if any(tuple_combiner(b) is not None for b in body):
            return tuple_compute(dims, axis, tuple(body), name, tag, attrs)
        return _multi_output(dims, fcompute, names, name, tag, attrs, len(body))
    if isinstance(body, Tensor):
        raise DSLError(f"compute {name!r}: the lambda returned tensor {body.name!r}; index it")
    if isinstance(body, E.Reduce) and not isinstance(body.combiner, str):
        from .tuple_reduce import tuple_compute  # noqa: PLC0415 - builds on this module

        # a comm_reducer of one value that is not a sum/max/min (a product)
        return tuple_compute(dims, axis, (body,), name, tag, attrs)[0]
    body = E.as_expr(body)
    check_expr_depth(body, f"compute {name!r}")
    reduce_axes: tuple = ()
    if isinstance(body, E.Reduce):
        reduce_axes = body.axis
        inner = [body.source] + ([body.condition] if body.condition is not None else [])
        if any(any_reduce(x) for x in inner):
            raise DSLError(f"compute {name!r}: a reduction cannot contain another reduction")
    elif any_reduce(body):
        raise DSLError(
            f"compute {name!r}: te.sum/te.max/te.min must be the outermost expression of the "
            "body; compute the reduction in its own te.compute and combine it in another"
        )
    if symbolic.needs_symbolic(dims, body):
        return symbolic.symbolic_compute(dims, body, axis, name, tag, attrs)
    _check_free_vars(name, body, axis, reduce_axes)
    op = ComputeOp(name, axis, reduce_axes, (body,), tag, dict(attrs or {}))
    return op.output(0)


def _axis_range(extent: object) -> E.Range:
    if isinstance(extent, E.PrimExpr) and not isinstance(extent, E.IntImm):
        return E.Range(E.IntImm(0), extent)  # a symbolic dimension (dsl.symbolic)
    return E.Range.of(0, extent)


def _multi_output(dims, fcompute, names, name, tag, attrs, count) -> list:
    """``te.compute`` whose lambda returns a tuple: one tensor per element.

    TVM makes one operation with several outputs; here each element is its own compute
    (named ``name``, ``name_v1``, ``name_v2``...), so ``s[B0]`` and ``s[B1]`` schedule them
    separately. The values are the same; the outputs are simply not forced to share loops.
    """
    if count == 0:
        raise DSLError(f"compute {name!r}: the lambda returned an empty tuple")
    out = []
    for k in range(count):

        def element(*idx, k=k):
            return fcompute(*idx)[k]

        element.__signature__ = _signature_of(names)  # type: ignore[attr-defined]
        out.append(compute(dims, element, name if k == 0 else f"{name}_v{k}", tag, attrs))
    for t in out:  # create_schedule(B0.op) computes every output, as TVM's one op does
        t.op._siblings = tuple(x.op for x in out)
    return out


def multi_output_siblings(op: Operation) -> tuple:
    """The ops of the multi-output ``te.compute`` that made ``op`` (``B`` and ``B_v1``
    of ``B0, B1 = te.compute(shape, lambda i: (a, b))``), else ``(op,)``."""
    return getattr(op, "_siblings", (op,))


def _signature_of(names: list) -> inspect.Signature:
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter(n, kind) for n in names])


def _check_free_vars(name: str, body: E.PrimExpr, axis: Sequence, reduce_axes: Sequence) -> None:
    bound = {iv.var for iv in axis} | {iv.var for iv in reduce_axes}
    for v in E.free_vars(body):
        if v not in bound:
            raise DSLError(
                f"compute {name!r}: variable {v.name!r} is not an axis of this compute "
                "(a reduction axis used outside te.sum, or a free te.var that is no tensor's "
                "dimension)"
            )


def broadcast_binary(a: object, b: object, fn: Callable, name: str) -> Tensor:
    """``fn`` applied elementwise to tensors (or scalars) under numpy broadcasting."""
    tensors = [x for x in (a, b) if isinstance(x, Tensor)]
    shapes = [x.shape for x in tensors]
    ndim = max(len(sh) for sh in shapes)
    out = []
    for d in range(ndim):
        dims = {sh[d - ndim + len(sh)] for sh in shapes if d - ndim + len(sh) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise DSLError(
                f"{name}: shapes {' and '.join(map(str, shapes))} do not broadcast "
                f"(dimension {d} has extents {sorted(dims)})"
            )
        out.append(dims.pop() if dims else 1)

    def element(x: object, idx: tuple) -> object:
        if not isinstance(x, Tensor):
            return x
        offset = ndim - len(x.shape)
        return x[
            tuple(
                0 if ext == 1 and out[offset + k] != 1 else idx[offset + k]
                for k, ext in enumerate(x.shape)
            )
        ]

    return compute(
        tuple(out), lambda *idx: fn(element(a, idx), element(b, idx)), name=name, tag="broadcast"
    )
