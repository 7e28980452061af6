"""Random variables, instructions and the Trace: the record of a schedule's steps.

An instruction is one primitive call: its kind, its arguments by name (random variables
or plain values), the random variables it returned, and for sampling instructions the
decision it drew. A Trace prints as a Python function ``apply_trace(sch)``, converts to
versioned JSON data, and replays onto a fresh schedule by calling the same schedule
methods again — replay interprets data, it never evaluates code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import AnsorLabError, ScheduleError
from .instruction_kind import REGISTRY, instruction_kind
from .trace_json import check_trace, parse_text

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


#: every instruction kind by name -> its declaration (an InstructionKind); derived from
#: the ``@instruction`` declarations beside the tir.Schedule methods
KINDS = REGISTRY


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
        return instruction_kind(self.kind).sampling

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


def _inst_python(inst: Instruction) -> str:
    decl = instruction_kind(inst.kind)
    parts = []
    for name, value in inst.args:
        if name == decl.varargs:
            parts.extend(_value_py(x) for x in value)
        elif name in decl.printers:
            parts.append(f"{name}={decl.printers[name](value)}")
        else:
            parts.append(f"{name}={_value_py(value)}")
    if decl.sampling:
        parts.append(f"decision={_value_py(inst.decision)}")
    call = f"sch.{decl.method}({', '.join(parts)})"
    outs = [rv.name for rv in inst.outputs]
    if not outs:
        return call
    if decl.outputs == "list":
        # a one-element list still unpacks
        return f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}"
    return f"{outs[0]} = {call}"


def _value_json(v: Any) -> Any:
    if isinstance(v, RV):
        return {"rv": v.name}
    if isinstance(v, (list, tuple)):
        return [_value_json(x) for x in v]
    return v


class Trace:
    """The instructions a schedule applied, in order, with their decisions.

    A trace read from JSON keeps the JSON data and decodes it into Instructions only
    when they are read (printing, decisions): replay interprets the JSON data directly,
    which is what the search and the measurement workers do for every candidate.
    """

    def __init__(self, insts: list | None = None) -> None:
        self._insts = insts if insts is not None else []
        self._json: list | None = None  # undecoded JSON instructions (from_json)
        #: recorded on a schedule that lists unit loops (the search's): see
        #: ``Schedule.show_unit_loops``. Its Python and JSON say so; replay also tells the
        #: two apart by the number of loops each get_loops recorded (older traces)
        self.unit_loops = False

    @property
    def insts(self) -> list:
        """The instructions, in order."""
        if self._json is not None:
            self._insts = _decode(self._json)
            self._json = None
        return self._insts

    @insts.setter
    def insts(self, insts: list) -> None:
        self._insts = insts
        self._json = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trace) and self.insts == other.insts

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
        other = Trace(list(self.insts))
        other.unit_loops = self.unit_loops
        return other

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
        out.unit_loops = self.unit_loops
        return out.without_postproc() if remove_postproc else out

    def without_postproc(self) -> Trace:
        """The instructions before the EnterPostproc marker."""
        out = Trace(list(self.insts))
        for k, inst in enumerate(self.insts):
            if inst.kind == "EnterPostproc":
                out = Trace(self.insts[:k])
                break
        out.unit_loops = self.unit_loops
        return out

    # -- rendering --------------------------------------------------------------------
    def as_python(self) -> list[str]:
        """One Python statement per instruction."""
        return [_inst_python(inst) for inst in self.insts]

    def __str__(self) -> str:
        body = self.as_python() or ["pass"]
        if self.unit_loops:
            body = ["sch.show_unit_loops = True  # recorded by the search: unit loops counted"]
            body += self.as_python()
        return "def apply_trace(sch):\n" + "\n".join("  " + line for line in body)

    __repr__ = __str__

    def show(self) -> None:
        """Print the trace as Python."""
        print(str(self))

    def as_json(self) -> dict:
        """Versioned JSON data of the trace (replay it with ``Trace.from_json``)."""
        # an optional mark, so the trace read back prints its Python right (old traces
        # without it replay too: see apply_to_schedule)
        flag = {"unit_loops": True} if self.unit_loops else {}
        if self._json is not None:
            return {"version": TRACE_VERSION, "insts": self._json, **flag}
        insts = []
        for inst in self.insts:
            args = [[k, _value_json(v)] for k, v in inst.args]
            insts.append(
                [inst.kind, args, [rv.name for rv in inst.outputs], _value_json(inst.decision)]
            )
        return {"version": TRACE_VERSION, "insts": insts, **flag}

    def dumps(self) -> str:
        """The JSON text of the trace."""
        return json.dumps(self.as_json())

    @staticmethod
    def from_json(data: dict | str) -> Trace:
        """Read a trace written by ``as_json`` (JSON data or text); it prints and replays.

        The whole structure is checked first (trace_json): a malformed trace is a
        ScheduleError saying which instruction and field, before anything is replayed.
        """
        if isinstance(data, (str, bytes)):
            data = parse_text(data)
        trace = Trace()
        trace._json = check_trace(data, TRACE_VERSION)
        trace.unit_loops = data.get("unit_loops") is True
        return trace

    def apply_to_schedule(
        self, sch, remove_postproc: bool = False, decisions: dict | None = None
    ) -> None:
        """Replay every instruction onto ``sch`` (a fresh schedule of the same workload).

        Each instruction is applied through its kind's declaration, mapping the handles
        it recorded to the ones ``sch`` returns. ``decisions`` overrides the decision of
        sampling instructions by instruction index; an override of None draws a fresh one
        (how the search samples and mutates).
        """
        rvs: dict[str, Any] = {}
        decisions = decisions or {}
        if self.unit_loops and hasattr(sch, "show_unit_loops"):
            sch.show_unit_loops = True  # the recorded get_loops listed unit loops

        def decode(v: Any) -> Any:
            if type(v) is dict and len(v) == 1 and "rv" in v:
                try:
                    return rvs[v["rv"]]
                except KeyError:
                    raise ScheduleError(f"trace uses {v['rv']} before it is defined") from None
            if type(v) is list:
                return [decode(x) for x in v]
            return v

        insts = self._json if self._json is not None else self.as_json()["insts"]
        for index, (kind, args, outs, decision) in enumerate(insts):
            if kind == "EnterPostproc" and remove_postproc:
                break
            if index in decisions:
                decision = decisions[index]
            decl = instruction_kind(kind)
            if kind == "GetLoops":  # whether it counted unit loops shows in what it returned
                sch._replay_loop_count = len(outs)
            try:
                result = decl.call(
                    sch, [(name, decode(value)) for name, value in args], decode(decision)
                )
            except AnsorLabError as err:
                # which instruction refused: the search redraws a decision found there
                err.instruction_index = index
                raise
            except (TypeError, ValueError, KeyError, IndexError, AttributeError) as err:
                # a value of the wrong type that the primitive did not check itself
                raise ScheduleError(
                    f"replaying instruction {index} ({kind}): {type(err).__name__}: {err}; "
                    f"check its arguments against {decl.method}()'s (was the trace edited?)"
                ) from err
            results = (
                []
                if result is None
                else (list(result) if isinstance(result, (list, tuple)) else [result])
            )
            if kind == "GetLoops":
                sch._replay_loop_count = None
            if len(results) != len(outs):
                raise ScheduleError(
                    f"replaying {kind}: it returned {len(results)} handles, the trace expects "
                    f"{len(outs)}"
                )
            rvs.update(zip(outs, results))


#: the name a trace read from JSON had before ``from_json`` returned a Trace
TraceData = Trace

_RV_CLASSES = {cls.prefix: cls for cls in (BlockRV, LoopRV, ExprRV)}


def _handle(name: Any, handles: dict[str, RV]) -> RV:
    """The RV a trace names ``b0`` / ``l3`` / ``v5``, one object per name."""
    rv = handles.get(name)
    if rv is None:
        cls = _RV_CLASSES.get(name[:1]) if isinstance(name, str) else None
        if cls is None or not name[1:].isdigit():
            raise ScheduleError(f"malformed handle name {name!r} in a trace")
        rv = handles[name] = cls(int(name[1:]))
    return rv


def _decode(json_insts: list) -> list[Instruction]:
    """JSON instructions as Instructions, one RV object per recorded handle name."""
    handles: dict[str, RV] = {}
    return [
        Instruction(
            kind,
            tuple((name, _value_from_json(v, handles)) for name, v in args),
            tuple(_handle(name, handles) for name in outs),
            decision,
        )
        for kind, args, outs, decision in json_insts
    ]


def _value_from_json(v: Any, handles: dict[str, RV]) -> Any:
    if type(v) is dict and len(v) == 1 and "rv" in v:
        return _handle(v["rv"], handles)
    if type(v) is list:
        return [_value_from_json(x, handles) for x in v]
    return v
