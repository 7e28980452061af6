"""Search tasks, the workload registry and tuning options (TVM's auto_scheduler names)."""

from __future__ import annotations

import inspect
import json
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..codegen.target import Target, as_target
from ..dsl.dag import ComputeDAG
from ..dsl.serialize import dag_to_json, structure_hash
from ..dsl.tensor import Tensor
from ..dsl.tuple_reduce import refuse_in_search
from ..errors import TaskError
from ..measure.records import load_best_record
from ..measure.timing import estimated_note
from ..measure.workers import rebuild_schedule
from ..runtime.build import build
from ..schedule.create import create_prim_func
from ..schedule.tir_schedule import Schedule
from ..schedule.trace import Trace
from .tune import tune_task

WORKLOAD_FUNC_REGISTRY: dict[str, Callable] = {}


def register_workload(
    func_name: Any = None, f: Callable | None = None, override: bool = False
) -> Any:
    """Register a function returning [input and output tensors] under a name.

    ``@register_workload`` (bare or with arguments) or ``register_workload("name", f)``.
    """

    def register(fn: Callable, name: str | None = None) -> Callable:
        key = name or fn.__name__
        if key in WORKLOAD_FUNC_REGISTRY and not override and WORKLOAD_FUNC_REGISTRY[key] is not fn:
            raise TaskError(
                f"workload {key!r} is already registered; pass override=True to replace it"
            )
        WORKLOAD_FUNC_REGISTRY[key] = fn
        return fn

    if callable(func_name) and f is None:  # @register_workload
        return register(func_name)
    if f is not None:
        return register(f, func_name)
    return lambda fn: register(fn, func_name)


@dataclass
class HardwareParams:
    """Hardware parameters the search reads (TVM's names)."""

    num_cores: int = 1
    vector_unit_bytes: int = 64
    cache_line_bytes: int = 64
    max_shared_memory_per_block: int = 49152
    max_local_memory_per_block: int = 2**31 - 1
    max_threads_per_block: int = 1024
    max_vthread_extent: int = 8
    warp_size: int = 32

    def __post_init__(self) -> None:
        # a zero or negative size reaches the sketch rules as a divisor or a loop bound and
        # fails far from here; None is TVM's "the target's value" (here: the default)
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                setattr(self, f.name, f.default)
            elif isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise TaskError(
                    f"HardwareParams({f.name}={value!r}): it must be a positive int "
                    f"(the default is {f.default}); leave it out or pass None for the default"
                )
            else:
                setattr(self, f.name, int(value))

    @staticmethod
    def from_target(target: Target) -> HardwareParams:
        """The parameters of a target."""
        if target.kind == "cuda":
            return HardwareParams(
                1,
                16,
                128,
                target.max_shared_memory_per_block,
                target.max_local_memory_per_block,
                target.max_threads_per_block,
                8,
                target.warp_size,
            )
        return HardwareParams(max(1, target.num_cores), target.vector_bytes, 64)


