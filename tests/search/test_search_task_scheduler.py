"""TaskScheduler: one budget over several tasks, one runner shared between them."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from search_helpers import record_key
from workloads import FAST_PARAMS, fast_options, make_task, matmul

from ansor_lab import auto_scheduler


def test_two_tasks_share_the_budget_and_every_program_is_correct(tmp_path):
    # different shapes: running one task's kernel on the other's inputs would read and
    # write out of bounds, so a runner set up for the wrong task cannot go unnoticed
    big, small = make_task(matmul(32)), make_task(matmul(8, 16, 8))
    log = str(tmp_path / "ts.json")
    sched = auto_scheduler.TaskScheduler([big, small], task_weights=[1, 3], strategy="round-robin")
    results = sched.tune(
        fast_options(log, trials=12, per_round=4), search_policy_params=dict(FAST_PARAMS)
    )

    assert sched.allocation == [0, 1, 0]  # warm-up round each, then back to the first
    assert sched.task_cts == [2, 1]
    assert [r.stats.trials for r in results] == [8, 4]
    assert [r.task for r in results] == [big, small]
    records = list(auto_scheduler.load_records(log))
    per_task = Counter(inp.workload_key for inp, _ in records)
    assert per_task == {big.workload_key: 8, small.workload_key: 4}
    assert [r.error_kind for _, r in records] == ["NO_ERROR"] * 12, [
        r.error_msg[:200] for _, r in records if r.error_no
    ]
    for k, (task, res) in enumerate(zip([big, small], results)):
        costs = [r.mean_cost for i, r in records if i.workload_key == task.workload_key]
        assert res.best_cost == pytest.approx(min(costs))
        assert sched.best_costs[k] == pytest.approx(min(costs))
        assert len(
            {record_key(i) for i, _ in records if i.workload_key == task.workload_key}
        ) == len(costs)
    # the tasks share one cost model, and the summary reports every task
    p0, p1 = (s.policy for s in sched.sessions)
    assert p0.model is p1.model and p0.model.num_samples == 12
    summary = sched.summary()
    assert summary.count("\n") == 2 and "| 8" in summary and "| 4" in summary


class _FakeStats:
    def __init__(self, cost):
        self.best_cost = cost


def test_gradient_strategy_prefers_the_task_that_can_gain_most():
    a, b = make_task(matmul(8)), make_task(matmul(8, 16, 8))
    sched = auto_scheduler.TaskScheduler([a, b], task_weights=[1, 1])
    sched.task_cts = [2, 2]
    # equal history length: the slower task promises the larger gain
    sched.task_costs_history = [[4e-3, 4e-3], [1e-3, 1e-3]]
    assert sched._gradient(0) < sched._gradient(1)
    # a task whose programs all failed so far is the most urgent
    sched.task_costs_history = [[4e-3, 4e-3], [math.inf]]
    assert sched._gradient(1) == -math.inf
    # weights scale the gain: a light slow task can lose to a heavy fast one
    sched.task_weights = [1, 10]
    sched.task_costs_history = [[4e-3, 4e-3], [1e-3, 1e-3]]
    assert sched._gradient(1) < sched._gradient(0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="at least one task"):
        auto_scheduler.TaskScheduler([])
    with pytest.raises(ValueError, match="gradient"):
        auto_scheduler.TaskScheduler([make_task(matmul(8))], strategy="greedy")


def test_a_round_is_at_most_an_equal_share_of_the_budget(tmp_path):
    # TVM caps a round at trials // tasks: with the default 64 per round and 6 trials,
    # each of the two tasks gets 3, instead of the first task taking all 6
    a, b = make_task(matmul(8)), make_task(matmul(8, 16, 8))
    log = str(tmp_path / "share.json")
    sched = auto_scheduler.TaskScheduler([a, b], strategy="round-robin")
    results = sched.tune(
        fast_options(log, trials=6, per_round=64), search_policy_params=dict(FAST_PARAMS)
    )
    assert sched.allocation == [0, 1]
    assert [r.stats.trials for r in results] == [3, 3]
    assert a.apply_best(log)[0] is not None and b.apply_best(log)[0] is not None
    with pytest.raises(ValueError, match="too small for 2 tasks; set it to at least 2"):
        auto_scheduler.TaskScheduler([a, b]).tune(fast_options(log, trials=1, per_round=64))
