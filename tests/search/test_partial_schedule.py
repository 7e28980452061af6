"""Warm start: a search that keeps the steps a user is sure of and fills in the rest."""

from __future__ import annotations

import numpy as np
import pytest
from workloads import FAST_PARAMS, fast_options, make_task

from ansor_lab import auto_scheduler, te
from ansor_lab.errors import TaskError


def _matmul_relu(n: int = 64):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, n), lambda i, j: te.max(C[i, j], 0.0), name="D")
    return [A, B, D]


def user_steps(sch):
    # what the user is sure of: the reduction runs in chunks of 16
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(k, factors=[None, 16])


def test_every_candidate_starts_with_the_users_steps_and_is_correct(tmp_path):
    task = make_task(_matmul_relu())
    policy = auto_scheduler.SketchPolicy(
        task, params=FAST_PARAMS, seed=0, verbose=0, partial_schedule=user_steps
    )
    assert policy.sketches, "at least one sketch"
    for sketch in policy.sketches:
        text = str(sketch.trace)
        assert "factors=[None, 16]" in text, text
    log = str(tmp_path / "log.json")
    task.tune(fast_options(log, 8, 8), search_policy=policy)
    sch, args = task.apply_best(log)
    assert "factors=[None, 16]" in str(sch.trace)
    from ansor_lab import build

    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    d = np.empty((64, 64), "float32")
    build(sch, args)(a, b, d)
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-4)


def test_a_trace_works_too_and_a_broken_start_is_refused_up_front():
    task = make_task(_matmul_relu())
    sch = task.make_schedule()
    user_steps(sch)
    policy = auto_scheduler.SketchPolicy(
        task, params=FAST_PARAMS, seed=1, verbose=0, partial_schedule=sch.trace
    )
    assert all("factors=[None, 16]" in str(s.trace) for s in policy.sketches)

    def broken(sch):
        sch.get_block("no_such_block")

    with pytest.raises(TaskError, match="partial schedule fails.*no_such_block"):
        auto_scheduler.SketchPolicy(task, verbose=0, partial_schedule=broken)
    with pytest.raises(TaskError, match="partial_schedule takes a function"):
        auto_scheduler.SketchPolicy(task, verbose=0, partial_schedule=42)
