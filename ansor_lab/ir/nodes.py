"""Loop-IR nodes: buffers, statements, PrimFunc and IRModule.

Scalar expressions are the DSL's (``dsl.expr``); the IR adds ``BufferLoad`` and the
vector nodes ``Ramp`` / ``Broadcast``. Every node is an immutable value with structural
equality; buffers and variables compare by identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..dsl import dtypes, expr as E
from ..dsl.printer import register_printer
from ..errors import IRError

# --------------------------------------------------------------------------------------
# Buffers and buffer expressions

SCOPES = ("global", "shared", "local")


@dataclass(frozen=True, eq=False)
class Buffer:
    """A dense row-major array: name, static shape, dtype and memory scope."""

    name: str
    shape: tuple
    dtype: str
    scope: str = "global"
    #: explicit strides in elements when padded (storage_align); () means row-major
    padded_strides: tuple = ()

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise IRError(f"buffer {self.name!r}: unknown scope {self.scope!r}; use {SCOPES}")
        if any(not isinstance(s, int) or s <= 0 for s in self.shape):
            raise IRError(f"buffer {self.name!r}: shape {self.shape} must be positive ints")
        if self.padded_strides and len(self.padded_strides) != len(self.shape):
            raise IRError(f"buffer {self.name!r}: strides {self.padded_strides} do not fit shape")

    @property
    def strides(self) -> tuple:
        """Strides in elements (row-major unless padded)."""
        if self.padded_strides:
            return self.padded_strides
        out = []
        acc = 1
        for extent in reversed(self.shape):
            out.append(acc)
            acc *= extent
        return tuple(reversed(out))

    @property
    def size(self) -> int:
        """Number of elements of storage (padding included)."""
        if self.padded_strides and self.shape:
            return self.shape[0] * self.padded_strides[0]
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        """Bytes of storage."""
        return self.size * dtypes.itemsize(self.dtype)

    def __getitem__(self, indices: Any) -> BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return BufferLoad(self, tuple(E.as_expr(i) for i in indices), self.dtype)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {self.shape}, {self.dtype}, {self.scope})"


@E._node
class BufferLoad(E.PrimExpr):
    """Read ``buffer[indices]`` (``dtype`` has ``lanes`` > 1 when indices hold a Ramp)."""

    buffer: Buffer
    indices: tuple
    dtype: str


@E._node
class Ramp(E.PrimExpr):
    """The vector ``[base, base + stride, ..., base + (lanes - 1) * stride]``."""

    base: E.PrimExpr
    stride: E.PrimExpr
    lanes: int
    dtype: str


@E._node
class Broadcast(E.PrimExpr):
    """A scalar repeated over ``lanes`` vector lanes."""

    value: E.PrimExpr
    lanes: int
    dtype: str


def _print_load(e: BufferLoad, text) -> tuple[str, int]:
    return f"{e.buffer.name}[{', '.join(text(i) for i in e.indices)}]", 9


register_printer(BufferLoad, _print_load)
register_printer(Ramp, lambda e, text: (f"T.Ramp({text(e.base)}, {text(e.stride)}, {e.lanes})", 9))
register_printer(Broadcast, lambda e, text: (f"T.Broadcast({text(e.value)}, {e.lanes})", 9))

# --------------------------------------------------------------------------------------
# Statements


class Stmt:
    """Base class of statements."""

    __slots__ = ()

    def __repr__(self) -> str:
        from .printer import stmt_to_str  # noqa: PLC0415 - printer imports nodes

        return stmt_to_str(self)

    __str__ = __repr__


def _stmt(cls):
    return dataclass(frozen=True, slots=True, repr=False)(cls)


#: Loop kinds. "thread_binding" loops carry ``thread_tag``.
FOR_KINDS = ("serial", "parallel", "vectorized", "unrolled", "thread_binding")


class ForKind:
    """TVM's ``tir.ForKind``: the kinds of a loop, as the strings ``For.kind`` holds."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"
    THREAD_BINDING = "thread_binding"


@_stmt
class For(Stmt):
    """``for loop_var in range(min, min + extent)`` of a given kind."""

    loop_var: E.Var
    min: E.PrimExpr
    extent: E.PrimExpr
    kind: str
    body: Stmt
    thread_tag: str = ""
    annotations: tuple = ()  # sorted (key, value) pairs, e.g. ("pragma_auto_unroll_max_step", 16)

    def __post_init__(self) -> None:
        if self.kind not in FOR_KINDS:
            raise IRError(f"loop {self.loop_var.name}: unknown kind {self.kind!r}")
        # TVM's tir.For(i, 0, 8, ...) takes Python ints for the bounds
        for name in ("min", "extent"):
            value = getattr(self, name)
            if isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, name, E.IntImm(value, self.loop_var.dtype))

    def annotation(self, key: str, default: Any = None) -> Any:
        """The value of annotation ``key``."""
        return dict(self.annotations).get(key, default)


@_stmt
class BufferStore(Stmt):
    """``buffer[indices] = value``."""

    buffer: Buffer
    value: E.PrimExpr
    indices: tuple


@_stmt
class Allocate(Stmt):
    """Storage for ``buffer`` that lives while ``body`` runs."""

    buffer: Buffer
    body: Stmt


@_stmt
class IfThenElse(Stmt):
    """Run ``then_case`` when ``condition`` holds, else ``else_case`` (may be None)."""

    condition: E.PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@_stmt
class LetStmt(Stmt):
    """Bind ``var`` to ``value`` in ``body``."""

    var: E.Var
    value: E.PrimExpr
    body: Stmt


@_stmt
class SeqStmt(Stmt):
    """Statements run in order."""

    seq: tuple


