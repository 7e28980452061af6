"""``ms.tune_tir`` on our search: a PrimFunc or IRModule in, a Database out."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..codegen.target import as_target
from ..dsl.dag import ComputeDAG
from ..errors import TaskError
from ..ir.nodes import IRModule, PrimFunc
from ..measure.records import RecordToFile
from ..search.policy import SketchPolicy
from ..search.task import SearchTask, TuningOptions
from .database import JSONDatabase
from .rule_set import RuleSetPolicy, rule_set
from .schedule_fn_policy import ScheduleFnPolicy
from .space_generator import ScheduleFn, as_space


@dataclass
class TuneConfig:
    """The older ``tune_tir(config=ms.TuneConfig(...))`` form (TVM 0.10-0.11)."""

    max_trials_global: int = 64
    num_trials_per_iter: int = 64
    max_trials_per_task: int | None = None
    strategy: str = "evolutionary"


def _function(mod: Any, name: str) -> PrimFunc:
    if isinstance(mod, PrimFunc):
        return mod
    if isinstance(mod, IRModule):
        if name in mod.functions:
            return mod[name]
        if len(mod.functions) == 1:
            return next(iter(mod.functions.values()))
        raise TaskError(
            f"the module has functions {sorted(mod.functions)}; name one with task_name="
        )
    raise TaskError(f"tune_tir takes a PrimFunc or an IRModule, got {type(mod).__name__}")


def task_of(mod: Any, target: Any, name: str = "main") -> SearchTask:
    """The search task of a module's function (its compute definitions)."""
    func = _function(mod, name)
    # symbolic shapes: the symbolic tensors, so the DAG refuses them by name (not the probe)
    args = getattr(func.source, "symbolic_args", None) or getattr(func.source, "args", None)
    if args is None:
        why = getattr(func.source, "reason", "it was not made by te.create_prim_func")
        raise TaskError(
            f"function {func.name!r} cannot be tuned: {why}. The search tunes programs whose "
            "blocks each have their own loop nest (as te.create_prim_func makes them)"
        )
    return SearchTask(compute_dag=ComputeDAG(list(args)), target=as_target(target or "llvm"))


def tune_tir(
    mod: Any,
    target: Any,
    work_dir: str | None = None,
    max_trials_global: int | None = None,
    *,
    num_trials_per_iter: int = 64,
    max_trials_per_task: int | None = None,
    space: Any = "post-order-apply",
    strategy: Any = "evolutionary",
    seed: int | None = None,
    task_name: str = "main",
    config: TuneConfig | None = None,
    builder: Any = "local",
    runner: Any = "local",
    database: Any = None,
    cost_model: Any = None,
    num_tuning_cores: Any = None,
    verbose: int = 0,
    **_ignored: Any,
) -> Any:
    """Tune ``mod`` for ``target``; the records go to ``work_dir`` (a Database is returned).

    ``space`` is "post-order-apply" (Ansor's sketches and random annotation, searched
    with the cost model) or ``ms.space_generator.ScheduleFn(fn)`` (a stochastic schedule
    function replayed with fresh decisions). With the older ``config=ms.TuneConfig(...)``
    it returns the best schedule, as TVM 0.10 did.
    """
    if config is not None:
        max_trials_global = config.max_trials_global
        num_trials_per_iter = config.num_trials_per_iter
    if max_trials_global is None:
        raise TaskError("tune_tir needs max_trials_global= (how many programs to measure)")
    if work_dir is None:
        raise TaskError("tune_tir needs work_dir= (where the tuning records are kept)")
    if max_trials_per_task is not None:
        max_trials_global = min(max_trials_global, max_trials_per_task)
    task = task_of(mod, target, task_name)
    db = database if database is not None else JSONDatabase(work_dir=work_dir)
    os.makedirs(work_dir, exist_ok=True)
    generator = as_space(space)
    if isinstance(generator, ScheduleFn):
        policy: Any = ScheduleFnPolicy(task, generator.sch_fn, seed)
    else:
        generator.check_supported()
        kept = rule_set(generator, task.target.kind)
        if kept is None:
            policy = SketchPolicy(task, seed=seed, verbose=verbose)
        else:
            policy = RuleSetPolicy(task, kept, seed=seed, verbose=verbose)
    options = TuningOptions(
        num_measure_trials=int(max_trials_global),
        num_measures_per_round=int(num_trials_per_iter),
        measure_callbacks=[RecordToFile(db.path)],
        verbose=verbose,
        builder=builder,
        runner=runner,
    )
    task.tune(options, search_policy=policy)
    if config is not None:
        return db.query_schedule(mod, target, task_name)
    return db


def compile_tir(database: Any, mod: Any, target: Any) -> Any:
    """The best schedule of ``mod`` in ``database`` (``ms.tir_integration.compile_tir``)."""
    sch = database.query_schedule(mod, target, "main")
    if sch is None:
        raise TaskError(
            f"{database!r} holds no record for this module and target; tune it first "
            "(ms.tune_tir(mod, target, work_dir, max_trials_global))"
        )
    return sch
