"""A custom ``PostOrderApply(sch_rules=, postprocs=, mutator_probs=)`` as a part of our search.

MetaSchedule's space is the schedule rules applied to every block; ours is Ansor's sketch
rules plus random annotation. A custom rule list selects which of our sketch rules run
and which parts of the annotation are sampled:

================================  ==================================================
MetaSchedule rule                 our part
================================  ==================================================
AutoInline, InlineConstantScalars the always-inline rule
MultiLevelTiling                  multi-level tiling (with fused consumers and
                                  cache-write), the column-reduction tiling
AddRFactor                        Ansor's rfactor rule (and, with
                                  ParallelizeVectorizeUnroll, the vector-lane rfactor)
RandomComputeLocation             sampled compute locations, the row fusion of
                                  reductions into their consumer's rows
ParallelizeVectorizeUnroll        sampled parallel depth, unroll budget, vectorized
                                  innermost loop
CrossThreadReduction (cuda)       the cross-thread reduction rule
AutoBind (cuda)                   thread binding (a GPU program always needs it)
ApplyCustomRule                   nothing (no block carries a custom rule here)
================================  ==================================================

Mutators select which sampled decisions evolution may change: MutateTileSize (tile
sizes), MutateUnroll (unroll budgets), MutateParallel (parallel depth),
MutateComputeLocation (compute locations), MutateThreadBinding (GPU thread counts).
Postprocs: RewriteParallelVectorizeUnroll applies the sampled annotation; without it the
annotation is not applied. A class we have no counterpart for is refused by name.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..errors import TaskError
from ..search.gpu_postproc import apply_gpu_postproc
from ..search.gpu_sketch import GPU_UNROLL_CHOICES, annotate_gpu, gpu_rules
from ..search.policy import SketchPolicy
from ..search.postproc import apply_postproc
from ..search.sketch import RULES, UNROLL_CHOICES, annotate_sampling, generate_sketches
from ..search.space import SearchSpace
from . import rules as R

#: our sketch rules (by name) per MetaSchedule rule class, CPU then GPU
_CPU_RULES = {
    R.AutoInline: {"always_inline"},
    R.InlineConstantScalars: {"always_inline"},
    R.MultiLevelTiling: {
        "multi_level_tiling_with_fusion",
        "multi_level_tiling",
        "column_reduction",
    },
    R.AddRFactor: {"add_rfactor"},
    R.RandomComputeLocation: {"fuse_rows"},
    R.ParallelizeVectorizeUnroll: set(),
    R.ApplyCustomRule: set(),
}
_GPU_RULES = {
    R.AutoInline: {"always_inline"},
    R.InlineConstantScalars: {"always_inline"},
    R.MultiLevelTiling: {"multi_level_tiling"},
    R.CrossThreadReduction: {"cross_thread_reduction"},
    R.RandomComputeLocation: {"special_compute_location"},
    R.AutoBind: set(),
    R.ParallelizeVectorizeUnroll: set(),
    R.ApplyCustomRule: set(),
}
_MUTATORS = (
    R.MutateTileSize,
    R.MutateUnroll,
    R.MutateParallel,
    R.MutateComputeLocation,
    R.MutateThreadBinding,
)
_POSTPROCS = (
    R.DisallowDynamicLoop,
    R.RewriteParallelVectorizeUnroll,
    R.RewriteReductionBlock,
    R.RewriteLayout,
)


def _names(classes: Any) -> str:
    return ", ".join(sorted(c.__name__ for c in classes))


def _unknown(what: str, item: Any, known: Any) -> TaskError:
    name = type(item).__name__ if not isinstance(item, type) else item.__name__
    return TaskError(
        f"PostOrderApply({what}=...): {name} has no counterpart in our search; "
        f"the ones we have: {_names(known)}"
    )


@dataclass(frozen=True)
class RuleSet:
    """Which parts of the sketch search a custom PostOrderApply keeps."""

    sketch_rules: frozenset  # our SketchRule names
    compute_location: bool  # RandomComputeLocation
    parallel_vectorize_unroll: bool  # ParallelizeVectorizeUnroll
    mutators: frozenset  # the Mutator classes kept (probability > 0)
    rewrite_pvu: bool  # the RewriteParallelVectorizeUnroll postproc

    def may_mutate(self, inst: Any) -> bool:
        """Whether evolution may change the decision of sampling step ``inst``."""
        if inst.kind == "SamplePerfectTile":
            return R.MutateTileSize in self.mutators
        if inst.kind == "SampleComputeLocation":
            return R.MutateComputeLocation in self.mutators
        if inst.kind == "SampleCategorical":
            cands = tuple(inst.arg("candidates"))
            if cands in (UNROLL_CHOICES, GPU_UNROLL_CHOICES):
                return R.MutateUnroll in self.mutators
            if cands == (1, 2, 3):
                return R.MutateParallel in self.mutators
            return R.MutateThreadBinding in self.mutators
        return True


def rule_set(space: Any, kind: str) -> RuleSet | None:
    """The parts of our search a PostOrderApply keeps (None: the full default search)."""
    table = _GPU_RULES if kind == "cuda" else _CPU_RULES
    custom_rules = space.sch_rules not in (None, "from-target")
    custom_mut = space.mutator_probs not in (None, "from-target")
    custom_post = space.postprocs not in (None, "from-target")
    if not (custom_rules or custom_mut or custom_post):
        return None
    if custom_rules:
        classes = []
        for rule in space.sch_rules:
            if type(rule) not in table:  # subclasses (MultiLevelTilingWithIntrin) too
                raise _unknown("sch_rules", rule, table)
            classes.append(type(rule))
    else:
        classes = list(table)
    names = set().union(*(table[c] for c in classes)) if classes else set()
    pvu = R.ParallelizeVectorizeUnroll in classes
    if kind != "cuda" and pvu and {R.AddRFactor, R.MultiLevelTiling} <= set(classes):
        # its partial results live in vectorized lanes, beside the tiling alternatives
        names.add("vector_rfactor")
    if custom_mut:
        kept = set()
        for m, p in dict(space.mutator_probs).items():
            if type(m) not in _MUTATORS:
                raise _unknown("mutator_probs", m, _MUTATORS)
            if float(p) > 0:
                kept.add(type(m))
    else:
        kept = set(_MUTATORS)
    if custom_post:
        for p in space.postprocs:
            if type(p) not in _POSTPROCS:
                raise _unknown("postprocs", p, _POSTPROCS)
        rewrite = any(type(p) is R.RewriteParallelVectorizeUnroll for p in space.postprocs)
    else:
        rewrite = True
    return RuleSet(
        sketch_rules=frozenset(names),
        compute_location=R.RandomComputeLocation in classes,
        parallel_vectorize_unroll=pvu,
        mutators=frozenset(kept),
        rewrite_pvu=rewrite,
    )


def _no_postproc(sch: Any) -> None:
    sch.enter_postproc()


class RuleSetPolicy(SketchPolicy):
    """The sketch policy restricted to a ``RuleSet`` (a custom PostOrderApply)."""

    def __init__(self, task: Any, rules: RuleSet, **kwargs: Any) -> None:
        self.rule_set = rules
        super().__init__(task, **kwargs)
        post = apply_gpu_postproc if self.is_gpu else apply_postproc
        if not (rules.rewrite_pvu and (rules.parallel_vectorize_unroll or self.is_gpu)):
            post = _no_postproc  # nothing sampled to apply: no vectorize / unroll / parallel
        self.space = SearchSpace(self.sketches, task.make_schedule, seed=self.seed, postproc=post)
        self.space.mutable = rules.may_mutate

    def generate_sketches(self, print_for_debug: bool = False) -> list:
        """The sketches of the rules the PostOrderApply kept."""
        hw = self.task.hardware_params
        keep = self.rule_set
        self.dropped_sketches = Counter()
        if self.is_gpu:  # the thread binding always runs: a GPU program needs its threads
            rules = gpu_rules(hw.max_threads_per_block, hw.warp_size)
            annotate = lambda sch: annotate_gpu(sch, hw.max_threads_per_block)  # noqa: E731
        else:
            rules = list(RULES)

            def annotate(sch: Any) -> None:
                annotate_sampling(
                    sch,
                    hw.num_cores,
                    compute_location=keep.compute_location,
                    parallel_vectorize_unroll=keep.parallel_vectorize_unroll,
                )

        rules = [r for r in rules if r.name in keep.sketch_rules]
        sketches = generate_sketches(
            self._start, rules=rules, annotate=annotate, dropped=self.dropped_sketches
        )
        if print_for_debug:
            for s in sketches:
                print(s)
        return sketches
