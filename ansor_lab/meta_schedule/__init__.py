"""``from tvm import meta_schedule as ms`` on ansor_lab's search.

``ms.tune_tir`` / ``ms.tir_integration.compile_tir`` tune a TensorIR function (a
``te.create_prim_func`` result or a parsed TVMScript module) with the auto-scheduler's
search, or over a user's stochastic schedule function (``space_generator.ScheduleFn``).
The rule, mutator and postproc classes tutorials name exist (``ScheduleRule.create``),
each mapped onto the part of the search doing the same job; a custom list given to
``PostOrderApply`` selects which parts run. Records live in ``work_dir`` as an ordinary tuning log.
"""

from __future__ import annotations

from types import SimpleNamespace

from . import database, rules as _rules, space_generator, tir_integration
from .database import Database, JSONDatabase, TuningRecord
from .rules import Mutator, Postproc, ScheduleRule
from .space_generator import PostOrderApply, ScheduleFn, SpaceGenerator
from .tune import TuneConfig, compile_tir, tune_tir


def _family(base: type) -> SimpleNamespace:
    return SimpleNamespace(
        **{k: v for k, v in vars(_rules).items() if isinstance(v, type) and issubclass(v, base)}
    )


#: ``ms.schedule_rule.ParallelizeVectorizeUnroll`` and friends
schedule_rule = _family(_rules.ScheduleRule)
#: ``ms.mutator.MutateParallel`` and friends
mutator = _family(_rules.Mutator)
#: ``ms.postproc.RewriteParallelVectorizeUnroll`` and friends
postproc = _family(_rules.Postproc)

__all__ = [
    "Database",
    "JSONDatabase",
    "Mutator",
    "PostOrderApply",
    "Postproc",
    "ScheduleFn",
    "ScheduleRule",
    "SpaceGenerator",
    "TuneConfig",
    "TuningRecord",
    "compile_tir",
    "database",
    "mutator",
    "postproc",
    "schedule_rule",
    "space_generator",
    "tir_integration",
    "tune_tir",
]
