"""SearchCallback: what observers see, and a stop request ending the search cleanly.

The workload here is defined inside the test function: no worker process could import
it, so the search only works because workers receive the DAG as data.
"""

from __future__ import annotations

import math

import pytest
from workloads import FAST_PARAMS, TARGET, fast_options

from ansor_lab import auto_scheduler, te


class Recorder(auto_scheduler.SearchCallback):
    """Keeps every call; asks to stop after ``stop_after`` batches."""

    def __init__(self, stop_after: int | None = None) -> None:
        super().__init__()
        self.stop_after = stop_after
        self.calls: list[tuple] = []

    def on_tune_start(self, task, options, policy):
        self.calls.append(("start", task, options, policy))

    def on_batch(self, task, inputs, results, stats):
        self.calls.append(("batch", list(inputs), list(results), stats.trials))
        if self.stop_after is not None and self.n("batch") >= self.stop_after:
            self.request_stop()

    def on_new_best(self, task, inp, res, stats):
        self.calls.append(("best", inp, res, stats.best_cost, stats.trials))

    def on_model_update(self, task, predicted, measured, stats):
        self.calls.append(("model", list(predicted), list(measured), stats.rank_correlation))

    def on_tune_end(self, task, result):
        self.calls.append(("end", result))

    def n(self, kind: str) -> int:
        return sum(1 for c in self.calls if c[0] == kind)

    def of(self, kind: str) -> list[tuple]:
        return [c for c in self.calls if c[0] == kind]


def test_stop_request_ends_after_the_batch_with_the_log_intact(tmp_path):
    def local_add_mul(n):  # not importable by a worker: defined in a function
        A = te.placeholder((n, n), name="A")
        B = te.placeholder((n, n), name="B")
        k = te.reduce_axis((0, n), name="k")
        C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
        D = te.compute((n, n), lambda i, j: C[i, j] * 0.5 + A[i, j], name="D")
        return [A, B, D]

    assert "<locals>" in local_add_mul.__qualname__
    auto_scheduler.register_workload(local_add_mul, override=True)
    task = auto_scheduler.SearchTask(func=local_add_mul, args=(16,), target=TARGET)
    log = str(tmp_path / "stop.json")
    rec = Recorder(stop_after=2)
    policy = auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=2, verbose=0)
    options = fast_options(log, trials=40, per_round=3, callbacks=[rec])
    result = task.tune(options, search_policy=policy)

    # exactly two batches measured and logged, then the search ended
    records = list(auto_scheduler.load_records(log))
    assert len(records) == 6 == result.stats.trials
    assert all(r.error_no == 0 for _, r in records), [r.error_msg for _, r in records]
    assert result.stopped_early
    kinds = [c[0] for c in rec.calls]
    assert kinds[0] == "start" and kinds[-1] == "end" and rec.n("start") == rec.n("end") == 1
    assert rec.calls[0][1:] == (task, options, policy)
    assert rec.of("end")[0][1] is result
    assert [c[3] for c in rec.of("batch")] == [3, 6]
    batch_inputs = [i for c in rec.of("batch") for i in c[1]]
    assert [i.trace for i in batch_inputs] == [i.trace for i, _ in records]

    # new bests: strictly faster each time, the stats already updated, the last the best
    bests = rec.of("best")
    assert bests and bests[0][4] == 1  # the first program measured is the first best
    costs = [c[2].mean_cost for c in bests]
    assert costs == sorted(costs, reverse=True) and len(set(costs)) == len(costs)
    assert all(c[3] == c[2].mean_cost for c in bests)
    assert costs[-1] == pytest.approx(result.best_cost)
    assert costs[-1] == pytest.approx(min(r.mean_cost for _, r in records))

    # model updates: predicted scores vs measured throughput of the same programs
    for _, predicted, measured, corr in rec.of("model"):
        assert len(predicted) == len(measured) >= 1
        assert all(math.isfinite(p) for p in predicted)
        assert all(m > 0 for m in measured)  # all succeeded: throughput 1 / seconds
        assert math.isnan(corr) or -1 <= corr <= 1
    assert rec.n("model") >= 1


def test_default_callback_methods_do_nothing():
    cb = auto_scheduler.SearchCallback()
    assert not cb.stop_requested
    assert cb.on_batch(None, [], [], None) is None
    cb.request_stop()
    assert cb.stop_requested
