"""``from tvm import meta_schedule as ms`` runs the MLC chapter's flow on our search."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import meta_schedule as ms
from ansor_lab.auto_scheduler import load_records
from ansor_lab.errors import TaskError
from ansor_lab.script import from_source, ir as I, tir as T  # noqa: N812 - TVM's aliases

TARGET = "llvm --num-cores=1"


@I.ir_module
class MyModule:
    @T.prim_func
    def main(
        A: T.Buffer((64, 64), "float32"),
        B: T.Buffer((64, 64), "float32"),
        C: T.Buffer((64, 64), "float32"),
    ):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def stochastic_schedule_mm(sch: tvm.tir.Schedule):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def _check(sch) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    c = np.empty((64, 64), "float32")
    tvm.build(sch.mod, target="llvm")(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_stochastic_schedule_function_space(tmp_path):
    database = ms.tune_tir(
        mod=MyModule,
        target=TARGET,
        max_trials_global=6,
        num_trials_per_iter=3,
        space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
        work_dir=str(tmp_path),
        task_name="main",
        seed=1,
    )
    records = database.get_all_tuning_records()
    # distinct programs only: j's 2-way splits under the default innermost limit
    assert 2 <= len(records) <= 6
    assert len({str(r.trace) for r in records}) == len(records)
    sch = ms.tir_integration.compile_tir(database, MyModule, TARGET)
    assert "decompose_reduction" in str(sch.trace)
    best = database.get_top_k(top_k=1)[0]
    assert sum(best.run_secs) / len(best.run_secs) == min(
        sum(r.run_secs) / len(r.run_secs) for r in records if r.run_secs
    )
    _check(sch)
    # the work dir's log is an ordinary tuning log (the widgets and viewer read it)
    assert len(list(load_records(database.path))) == len(records)


def test_default_space_is_the_sketch_search(tmp_path):
    database = ms.tune_tir(MyModule, TARGET, str(tmp_path), 4, num_trials_per_iter=4, seed=0)
    sch = ms.tir_integration.compile_tir(database, MyModule, TARGET)
    assert "sample_perfect_tile" in str(sch.trace)
    _check(sch)


def test_old_config_form_returns_the_schedule(tmp_path):
    sch = ms.tune_tir(
        mod=MyModule,
        target=TARGET,
        config=ms.TuneConfig(max_trials_global=2, num_trials_per_iter=2),
        space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
        work_dir=str(tmp_path),
    )
    _check(sch)


def test_rule_classes_and_custom_lists():
    rules = ms.ScheduleRule.create("llvm")
    names = {type(r).__name__ for r in rules}
    assert {"MultiLevelTiling", "ParallelizeVectorizeUnroll", "AutoInline"} <= names
    assert isinstance(rules[0], ms.ScheduleRule)
    probs = ms.Mutator.create("llvm")
    assert any(isinstance(m, ms.mutator.MutateParallel) for m in probs)
    assert abs(sum(probs.values()) - 1.0) < 1e-9
    ms.space_generator.PostOrderApply(sch_rules=rules).check_supported()
    with pytest.raises(TaskError, match="f_block_filter"):
        ms.space_generator.PostOrderApply(f_block_filter=lambda b: True).check_supported()


def test_unplain_module_and_missing_records_are_clear(tmp_path):
    hand = from_source(
        '@T.prim_func\ndef main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):\n'
        "    for i in range(8):\n        B[i] = A[i]\n        B[i] = B[i] + A[i]\n"
    )
    with pytest.raises(TaskError, match="cannot be tuned"):
        ms.tune_tir(hand, TARGET, str(tmp_path), 2)
    empty = ms.database.JSONDatabase(work_dir=str(tmp_path / "none"))
    assert empty.query_schedule(MyModule, TARGET) is None
    with pytest.raises(TaskError, match="no record"):
        ms.tir_integration.compile_tir(empty, MyModule, TARGET)
