"""``te.create_prim_func``: the default loop program of a list of tensors."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dsl.dag import topo_order
from ..dsl.scan import refuse_scan
from ..dsl.symbolic import SymbolicComputeOp, SymbolicPlaceholderOp
from ..dsl.tensor import PlaceholderOp, Tensor
from ..errors import LoweringError
from ..ir import nodes as N
from . import block_script, block_view  # noqa: F401 - register the block-form printers
from .ignored import warn_ignored
from .lower import lower_state
from .state import State


@dataclass(frozen=True)
class PrimFuncSource:
    """What a PrimFunc was created from: its argument tensors (outputs last)."""

    args: tuple
    #: the body create_prim_func lowered (the function prints in block form while its body
    #: is this one; schedules' modules share the source but not the body)
    body: object = field(default=None, compare=False)
    #: parsed from TVMScript: the function as written (blocks, loop kinds, scopes), which
    #: it prints and compares as; the compute definitions keep only what they compute
    written: object = field(default=None, compare=False, kw_only=True)

    def outputs(self) -> list[Tensor]:
        """The args no other arg is computed from (the computed tensors)."""
        return [t for t in self.args if not _is_placeholder(t)]

    def block_view(self, func: N.PrimFunc) -> N.PrimFunc | None:
        """The TensorIR block form ``func`` compares as (None unless it is this body)."""
        if func.body is not self.body:
            return None
        if self.written is not None:
            return N.PrimFunc(self.written.params, self.written.body, func.name, func.attrs)
        from .block_emit import BlockFormUnavailable, block_form_func  # noqa: PLC0415 - cycle

        try:
            state = State.create(self.outputs(), list(self.args))
            return block_form_func(state, list(self.args), func.name, func.attrs)
        except BlockFormUnavailable:
            return None


def _is_placeholder(t: Tensor) -> bool:
    return isinstance(t.op, PlaceholderOp)


_SYMBOLIC_OPS = (SymbolicPlaceholderOp, SymbolicComputeOp)

#: index_dtype_override values TVM accepts
INDEX_DTYPES = (None, "int32", "int64")


def create_prim_func(
    ops: list[Tensor], index_dtype_override: str | None = None, *, name: str = "main"
) -> N.PrimFunc:
    """The unscheduled PrimFunc over tensors ``ops`` (inputs and outputs), for tir.Schedule.

    ``index_dtype_override`` is TVM's second argument, accepted so TVM code runs: it
    changes nothing here, since shapes are static and the backend already computes
    addresses in 64 bits. ``name`` (keyword only) names the function; putting it in
    ``IRModule({"f": func})`` renames it to "f", as TVM's module does.
    """
    if index_dtype_override not in INDEX_DTYPES:
        hint = (
            " (the function's name is the keyword name=)"
            if isinstance(index_dtype_override, str)
            else ""
        )
        raise LoweringError(
            f"create_prim_func: index_dtype_override must be None, 'int32' or 'int64', got "
            f"{index_dtype_override!r}{hint}"
        )
    if index_dtype_override == "int64":
        # TVM would index with int64; our addresses are 64-bit already, the IR stays int32
        warn_ignored("create_prim_func", "index_dtype_override", "int64", None)
    args = list(ops)
    if not args or not all(isinstance(t, Tensor) for t in args):
        raise LoweringError("create_prim_func takes a list of tensors, e.g. [A, B, C]")
    if any(isinstance(t.op, _SYMBOLIC_OPS) for t in args):
        from .symbolic_schedule import create_symbolic_prim_func  # noqa: PLC0415 - cycle

        return create_symbolic_prim_func(args, name)
    refuse_scan(topo_order(args), "te.create_prim_func")  # TVM's refuses a ScanOp too
    src = PrimFuncSource(tuple(args))
    outputs = src.outputs()
    if not outputs:
        raise LoweringError("create_prim_func needs at least one computed tensor in the list")
    state = State.create(outputs, args)
    func = lower_state(state, args, name)
    src = PrimFuncSource(tuple(args), func.body)
    return N.PrimFunc(func.params, func.body, name, func.attrs, src)
