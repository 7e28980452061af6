"""``PostOrderApply`` with a custom rule list selects the parts of our sketch search."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import meta_schedule as ms, te
from ansor_lab.errors import TaskError
from ansor_lab.meta_schedule.rule_set import RuleSetPolicy, rule_set
from ansor_lab.search.task import SearchTask

TARGET = "llvm --num-cores=1"

#: trace steps only the annotation and its post-processing make
ANNOTATION_STEPS = ("parallel(", "vectorize(", "unroll(", "annotate(", "sample_categorical(")


def _matmul_task(n: int = 64) -> SearchTask:
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, n), lambda i, j: te.max(C[i, j], 0.0), name="D")
    return SearchTask(compute_dag=tvm.auto_scheduler.ComputeDAG([A, B, D]), target=TARGET)


def _matmul_module():
    A = te.placeholder((64, 64), name="A")
    B = te.placeholder((64, 64), name="B")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([A, B, C])})


def test_tune_tir_with_only_multi_level_tiling(tmp_path):
    MyModule = _matmul_module()  # noqa: N806 - the tutorials' name
    space = ms.space_generator.PostOrderApply(
        sch_rules=[ms.schedule_rule.MultiLevelTiling(structure="SSRSRS")]
    )
    db = ms.tune_tir(
        MyModule, TARGET, max_trials_global=8, num_trials_per_iter=4,
        work_dir=str(tmp_path), space=space, seed=0,
    )  # fmt: skip
    records = db.get_all_tuning_records()
    assert len(records) == 8
    for r in records:
        text = str(r.trace)
        assert "sample_perfect_tile(" in text and "split(" in text and "reorder(" in text
        assert not [s for s in ANNOTATION_STEPS if s in text], text
    sch = ms.tir_integration.compile_tir(db, MyModule, TARGET)
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    c = np.empty((64, 64), "float32")
    tvm.build(sch.mod, target="llvm")(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_rules_select_sketches_and_annotation():
    task = _matmul_task()
    only_inline = rule_set(
        ms.space_generator.PostOrderApply(sch_rules=[ms.schedule_rule.AutoInline()]), "llvm"
    )
    assert only_inline.sketch_rules == {"always_inline"}
    assert not only_inline.parallel_vectorize_unroll and not only_inline.compute_location
    policy = RuleSetPolicy(task, only_inline, seed=0, verbose=0)
    assert [s.describe() for s in policy.sketches] == ["default loops"]
    tiled = RuleSetPolicy(
        task,
        rule_set(
            ms.space_generator.PostOrderApply(
                sch_rules=[
                    ms.schedule_rule.MultiLevelTiling(),
                    ms.schedule_rule.ParallelizeVectorizeUnroll(),
                ]
            ),
            "llvm",
        ),
        seed=0,
        verbose=0,
    )
    assert all("tile" in s.describe() for s in tiled.sketches)
    text = str(tiled.sketches[0].trace)
    assert "sample_categorical(" in text  # the unroll budget is sampled
    cand, sch = tiled.space.sample(0)
    assert "vectorize(" in str(sch.trace)  # and the post-processor applies it
    full = rule_set(ms.space_generator.PostOrderApply(), "llvm")
    assert full is None  # the default: the whole sketch search


def test_mutator_probs_select_what_evolution_changes():
    task = _matmul_task()
    rules = rule_set(
        ms.space_generator.PostOrderApply(
            sch_rules=[
                ms.schedule_rule.MultiLevelTiling(),
                ms.schedule_rule.ParallelizeVectorizeUnroll(),
            ],
            mutator_probs={ms.mutator.MutateUnroll(): 1.0, ms.mutator.MutateTileSize(): 0.0},
        ),
        "llvm",
    )
    assert rules.mutators == {ms.mutator.MutateUnroll}
    policy = RuleSetPolicy(task, rules, seed=3, verbose=0)
    cand, _ = policy.space.sample(0)
    kinds = policy.space._kinds[0]
    changed = set()
    for _ in range(40):
        child = policy.space.mutate(cand)
        assert child is not None
        changed |= {k for k, (x, y) in enumerate(zip(cand.decisions, child.decisions)) if x != y}
    assert changed and all(kinds[k].kind == "SampleCategorical" for k in changed)
    assert all(tuple(kinds[k].arg("candidates")) == (0, 16, 64, 512) for k in changed)


def test_rules_without_counterpart_are_named():
    class MyRule(ms.ScheduleRule):
        pass

    for bad, what in [
        (
            dict(sch_rules=[ms.schedule_rule.MultiLevelTilingWithIntrin()]),
            "MultiLevelTilingWithIntrin",
        ),
        (dict(sch_rules=[MyRule()]), "MyRule"),
        (dict(mutator_probs={ms.mutator.MutateThreadBinding(): 1.0, MyRule(): 0.5}), "MyRule"),
    ]:
        with pytest.raises(
            TaskError,
            match=f"{what} has no counterpart.*(MultiLevelTiling|MutateTileSize)",
        ):
            rule_set(ms.space_generator.PostOrderApply(**bad), "llvm")
    with pytest.raises(TaskError, match="CrossThreadReduction has no counterpart"):
        rule_set(
            ms.space_generator.PostOrderApply(sch_rules=[ms.schedule_rule.CrossThreadReduction()]),
            "llvm",
        )
    cuda = rule_set(
        ms.space_generator.PostOrderApply(sch_rules=[ms.schedule_rule.CrossThreadReduction()]),
        "cuda",
    )
    assert cuda.sketch_rules == {"cross_thread_reduction"}