class SearchTask:
    """A tuning task: a computation (registered function or DAG), a target, parameters."""

    def __init__(
        self,
        func: Any = None,
        args: tuple = (),
        compute_dag: Any = None,
        workload_key: str | None = None,
        target: Any = None,
        target_host: Any = None,
        hardware_params: HardwareParams | None = None,
        layout_rewrite_option: Any = None,
        task_inputs: Any = None,
        desc: str = "",
    ) -> None:
        self.target = as_target(target)
        if func is None and compute_dag is None and workload_key is not None:
            func, args = _decode_workload_key(workload_key)
        if func is not None:
            args = _plain_args(args)
            name = func if isinstance(func, str) else None
            if name is None:
                name = next((k for k, v in WORKLOAD_FUNC_REGISTRY.items() if v is func), None)
                if name is None:  # accept unregistered functions too, under their name
                    register_workload(func, override=True)
                    name = func.__name__
            if name not in WORKLOAD_FUNC_REGISTRY:
                raise TaskError(
                    f"no workload registered as {name!r}; decorate the function with "
                    "@auto_scheduler.register_workload"
                )
            _check_call(name, WORKLOAD_FUNC_REGISTRY[name], args)
            tensors = WORKLOAD_FUNC_REGISTRY[name](*args)
            if isinstance(tensors, Tensor):
                tensors = [tensors]
            if not isinstance(tensors, (list, tuple)) or not all(
                isinstance(t, Tensor) for t in tensors
            ):
                raise TaskError(
                    f"workload {name!r} returned {type(tensors).__name__} {tensors!r:.80}; "
                    "it must return the list of its input and output tensors, e.g. "
                    "`return [A, B, C]`"
                )
            self.args = list(tensors)
            self.compute_dag = ComputeDAG(self.args)
            refuse_in_search(self.compute_dag.ops)
            self.workload_key = workload_key or json.dumps([name, *map(_plain, args)])
        elif compute_dag is not None:
            dag = compute_dag if isinstance(compute_dag, ComputeDAG) else ComputeDAG(compute_dag)
            self.compute_dag = dag
            self.args = list(dag.tensors)
            refuse_in_search(dag.ops)
            self.workload_key = workload_key or dag.workload_key()
        else:
            raise TaskError(
                "SearchTask needs func= (a registered workload), compute_dag= or "
                "the workload_key= of a registered workload"
            )
        if not self.args:
            raise TaskError("the workload returned no tensors")
        refuse_in_search(self.compute_dag.ops)
        self.dag_json = dag_to_json(self.args)
        self.structure_key = structure_hash(self.args)
        self.hardware_params = hardware_params or HardwareParams.from_target(self.target)
        self.desc = desc or self.workload_key

    @property
    def flop_ct(self) -> float:
        """Floating-point operations of one run."""
        return self.compute_dag.flop_ct

    def make_schedule(self, seed: int | None = None):
        """A fresh tir.Schedule of the workload."""

        if not hasattr(self, "_func"):
            self._func = create_prim_func(self.args)
        sch = Schedule(self._func, seed=seed)
        sch.show_unit_loops = True  # the sketch rules count every loop of a stage
        return sch

    def tune(
        self,
        tuning_options: TuningOptions,
        search_policy: Any = None,
        adaptive_training: bool = False,
    ) -> Any:
        """Search for a fast program (see ``TuningOptions``); returns the tuning result."""

        return tune_task(self, tuning_options, search_policy)

    def apply_best(
        self, log_file: str, include_compatible: bool = False, layout_rewrite_option: Any = None
    ) -> tuple:
        """(schedule, args) of the fastest record of this task in ``log_file``.

        Build it with ``tvm.build(sch, args, target)``.
        """

        sch, args, _ = self._best(log_file)
        return sch, args

    def _best(self, log_file: str) -> tuple:
        inp, res = load_best_record(log_file, self)
        sch = self.make_schedule()
        Trace.from_json(inp.trace).apply_to_schedule(sch)
        return sch, list(self.args), res

    def print_best(self, log_file: str, print_mode: str = "schedule") -> str:
        """The best program as text: its trace as Python, its IR or its source.

        As in TVM it returns the text (``print(task.print_best(log))``); a notebook cell that
        ends with the call shows it as text, not as a quoted string. The best of an
        estimated log (``EmulatedRunner``) starts with a comment saying its time is the
        analytic model's estimate, not a measurement.
        """
        sch, args, res = self._best(log_file)
        comment = "//" if print_mode in ("cuda", "source", "ll") else "#"
        if print_mode == "schedule":
            text = str(sch.trace)
        elif print_mode in ("tir", "ir"):
            text = sch.mod.script()
        elif print_mode in ("cuda", "source", "ll"):
            cuda = self.target.kind == "cuda"
            if print_mode == "cuda" and not cuda:
                raise TaskError(
                    "print_mode='cuda' needs a CUDA target; this task targets "
                    f"{self.target}; use 'll' for LLVM IR"
                )
            if print_mode == "ll" and cuda:
                raise TaskError(
                    f"print_mode='ll' prints LLVM IR of a CPU task; this task targets "
                    f"{self.target}: use print_mode='cuda'"
                )
            comment = "//" if cuda else ";"
            text = build(sch, args, self.target).get_source("cuda" if cuda else "ll")
        else:
            raise TaskError(
                f"unknown print_mode {print_mode!r}; use 'schedule', 'tir' or 'cuda'/'ll'"
            )
        if res.estimated:
            text = f"{comment} {estimated_note(res.mean_cost)}\n{text}"
        return ProgramText(text)

    def __repr__(self) -> str:
        return f"SearchTask({self.workload_key}, target={self.target})"


