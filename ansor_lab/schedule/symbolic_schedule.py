"""Schedules of symbolic DAGs (``n = te.var("n")``): scheduled on a probe, replayed per shape.

A schedule of a symbolic DAG is a real schedule of its *probe* specialization (every shape
variable = ``dsl.symbolic.PROBE_VALUE``), so each step is checked, and fails, at its call
site. Its trace (block-style instructions with symbolic handles) replays onto the schedule
of any other specialization: ``SymbolicProgram.lower(binding)`` specializes the DAG,
replays the trace and lowers, which is what ``build`` does per shape at call time.
Symbolic axes (``C.op.axis[0]``) work on the probe's stages because loops are found by
name; tensors (``s[C]``, ``cache_read(A, ...)``) are mapped to their probe copies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..dsl import symbolic as S
from ..dsl.tensor import Operation, Tensor
from ..errors import LoweringError
from ..ir import nodes as N, printer
from ..ir.simplify import simplify_stmt
from .block_view import without_block_view
from .create import PrimFuncSource, create_prim_func
from .lower import lower_state
from .symbolic_print import symbolic_text
from .te_schedule import Schedule as TESchedule, _tensors
from .tir_schedule import Schedule as BlockSchedule
from .trace import Trace


class SymbolicSchedule(TESchedule):
    """``te.create_schedule`` of a symbolic DAG: a TE schedule of its probe specialization."""

    def __init__(self, outputs: object) -> None:
        self.symbolic_outputs = _tensors(outputs)
        self.probe_binding = S.probe_binding(self.symbolic_outputs)
        probe, self.spec = S.specialize(self.symbolic_outputs, self.probe_binding)
        super().__init__(probe)

    def _map(self, key: object) -> Any:
        if isinstance(key, Operation):
            key = key.output(0)
        if isinstance(key, Tensor):
            return self.spec.tensor(key)
        if isinstance(key, (list, tuple)):
            return [self._map(k) for k in key]
        return key

    def __getitem__(self, key: object):
        return super().__getitem__(self._map(key))

    def cache_read(self, tensor: Tensor, scope: str, readers: list) -> Tensor:
        """As ``te.Schedule.cache_read`` (tensors of the symbolic DAG are mapped)."""
        return super().cache_read(self._map(tensor), scope, self._map(readers))

    def cache_write(self, tensor: Tensor, scope: str) -> Tensor:
        """As ``te.Schedule.cache_write``."""
        return super().cache_write(self._map(tensor), scope)

    def rfactor(self, tensor: Tensor, axis: Any, factor_axis: int = 0) -> Tensor:
        """As ``te.Schedule.rfactor``."""
        return super().rfactor(self._map(tensor), axis, factor_axis)

    def program(self, args: Sequence[Tensor]) -> SymbolicProgram:
        """The recipe ``build`` specializes per shape: these args, this trace."""
        return SymbolicProgram(tuple(args), tuple(self.symbolic_outputs), self.trace.copy(), "te")


def create_schedule(ops: object) -> TESchedule:
    """A default schedule for ``ops`` (an op or a list of ops, as in TVM).

    With symbolic shapes the schedule works on a probe specialization (see
    ``SymbolicSchedule``) and ``tvm.build`` specializes it per call.
    """
    outputs = _tensors(ops)
    if any(S.is_symbolic_tensor(t) for t in outputs):
        return SymbolicSchedule(outputs)
    return TESchedule(outputs)


@dataclasses.dataclass(frozen=True)
class SymbolicPrimFuncSource(PrimFuncSource):
    """``PrimFunc.source`` of ``create_prim_func`` over symbolic tensors: the function is
    the probe specialization; ``symbolic_args`` and the schedule's ``trace`` rebuild it."""

    symbolic_args: tuple = ()
    binding: tuple = ()  # the probe's (Var, value) pairs
    trace: Any = dataclasses.field(default=None, compare=False)
    #: TVMScript with ``n = T.int32()``: binding -> the function parsed for those shapes
    reparse: Any = dataclasses.field(default=None, compare=False)


def create_symbolic_prim_func(args: Sequence[Tensor], name: str = "main") -> N.PrimFunc:
    """``te.create_prim_func`` of symbolic tensors: the probe function, marked symbolic."""
    binding = S.probe_binding(args)
    concrete, _ = S.specialize(args, binding)
    func = create_prim_func(concrete, name=name)
    source = SymbolicPrimFuncSource(
        tuple(concrete), func.source.body, tuple(args), tuple(binding.items())
    )
    return N.PrimFunc(func.params, func.body, func.name, func.attrs, source)


