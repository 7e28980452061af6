"""Random variables, instructions and the Trace: the record of a schedule's steps.

An instruction is one primitive call: its kind, its arguments by name (random variables
or plain values), the random variables it returned, and for sampling instructions the
decision it drew. A Trace prints as a Python function ``apply_trace(sch)``, converts to
versioned JSON data, and replays onto a fresh schedule by calling the same schedule
methods again — replay interprets data, it never evaluates code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import ScheduleError

TRACE_VERSION = 1


class RV:
    """A random variable: a handle a schedule step returned (block, loop or value)."""

    prefix = "v"

    def __init__(self, index: int) -> None:
        self.index = index

    @property
    def name(self) -> str:
        """The name it has in printed traces (``b0``, ``l3``, ``v5``)."""
        return f"{self.prefix}{self.index}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class BlockRV(RV):
    """A handle to a block (a stage of the computation)."""

    prefix = "b"


class LoopRV(RV):
    """A handle to a loop; it goes stale when a later split or fuse replaces the loop."""

    prefix = "l"


class ExprRV(RV):
    """A handle to an integer drawn by a sampling instruction (``sch.get(v)`` reads it)."""

    prefix = "v"

    def __int__(self) -> int:
        raise ScheduleError(f"{self.name} is a sampled value; read it with sch.get({self.name})")


#: kind -> (schedule method, names of positional *args or None, is sampling)
KINDS: dict[str, tuple[str, str | None, bool]] = {
    "GetBlock": ("get_block", None, False),
    "GetLoops": ("get_loops", None, False),
    "GetChildBlocks": ("get_child_blocks", None, False),
    "Split": ("split", None, False),
    "Fuse": ("fuse", "loops", False),
    "Reorder": ("reorder", "ordered_loops", False),
    "Parallel": ("parallel", None, False),
    "Vectorize": ("vectorize", None, False),
    "Unroll": ("unroll", None, False),
    "Bind": ("bind", None, False),
    "Annotate": ("annotate", None, False),
    "ComputeAt": ("compute_at", None, False),
    "ReverseComputeAt": ("reverse_compute_at", None, False),
    "ComputeInline": ("compute_inline", None, False),
    "ReverseComputeInline": ("reverse_compute_inline", None, False),
    "ComputeRoot": ("compute_root", None, False),
    "CacheRead": ("cache_read", None, False),
    "CacheWrite": ("cache_write", None, False),
    "RFactor": ("rfactor", None, False),
    "DecomposeReduction": ("decompose_reduction", None, False),
    "StorageAlign": ("storage_align", None, False),
    "SetScope": ("set_scope", None, False),
    "TransformLayout": ("transform_layout", None, False),
    "SamplePerfectTile": ("sample_perfect_tile", None, True),
    "SampleCategorical": ("sample_categorical", None, True),
    "SampleComputeLocation": ("sample_compute_location", None, True),
    "EnterPostproc": ("enter_postproc", None, False),
}


@dataclass(frozen=True, eq=False)
class Instruction:
    """One recorded primitive call."""

    kind: str
    args: tuple  # ((param name, value), ...); values are RVs, plain data or lists of them
    outputs: tuple  # RVs returned
    decision: Any = None

    def arg(self, name: str, default: Any = None) -> Any:
        """The value of argument ``name``."""
        for k, v in self.args:
            if k == name:
                return v
        return default

    @property
    def is_sampling(self) -> bool:
        """True for sample_* instructions (they carry a decision)."""
        return KINDS[self.kind][2]

    def with_decision(self, decision: Any) -> Instruction:
        """The same instruction with another decision."""
        return Instruction(self.kind, self.args, self.outputs, decision)

    def __repr__(self) -> str:
        return _inst_python(self)


def _value_py(v: Any) -> str:
    if isinstance(v, RV):
        return v.name
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value_py(x) for x in v) + "]"
    return json.dumps(v) if isinstance(v, str) else repr(v)


def _permutation_lambda(perm: list) -> str:
    """A permutation of axes as the index map TVM prints: ``lambda i0, i1: (i1, i0)``."""
    names = [f"i{d}" for d in range(len(perm))]
    out = ", ".join(names[a] for a in perm) + ("," if len(perm) == 1 else "")
    return f"lambda {', '.join(names)}: ({out})"


def _inst_python(inst: Instruction) -> str:
    method, varargs, sampling = KINDS[inst.kind]
    parts = []
    for name, value in inst.args:
        if name == varargs:
            parts.extend(_value_py(x) for x in value)
        elif inst.kind == "TransformLayout" and name == "index_map":
            parts.append(f"index_map={_permutation_lambda(value)}")
        else:
            parts.append(f"{name}={_value_py(value)}")
    if sampling:
        parts.append(f"decision={_value_py(inst.decision)}")
    call = f"sch.{method}({', '.join(parts)})"
    outs = [rv.name for rv in inst.outputs]
    if not outs:
        return call
    if inst.kind in ("GetLoops", "GetChildBlocks", "SamplePerfectTile", "Split"):
        # these return lists; a one-element list still unpacks
        return f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}"
    return f"{outs[0]} = {call}"


def _value_json(v: Any) -> Any:
    if isinstance(v, RV):
        return {"rv": v.name}
    if isinstance(v, (list, tuple)):
        return [_value_json(x) for x in v]
    return v


@dataclass
class Trace:
    """The instructions a schedule applied, in order, with their decisions."""

    insts: list = field(default_factory=list)

    @property
    def decisions(self) -> dict:
        """Sampling instruction -> its decision."""
        return {inst: inst.decision for inst in self.insts if inst.is_sampling}

    def get_decision(self, inst: Instruction) -> Any:
        """The decision of a sampling instruction."""
        return inst.decision

    def append(self, inst: Instruction) -> None:
        """Add an instruction (the schedule does this for every successful step)."""
        self.insts.append(inst)

    def copy(self) -> Trace:
        """A copy with its own instruction list."""
        return Trace(list(self.insts))

    def _index(self, inst: Instruction | int) -> int:
        if isinstance(inst, int):
            return inst
        for k, x in enumerate(self.insts):
            if x is inst:
                return k
        raise ScheduleError("that instruction is not in this trace")

    def with_decision(
        self, inst: Instruction | int, decision: Any, remove_postproc: bool = True
    ) -> Trace:
        """A new trace where one sampling instruction takes ``decision``."""
        k = self._index(inst)
        if not self.insts[k].is_sampling:
            raise ScheduleError(f"instruction {k} ({self.insts[k].kind}) makes no decision")
        insts = list(self.insts)
        insts[k] = insts[k].with_decision(decision)
        out = Trace(insts)
        return out.without_postproc() if remove_postproc else out

    def without_postproc(self) -> Trace:
        """The instructions before the EnterPostproc marker."""
        for k, inst in enumerate(self.insts):
            if inst.kind == "EnterPostproc":
                return Trace(self.insts[:k])
        return Trace(list(self.insts))

    # -- rendering --------------------------------------------------------------------
    def as_python(self) -> list[str]:
        """One Python statement per instruction."""
        return [_inst_python(inst) for inst in self.insts]

    def __str__(self) -> str:
        body = self.as_python() or ["pass"]
        return "def apply_trace(sch):\n" + "\n".join("  " + line for line in body)

    __repr__ = __str__

    def show(self) -> None:
        """Print the trace as Python."""
        print(str(self))

    def as_json(self) -> dict:
        """Versioned JSON data of the trace (replay it with ``Trace.from_json``)."""
        insts = []
        for inst in self.insts:
            args = [[k, _value_json(v)] for k, v in inst.args]
            insts.append(
                [inst.kind, args, [rv.name for rv in inst.outputs], _value_json(inst.decision)]
            )
        return {"version": TRACE_VERSION, "insts": insts}

    def dumps(self) -> str:
        """The JSON text of the trace."""
        return json.dumps(self.as_json())

    @staticmethod
    def from_json(data: dict | str) -> TraceData:
        """Read a trace written by ``as_json`` (a replayable description)."""
        if isinstance(data, str):
            data = json.loads(data)
        if not isinstance(data, dict) or data.get("version") != TRACE_VERSION:
            raise ScheduleError(
                f"not a trace of format version {TRACE_VERSION}: "
                f"{str(data)[:80]!r} (was it written by ansor_lab's Trace.as_json()?)"
            )
        for item in data["insts"]:
            if not isinstance(item, list) or len(item) != 4 or item[0] not in KINDS:
                raise ScheduleError(f"malformed trace instruction {item!r}")
        return TraceData(data["insts"])

    def apply_to_schedule(self, sch, remove_postproc: bool = False) -> None:
        """Replay every instruction onto ``sch`` (a fresh schedule of the same workload)."""
        TraceData(self.as_json()["insts"]).apply_to_schedule(sch, remove_postproc)


@dataclass
class TraceData:
    """A trace read from JSON: replays onto a schedule, creating its own handles."""

    insts: list

    def apply_to_schedule(
        self, sch, remove_postproc: bool = False, decisions: dict | None = None
    ) -> None:
        """Call the schedule's methods in order, mapping recorded handles to new ones.

        ``decisions`` overrides the decision of sampling instructions by instruction
        index; an override of None draws a fresh one (how the search samples and mutates).
        """
        rvs: dict[str, Any] = {}
        decisions = decisions or {}

        def decode(v: Any) -> Any:
            if isinstance(v, dict) and set(v) == {"rv"}:
                try:
                    return rvs[v["rv"]]
                except KeyError:
                    raise ScheduleError(f"trace uses {v['rv']} before it is defined") from None
            if isinstance(v, list):
                return [decode(x) for x in v]
            return v

        for index, (kind, args, outs, decision) in enumerate(self.insts):
            if kind == "EnterPostproc" and remove_postproc:
                break
            if index in decisions:
                decision = decisions[index]
            method, varargs, sampling = KINDS[kind]
            fn = getattr(sch, method)
            positional = []
            kwargs = {}
            for name, value in args:
                if name == varargs:
                    positional = decode(value)
                else:
                    kwargs[name] = decode(value)
            if sampling:
                kwargs["decision"] = decode(decision)
            result = fn(*positional, **kwargs)
            results = (
                []
                if result is None
                else (list(result) if isinstance(result, (list, tuple)) else [result])
            )
            if len(results) != len(outs):
                raise ScheduleError(
                    f"replaying {kind}: it returned {len(results)} handles, the trace expects "
                    f"{len(outs)}"
                )
            rvs.update(zip(outs, results))

    def as_json(self) -> dict:
        """Back to JSON data."""
        return {"version": TRACE_VERSION, "insts": self.insts}