@_stmt
class Evaluate(Stmt):
    """Evaluate an expression for its effect (a no-op for pure expressions)."""

    value: E.PrimExpr

    def __post_init__(self) -> None:
        if not isinstance(self.value, E.PrimExpr):  # TVM's tir.Evaluate(0)
            object.__setattr__(self, "value", E.as_expr(self.value))


@dataclass(frozen=True)
class BlockAxis:
    """One block iteration variable's kind ("S" spatial, "R" reduce) and domain."""

    kind: str
    min: int
    extent: int


@_stmt
class Block(Stmt):
    """Marks the statements that compute one stage (``name``); no effect on execution.

    A TensorIR block (TVMScript's ``with T.block``) also describes itself, for printing
    and for the schedule primitives of hand-written programs, while its ``body`` stays
    the statements that run:

    - ``axes``: one ``BlockAxis`` per leading ``LetStmt`` of ``body`` (the iteration
      variables in order; each let's value is the variable's binding);
    - ``has_where``: under those lets, ``body`` is ``IfThenElse(predicate, rest)``
      (``T.where``);
    - ``has_init``: then ``rest`` is ``seq(IfThenElse(every reduce variable == its
      min, init), update...)`` (``with T.init()``).

    A block with no axes is a plain stage marker (lowered programs print it as a comment).
    """

    name: str
    body: Stmt
    annotations: tuple = ()
    axes: tuple = ()
    has_where: bool = False
    has_init: bool = False


def seq(*stmts: Stmt | None) -> Stmt:
    """A flattened SeqStmt (a single statement stays itself; Nones are dropped)."""
    flat: list[Stmt] = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        else:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(tuple(flat))


NOP = SeqStmt(())

# --------------------------------------------------------------------------------------
# Functions and modules


@dataclass(frozen=True, eq=False)
class PrimFunc:
    """A function over buffers: ``params`` are the arguments, ``body`` the loop nest.

    ``source`` keeps what the function was made from (the ComputeDAG and argument
    tensors for ``te.create_prim_func``) so a schedule can be created from it; it takes
    no part in equality.
    """

    params: tuple
    body: Stmt
    name: str = "main"
    attrs: tuple = ()
    source: Any = field(default=None, compare=False)

    def with_body(self, body: Stmt) -> PrimFunc:
        """The same function with another body."""
        return PrimFunc(self.params, body, self.name, self.attrs, self.source)

    def with_name(self, name: str) -> PrimFunc:
        """The same function under another name (the symbol it is built as)."""
        if not isinstance(name, str) or not name:
            raise IRError(f"function name {name!r} must be a non-empty string, e.g. 'mm_relu'")
        return (
            self
            if name == self.name
            else PrimFunc(self.params, self.body, name, self.attrs, self.source)
        )

    def with_attr(self, attr_key_or_dict: Any, attr_value: Any = None) -> PrimFunc:
        """A copy with attributes set, as TVM's: ``{"global_symbol": "f"}`` renames it."""
        items = (
            dict(attr_key_or_dict)
            if isinstance(attr_key_or_dict, dict)
            else {attr_key_or_dict: attr_value}
        )
        func = self.with_name(items.pop("global_symbol", self.name))
        attrs = dict(func.attrs)
        attrs.update(items)
        return PrimFunc(
            func.params, func.body, func.name, tuple(sorted(attrs.items())), func.source
        )

    def script(self) -> str:
        """TVMScript-like text of the function."""
        from .printer import func_to_str  # noqa: PLC0415 - printer imports nodes

        return func_to_str(self)

    def show(self) -> None:
        """Print the function's text."""
        print(self.script())

    def __repr__(self) -> str:
        return self.script()

    __str__ = __repr__


class IRModule:
    """A set of PrimFuncs by name (``tvm.lower`` returns one).

    Each function takes the name of its key, as in TVM, where the key names the symbol
    built: ``tvm.build(IRModule({"mm": f}))["mm"]``.
    """

    def __init__(self, functions: dict[str, PrimFunc] | None = None) -> None:
        out = {}
        for key, func in (functions or {}).items():
            if not isinstance(func, PrimFunc):
                raise IRError(
                    f"IRModule: {key!r} maps to a {type(func).__name__}; give PrimFuncs, e.g. "
                    "IRModule({'main': te.create_prim_func([A, B, C])})"
                )
            out[key] = func.with_name(key)
        self.functions = out

    @staticmethod
    def from_expr(func: PrimFunc) -> IRModule:
        """A module holding ``func`` as "main" (TVM's ``IRModule.from_expr``)."""
        return IRModule({"main": func})

    def __getitem__(self, name: str) -> PrimFunc:
        try:
            return self.functions[name]
        except KeyError:
            raise IRError(
                f"module has no function {name!r}; it has {', '.join(self.functions)}"
            ) from None

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def main_function(self) -> PrimFunc:
        """The function named "main", or else the module's only one (a schedule's module)."""
        if "main" in self.functions:
            return self.functions["main"]
        if not self.functions:
            raise IRError("module has no functions: make one with te.create_prim_func(...)")
        if len(self.functions) > 1:
            raise IRError(
                f"module has no 'main' and {len(self.functions)} functions "
                f"({', '.join(self.functions)}): pick one with mod['name']"
            )
        return next(iter(self.functions.values()))

    def __iter__(self):
        return iter(self.functions.items())

    def get_global_vars(self) -> list[str]:
        """Names of the functions."""
        return list(self.functions)

    def script(self) -> str:
        """TVMScript-like text of every function."""
        return "\n\n".join(f.script() for f in self.functions.values())

    def show(self) -> None:
        """Print the module's text."""
        print(self.script())

    def __repr__(self) -> str:
        return self.script()

    __str__ = __repr__