class SymbolicBlockSchedule(BlockSchedule):
    """``tir.Schedule`` of a symbolic ``create_prim_func``: schedules the probe function;
    ``sch.mod`` carries the trace so ``tvm.build(sch.mod)`` replays it per shape."""

    @property
    def mod(self) -> N.IRModule:
        """The probe's lowered program; building it specializes per call's shapes."""
        mod = super().mod
        name, func = next(iter(mod.functions.items()))
        source = dataclasses.replace(func.source, trace=self.trace.copy())
        return N.IRModule({name: N.PrimFunc(func.params, func.body, name, func.attrs, source)})


@dataclasses.dataclass(frozen=True)
class SymbolicProgram:
    """What ``build`` keeps of a symbolic schedule: argument tensors, outputs and trace."""

    args: tuple
    outputs: tuple
    trace: Trace
    style: str  # "te", "tir" or "script"
    reparse: Any = None  # "script": binding -> the PrimFunc parsed for those shapes
    func_name: str = "main"  # a PrimFunc's own name, built under it when build names none

    @property
    def shape_vars(self) -> list:
        """The shape variables, in first-use order."""
        return S.shape_vars(list(self.args) + list(self.outputs))

    def probe_binding(self) -> dict:
        """Every shape variable at the probe value."""
        return {v: S.PROBE_VALUE for v in self.shape_vars}

    def symbolic_script(self, name: str = "main") -> str | None:
        """The program's text with its shape variables (None where it cannot be
        recovered: see ``symbolic_print``)."""

        def at(binding: dict) -> str:
            func = self.lower(binding, name)
            if self.style == "script":  # as parsed: folded, as lowering leaves its own
                func = N.PrimFunc(
                    func.params, simplify_stmt(func.body), func.name, func.attrs, func.source
                )
            return func.script()

        return symbolic_text(at, self.shape_vars)

    def lower(self, binding: dict, name: str, check: bool = True) -> N.PrimFunc:
        """Specialize to ``binding``, replay the trace and lower."""
        spec = S.Specialization(binding)
        args = [spec.tensor(t) for t in self.args]
        if self.style == "te":
            sched = TESchedule([spec.tensor(t) for t in self.outputs])
            self.trace.apply_to_schedule(sched.engine)
            return lower_state(sched.state, args, name, check=check)
        if self.style == "script":
            func = self.reparse(binding)
            if not self.trace.insts:
                return func.with_name(name)
        else:
            func = create_prim_func(args, name=self.func_name)
        sch = BlockSchedule(func)
        self.trace.apply_to_schedule(sch)
        # the loop program (tvm.lower prints it; the block form is the schedule's view)
        return without_block_view(sch.mod.main_function()).with_name(name)


def symbolic_program(inp: Any, args: Sequence[Tensor] | None) -> SymbolicProgram | None:
    """The symbolic recipe behind a build/lower input, or None for a static one."""
    if isinstance(inp, SymbolicSchedule):
        if args is None:
            raise LoweringError(
                "lower/build of a TE schedule needs the argument list: "
                "tvm.lower(s, [A, B, C]) / tvm.build(s, [A, B, C])"
            )
        return inp.program(args)
    if isinstance(inp, SymbolicBlockSchedule):
        inp = inp.mod
    if isinstance(inp, N.IRModule) and len(inp.functions) == 1:
        inp = next(iter(inp.functions.values()))
    source = getattr(inp, "source", None)
    if isinstance(inp, N.PrimFunc) and isinstance(source, SymbolicPrimFuncSource):
        args = source.symbolic_args
        outputs = tuple(t for t in args if S.is_symbolic_tensor(t) and t.op.input_tensors)
        trace = source.trace.copy() if source.trace is not None else Trace()
        style = "script" if source.reparse is not None else "tir"
        return SymbolicProgram(tuple(args), outputs, trace, style, source.reparse, inp.name)
    if args is not None and any(S.is_symbolic_tensor(t) for t in args):
        raise LoweringError(
            "these arguments have symbolic shapes but the schedule was made for static ones; "
            "create the schedule from the same tensors: te.create_schedule(C.op)"
        )
    return None


def _scheduled_symbolic_script(func: N.PrimFunc) -> str | None:
    """Printer hook: a scheduled or parsed symbolic function prints with its variables."""
    src = func.source
    if not isinstance(src, SymbolicPrimFuncSource) or getattr(src, "body", None) is func.body:
        return None  # unscheduled create_prim_func results print in block form
    program = symbolic_program(func, None)
    if program is None:
        return None
    return program.symbolic_script(func.name)


printer.SCRIPT_HOOKS.append(_scheduled_symbolic_script)
