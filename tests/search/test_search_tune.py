"""The tutorial flow end to end: tune, check every program, apply / print the best, resume.

One test runs the whole flow on one short search (two rounds on a 32^3 matmul), each
step a helper below: a module-scoped fixture would run the search once per xdist worker.
"""

from __future__ import annotations

import contextlib
import io
import shutil

import IPython.lib.pretty
import numpy as np
import pytest
from search_helpers import check_numeric, record_key
from workloads import FAST_PARAMS, TARGET, fast_options

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te
from ansor_lab.search.task import schedule_from_record

TRIALS, PER_ROUND = 16, 8


@auto_scheduler.register_workload(override=True)
def search_test_matmul(N, L, M, dtype):
    A = te.placeholder((N, L), name="A", dtype=dtype)
    B = te.placeholder((L, M), name="B", dtype=dtype)
    k = te.reduce_axis((0, L), name="k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]


def new_task():
    return auto_scheduler.SearchTask(
        func=search_test_matmul, args=(32, 32, 32, "float32"), target=TARGET
    )


def test_tutorial_flow(tmp_path):
    log = str(tmp_path / "matmul.json")
    task = new_task()
    # finalists 0: every program measured once, as TVM's search does (the re-measured
    # finalists of a small search are tested in test_search_selection.py)
    params = {**FAST_PARAMS, "finalists": 0}
    policy = auto_scheduler.SketchPolicy(task, params=params, seed=0, verbose=0)
    result = task.tune(fast_options(log, TRIALS, PER_ROUND), search_policy=policy)
    tuned = (task, log, result)
    every_measured_program_is_correct(tuned)
    recorded_traces_replay_to_correct_programs(tuned)
    stats_history_and_best(tuned)
    apply_best_builds_the_fastest_program(tuned)
    print_best_modes(tuned)
    resume_skips_measured_programs_and_trains_the_model(tuned, tmp_path)


def every_measured_program_is_correct(tuned):
    task, log, result = tuned
    records = list(auto_scheduler.load_records(log))
    assert len(records) == TRIALS == result.stats.trials
    errors = [(r.error_kind, r.error_msg[:300]) for _, r in records if r.error_no != 0]
    assert not [e for e in errors if e[0] == "WRONG_ANSWER"]
    assert not errors  # tiny matmuls: every candidate builds, runs and checks out
    assert len({record_key(inp) for inp, _ in records}) == TRIALS  # no program twice
    for inp, res in records:
        assert inp.workload_key == task.workload_key
        assert inp.target == str(task.target)
        assert len(res.costs) == 1 and 0 < res.costs[0] < 0.1


def recorded_traces_replay_to_correct_programs(tuned):
    task, log, _ = tuned
    records = list(auto_scheduler.load_records(log))
    for inp, _ in records[:: len(records) // 3][:3]:
        sch = schedule_from_record(inp)  # from the DAG stored in the record
        check_numeric(sch, sch.args)


def stats_history_and_best(tuned):
    task, log, result = tuned
    costs = [r.mean_cost for _, r in auto_scheduler.load_records(log)]
    stats = result.stats
    assert [h[0] for h in stats.history] == list(range(1, TRIALS + 1))
    assert [h[1] for h in stats.history] == pytest.approx(costs)
    assert [h[2] for h in stats.history] == pytest.approx(np.minimum.accumulate(costs))
    assert result.best_cost == pytest.approx(min(costs))
    assert stats.best_gflops == pytest.approx(task.flop_ct / min(costs) / 1e9)
    assert stats.errors == 0 and stats.search_time > 0 and stats.measure_time > 0
    assert result.log_file == log and not result.stopped_early


def apply_best_builds_the_fastest_program(tuned):
    task, log, result = tuned
    inp, res = auto_scheduler.load_best_record(log, task)
    assert res.mean_cost == pytest.approx(result.best_cost)
    sch, args = task.apply_best(log)
    assert (
        sch.trace.as_json() == inp.trace
        or sch.mod.script() == schedule_from_record(inp).mod.script()
    )
    f = tvm.build(sch, args, "llvm")
    a = np.random.default_rng(0).uniform(-1, 1, (32, 32)).astype("float32")
    b = np.random.default_rng(1).uniform(-1, 1, (32, 32)).astype("float32")
    c = np.zeros((32, 32), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    best_sch, _ = result.apply_best()
    assert best_sch.mod.script() == sch.mod.script()


def print_best_modes(tuned):
    task, log, _ = tuned
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        text = task.print_best(log)
    assert text.startswith("def apply_trace(sch):")
    assert "sample_perfect_tile(" in text and "sch.enter_postproc()" in text
    # returned, not printed, as in TVM: `print(task.print_best(log))` shows it once
    assert out.getvalue() == ""
    # IPython shows the text itself, not a quoted one-line string
    assert IPython.lib.pretty.pretty(text) == str(text)
    tir_text = task.print_best(log, print_mode="tir")
    ll = task.print_best(log, print_mode="ll")
    assert "def main(" in tir_text and "for " in tir_text
    assert "define" in ll and "@main" in ll
    with pytest.raises(Exception, match="needs a CUDA target"):
        task.print_best(log, print_mode="cuda")


def resume_skips_measured_programs_and_trains_the_model(tuned, tmp_path):
    _, first_log, _ = tuned
    log = str(tmp_path / "resume.json")
    shutil.copy(first_log, log)
    first = list(auto_scheduler.load_records(log))

    task = new_task()  # a fresh task object, as in a new session
    model = auto_scheduler.XGBModel()
    assert model.update_from_file(log) == TRIALS
    assert model.num_samples == TRIALS and model.model is not None
    policy = auto_scheduler.SketchPolicy(
        task,
        model,
        params={**FAST_PARAMS, "finalists": 0},
        seed=1,
        verbose=0,
        init_search_callbacks=[auto_scheduler.PreloadMeasuredStates(log)],
    )
    assert len(policy.measured) == TRIALS
    assert policy.best_cost == pytest.approx(min(r.mean_cost for _, r in first))
    # the preload saw the same records: the model does not learn them twice
    assert model.num_samples == TRIALS
    result = task.tune(fast_options(log, 8, 8), search_policy=policy)

    records = list(auto_scheduler.load_records(log))
    assert len(records) == TRIALS + 8
    assert [record_key(i) for i, _ in records[:TRIALS]] == [record_key(i) for i, _ in first]
    old = {record_key(i) for i, _ in first}
    new = [record_key(i) for i, _ in records[TRIALS:]]
    assert not old & set(new) and len(set(new)) == 8
    assert all(r.error_no == 0 for _, r in records[TRIALS:])
    assert model.num_samples == TRIALS + 8  # the model kept learning
    # the resumed search starts from the best of the log
    assert result.best_cost <= min(r.mean_cost for _, r in first)
