"""Explaining records of a log: sketch of origin, measured vs predicted, the weighed
features with this program's values, trace diffs, which sketches win, the top-k browser.

The log is synthetic (real candidates of the search, made-up costs), so the expected
numbers are known exactly and the test measures nothing.
"""

from __future__ import annotations

import numpy as np
import pytest

from ansor_lab import auto_scheduler, te
from ansor_lab.jupyter import explain as X
from ansor_lab.measure.records import MeasureResult, save_records
from ansor_lab.measure.workers import rebuild_schedule
from ansor_lab.schedule.lower import lower_state

N_RECORDS = 12


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    A = te.placeholder((16, 16), name="A")
    B = te.placeholder((16, 16), name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((16, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG([A, B, C]), target="llvm"
    )
    policy = auto_scheduler.SketchPolicy(
        task,
        verbose=0,
        seed=1,
        params={"sample_init_min_population": N_RECORDS, "population": 16, "generations": 1},
    )
    inputs = policy.next_batch(N_RECORDS)
    assert len(inputs) == N_RECORDS
    # a made-up cost per candidate; record 5 fails
    costs = [1e-4 * (1 + (7 * n) % N_RECORDS) for n in range(N_RECORDS)]
    results = [MeasureResult([c]) for c in costs]
    results[5] = MeasureResult([], error_no=4, error_msg="the kernel crashed")
    log = str(tmp_path_factory.mktemp("explain") / "log.json")
    save_records(log, inputs, results)
    return task, policy, inputs, results, log


def features_of(inp) -> np.ndarray:
    sch = rebuild_schedule(inp.task.dag_json, inp.trace)
    return auto_scheduler.program_features(lower_state(sch.state, sch.args, simplify=False))


def test_top_records_are_sorted_by_cost(logged) -> None:
    task, _, _, results, log = logged
    top = X.top_records(log, 4)
    costs = [r.mean_cost for r in results]
    want = sorted((c, n) for n, c in enumerate(costs) if np.isfinite(c))[:4]
    assert [idx for idx, _, _ in top] == [n for _, n in want]


def test_explain_the_best_record(logged) -> None:
    task, policy, inputs, results, log = logged
    best = min(range(N_RECORDS), key=lambda n: results[n].mean_cost)
    e = X.explain_record(log)
    assert e.index == best and e.rank == 1 and e.measured_score == 1.0
    assert e.sketch == inputs[best].sketch
    assert e.sketch_description == policy.sketches[e.sketch].describe()
    assert e.seconds == results[best].mean_cost
    assert e.gflops == pytest.approx(task.flop_ct / results[best].mean_cost / 1e9)
    assert e.diff == [] and e.reference == f"the best record ({best})"
    assert "same trace as the best record" in str(e) and "<table>" in e._repr_html_()


def test_explain_with_a_model_and_a_diff(logged) -> None:
    task, policy, inputs, results, log = logged
    model = auto_scheduler.RandomForestModel(min_samples=2)
    feats = [features_of(inp) for inp in inputs]
    model.update(feats, [r.mean_cost for r in results], [task.workload_key] * N_RECORDS)
    worst = max((n for n in range(N_RECORDS) if n != 5), key=lambda n: results[n].mean_cost)
    best = min(range(N_RECORDS), key=lambda n: results[n].mean_cost)
    e = X.explain_record(log, worst, model=model, top=5)
    assert e.rank == N_RECORDS - 1
    assert e.measured_score == pytest.approx(results[best].mean_cost / results[worst].mean_cost)
    assert e.predicted_score == pytest.approx(float(model.predict([feats[worst]])[0]))
    best_gflops = task.flop_ct / results[best].mean_cost / 1e9
    assert e.predicted_gflops == pytest.approx(e.predicted_score * best_gflops)
    names = list(auto_scheduler.FEATURE_NAMES)
    want = model.feature_importances(auto_scheduler.FEATURE_NAMES)[:5]
    assert [(f.name, f.importance) for f in e.features] == [(n, pytest.approx(v)) for n, v in want]
    for f in e.features:
        assert f.value == feats[worst][names.index(f.name)]
        assert f.best_value == feats[best][names.index(f.name)]
    assert e.diff[0] == f"--- the best record ({best})" and e.diff[1] == f"+++ record {worst}"
    assert any(line.startswith("+") and "decision=" in line for line in e.diff[2:])
    assert "decision=" in e.trace and e.ir.startswith("@T.prim_func")


def test_failed_record_and_hand_schedule_diff(logged) -> None:
    task, _, _, _, log = logged
    hand = task.make_schedule()
    i, j, k = hand.get_loops(hand.get_block("C"))
    hand.split(j, [None, 4])
    e = X.explain_record(log, 5, against=hand)
    assert e.rank is None and e.gflops == 0.0 and "RUNTIME_DEVICE" in e.error
    assert "the kernel crashed" in e.error and e.reference == "your schedule"
    assert "-  l4, l5 = sch.split(loop=l2, factors=[None, 4])" in e.diff
    with pytest.raises(X.ExplainError, match="no record 99"):
        X.explain_record(log, 99)


def test_which_sketches_win(logged) -> None:
    task, policy, inputs, results, log = logged
    table = X.sketch_summary(log)
    assert sum(r.trials for r in table) == N_RECORDS and sum(r.errors for r in table) == 1
    for row in table:
        mine = [n for n in range(N_RECORDS) if inputs[n].sketch == row.sketch and n != 5]
        best = max((task.flop_ct / results[n].mean_cost / 1e9 for n in mine), default=0.0)
        assert row.best_gflops == pytest.approx(best)
        assert row.description == policy.sketches[row.sketch].describe()
    assert [r.best_gflops for r in table] == sorted((r.best_gflops for r in table), reverse=True)
    assert "best GFLOPS" in str(table) and "<table>" in table._repr_html_()


def test_predicted_vs_measured_holds_out_the_later_records(logged) -> None:
    task, _, _, results, log = logged
    check = X.predicted_vs_measured(log, holdout=0.5)
    assert check.trained_on == N_RECORDS // 2 and check.records == list(range(6, N_RECORDS))
    best = min(r.mean_cost for r in results)
    assert check.measured.tolist() == pytest.approx(
        [best / results[n].mean_cost for n in check.records]
    )
    assert len(check.predicted) == len(check.records)
    assert 0.0 <= check.pairwise_accuracy <= 1.0
    fig = check.figure()
    assert list(fig.data[1].x) == pytest.approx(check.predicted.tolist())


def test_top_k_browser(logged) -> None:
    pytest.importorskip("ipywidgets")
    _, _, _, _, log = logged
    browser = X.top_k_browser(log, k=3)
    w = browser.widget
    assert "ansor-topk" in w._dom_classes and len(browser.select.options) == 3
    top = X.top_records(log, 3)
    assert f"record {top[0][0]}</b> (rank 1)" in browser.pane.value
    browser.select.value = 2
    assert f"record {top[1][0]}</b> (rank 2)" in browser.pane.value
