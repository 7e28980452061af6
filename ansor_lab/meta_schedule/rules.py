"""``ms.ScheduleRule`` / ``ms.Mutator`` / ``ms.Postproc`` and the classes tutorials filter on.

Each MetaSchedule class names the part of our search that does the same job (the
``ansor`` attribute): ``MultiLevelTiling`` is the multi-level tiling sketch rule,
``ParallelizeVectorizeUnroll`` the random annotation of parallel/vectorize/unroll, and so
on. ``create("llvm")`` returns the default set; a custom list given to
``PostOrderApply`` selects the parts of the search that run (``rule_set.py``).
"""

from __future__ import annotations

from typing import Any

from ..errors import TaskError


class _Named:
    """A rule object: constructible with TVM's keyword arguments, compared by class."""

    ansor = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ScheduleRule(_Named):
    """A MetaSchedule schedule rule (``ScheduleRule.create("llvm")`` lists the defaults)."""

    @staticmethod
    def create(kind: str = "llvm") -> list:
        """The default rules of a target kind ("llvm" or "cuda")."""
        kind = _kind(kind)
        if kind == "cuda":
            return [
                AutoInline(), MultiLevelTiling(), CrossThreadReduction(), AutoBind(),
                ParallelizeVectorizeUnroll(),
            ]  # fmt: skip
        return [
            ApplyCustomRule(), InlineConstantScalars(), AutoInline(), AddRFactor(),
            MultiLevelTiling(), ParallelizeVectorizeUnroll(), RandomComputeLocation(),
        ]  # fmt: skip


class ApplyCustomRule(ScheduleRule):
    ansor = "(blocks with a custom rule: none here)"


class InlineConstantScalars(ScheduleRule):
    ansor = "always-inline rule"


class AutoInline(ScheduleRule):
    ansor = "inline rules (always-inline, inline into consumers)"


class AddRFactor(ScheduleRule):
    ansor = "rfactor rule"


class MultiLevelTiling(ScheduleRule):
    ansor = "multi-level tiling (SSRSRS), with fused consumers and cache-write"


class MultiLevelTilingWithIntrin(MultiLevelTiling):
    ansor = "(tensor intrinsics are out of scope)"


class ParallelizeVectorizeUnroll(ScheduleRule):
    ansor = "random annotation: parallel outer loops, vectorize inner, unroll budget"


class RandomComputeLocation(ScheduleRule):
    ansor = "sampled compute location of untiled stages"


class CrossThreadReduction(ScheduleRule):
    ansor = "cross-thread reduction (GPU)"


class AutoBind(ScheduleRule):
    ansor = "thread binding (GPU)"


class Mutator(_Named):
    """A MetaSchedule mutator (``Mutator.create("llvm")``: {mutator: probability})."""

    @staticmethod
    def create(kind: str = "llvm") -> dict:
        """The default mutators of a target kind with their probabilities."""
        kind = _kind(kind)
        probs = {MutateTileSize(): 0.9, MutateComputeLocation(): 0.05, MutateUnroll(): 0.03}
        if kind == "llvm":
            probs[MutateParallel(max_jobs_per_core=16)] = 0.02
        return probs


class MutateTileSize(Mutator):
    ansor = "tile-size mutation"


class MutateParallel(Mutator):
    ansor = "parallel-depth mutation"


class MutateUnroll(Mutator):
    ansor = "unroll-budget mutation"


class MutateComputeLocation(Mutator):
    ansor = "compute-location mutation"


class MutateThreadBinding(Mutator):
    ansor = "thread-binding mutation (GPU)"


class Postproc(_Named):
    """A MetaSchedule postprocessor (``Postproc.create("llvm")``)."""

    @staticmethod
    def create(kind: str = "llvm") -> list:
        """The default postprocessors of a target kind."""
        _kind(kind)
        return [
            DisallowDynamicLoop(), RewriteParallelVectorizeUnroll(), RewriteReductionBlock(),
            RewriteLayout(),
        ]  # fmt: skip


class DisallowDynamicLoop(Postproc):
    ansor = "(shapes are static)"


class RewriteParallelVectorizeUnroll(Postproc):
    ansor = "applying the sampled parallel/vectorize/unroll"


class RewriteReductionBlock(Postproc):
    ansor = "reduction init placement (done in lowering)"


class RewriteLayout(Postproc):
    ansor = "packing sketches (+pack)"


def _kind(kind: Any) -> str:
    name = str(getattr(kind, "kind", kind)).split()[0]
    if name not in ("llvm", "cuda"):
        raise TaskError(f"rules exist for 'llvm' and 'cuda', not {kind!r}")
    return name
