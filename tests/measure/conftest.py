"""Fixtures of the measurement tests: a small task and one real candidate built for it."""

from __future__ import annotations

import pytest
from workloads import fast_policy, make_task, matmul

from ansor_lab.measure.measure import BuildResult
from ansor_lab.measure.workers import build_worker


@pytest.fixture(scope="module")
def task():
    return make_task(matmul(16))


@pytest.fixture(scope="module")
def good_build(task) -> BuildResult:
    """A real candidate, built in this process (the builder's own function)."""
    inp = fast_policy(task).next_batch(1)[0]
    r = build_worker(
        {"dag": task.dag_json, "trace": inp.trace, "target": str(task.target), "num_threads": 1}
    )
    assert r["error_no"] == 0, r["error_msg"]
    return BuildResult(r["obj"], r["entry"], r["params"], 0, "", r["time"])