def _check_call(name: str, fn: Callable, args: tuple) -> None:
    """Refuse arguments the workload function does not take, naming its parameters."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or C function: let the call speak
        return
    try:
        sig.bind(*args)
    except TypeError as err:
        raise TaskError(
            f"workload {name!r} takes {sig}, not args={tuple(args)!r} ({err}); pass args= "
            "matching its parameters"
        ) from None


def _decode_workload_key(key: str) -> tuple[str, tuple]:
    """(registered name, arguments) of a key made by ``SearchTask(func=, args=)``."""
    try:
        decoded = json.loads(key)
    except (TypeError, ValueError):
        decoded = None
    if not isinstance(decoded, list) or not decoded or not isinstance(decoded[0], str):
        raise TaskError(
            f"workload_key {key!r} is not a registered workload's key (a JSON list "
            "'[\"name\", arg, ...]', as task.workload_key prints); pass func= and args= or "
            "compute_dag= instead"
        )
    name, *args = decoded
    if name not in WORKLOAD_FUNC_REGISTRY:
        raise TaskError(
            f"workload_key names {name!r}, which is not registered in this "
            "process; run its @auto_scheduler.register_workload definition first"
        )

    # JSON turned tuples (strides, padding) into lists: give them back as tuples
    def as_tuples(a: Any) -> Any:
        return tuple(map(as_tuples, a)) if isinstance(a, list) else a

    return name, as_tuples(args)


class ProgramText(str):
    """A program's text (a plain ``str``) that IPython displays as the text itself."""

    __slots__ = ()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def _plain_args(args: Any) -> tuple:
    """``args`` as a tuple whose numpy scalars are Python ones.

    ``np.int64(8)`` would reach the workload key as the string "8" (json cannot write it),
    a key that then fails to rebuild the workload; as Python ints, the key replays.
    """
    if args is None:  # TVM's default: a workload without arguments
        return ()
    if not isinstance(args, (list, tuple)):
        raise TaskError(
            f"args={args!r} must be a tuple (or list) of the workload's arguments; write "
            f"args=({args!r},) for one argument"
        )

    def plain(x: Any) -> Any:
        if isinstance(x, (np.integer, np.floating, np.bool_)):
            return x.item()
        if type(x) in (list, tuple):  # a namedtuple keeps its own type and values
            return type(x)(plain(v) for v in x)
        return x

    return tuple(plain(a) for a in args)


def _plain(x: Any) -> Any:
    if isinstance(x, (np.integer, np.floating, np.bool_)):
        return x.item()
    if isinstance(x, (int, float, str, bool)) or x is None:
        return x
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return str(x)


def schedule_from_record(inp: Any):
    """Rebuild the schedule a record describes (from the DAG stored in the record)."""

    return rebuild_schedule(inp.dag, inp.trace)


def _check_measurer(role: str, value: Any, methods: tuple, example: str) -> None:
    """A runner/builder is "local", an object with the role's methods, or a context
    holding one (``LocalRPCMeasureContext().runner``)."""
    obj = getattr(value, role, value) if role == "runner" else value
    if obj == "local" or all(callable(getattr(obj, m, None)) for m in methods):
        return
    raise TaskError(
        f"{role}={value!r} is not a {role}: it has no {'/'.join(methods)} method; pass "
        f"'local', auto_scheduler.{example}"
        + (", LocalRPCMeasureContext().runner or a DaskRunner" if role == "runner" else "")
    )


@dataclass
class TuningOptions:
    """How long and how to tune (TVM's argument names)."""

    num_measure_trials: int = 0
    #: stop after this many measurements without a new best; None or negative: never
    #: (TVM's convention). 0 stops after the first round, which is always measured.
    early_stopping: int | None = None
    num_measures_per_round: int = 64
    verbose: int = 1
    builder: Any = "local"
    runner: Any = "local"
    measure_callbacks: list = field(default_factory=list)
    callbacks: list = field(default_factory=list)  # SearchCallback observers (widgets)
    check_correctness: bool = False
    num_threads: int | None = None

    def __post_init__(self) -> None:
        for name in ("num_measure_trials", "num_measures_per_round"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TaskError(f"{name} must be an int, got {type(value).__name__} {value!r}")
        if not isinstance(self.verbose, int):  # a bool is an int: True is 1
            raise TaskError(
                f"verbose must be an int (0: silent, 1: progress bar), got "
                f"{type(self.verbose).__name__} {self.verbose!r}"
            )
        es = self.early_stopping
        if es is not None and (isinstance(es, bool) or not isinstance(es, int)):
            raise TaskError(
                f"early_stopping must be an int (stop after that many measurements without "
                f"improvement) or None (never stop early), got {type(es).__name__} {es!r}"
            )
        if es is not None and es < 0:
            # TVM's convention (SketchPolicy::Search): negative means no early stopping
            self.early_stopping = None
        # a single callback where TVM wants a list is a common slip: accept it
        for name in ("measure_callbacks", "callbacks"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, (list, tuple)):
                setattr(self, name, [value])
        _check_measurer("runner", self.runner, ("run", "setup"), "LocalRunner()")
        _check_measurer("builder", self.builder, ("build",), "LocalBuilder()")
        for cb in self.measure_callbacks or []:
            if not callable(cb):
                raise TaskError(
                    f"measure_callbacks holds {cb!r}, which is not callable; to log to a "
                    "file write measure_callbacks=[auto_scheduler.RecordToFile(path)]"
                )
        if self.num_measure_trials < 0 or self.num_measures_per_round < 1:
            raise TaskError("num_measure_trials must be >= 0 and num_measures_per_round >= 1")
        if self.measure_callbacks is None:
            self.measure_callbacks = []
