"""Program features and cost models."""

from __future__ import annotations

import json

import numpy as np
import pytest
from workloads import conv2d_bias_relu, fast_policy, make_task, matmul, softmax

from ansor_lab import auto_scheduler, te, tir
from ansor_lab.errors import AnsorLabError
from ansor_lab.schedule.lower import lower_state
from ansor_lab.search.cost_model import normalized_throughput
from ansor_lab.search.features import STORE_FEATURE_NAMES, store_features


def features(sch):
    return auto_scheduler.program_features(lower_state(sch.state, sch.args))


def _matmul_schedule(vectorize: bool, unroll: bool = False):
    sch = tir.Schedule(te.create_prim_func(matmul(32)))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i, j0, k, j1)
    if vectorize:
        sch.vectorize(j1)
    if unroll:
        sch.unroll(k)
    return sch


def feature(vec, name: str) -> float:
    return float(vec[auto_scheduler.FEATURE_NAMES.index(name)])


@pytest.mark.parametrize("workload", [matmul, conv2d_bias_relu, softmax])
def test_feature_vector_length_matches_the_names(workload):
    task = make_task(workload())
    policy = fast_policy(task)
    for cand in policy.sample_initial_population(3):
        vec = policy.features_of(cand)
        assert vec.shape == (len(auto_scheduler.FEATURE_NAMES),)
        assert np.isfinite(vec).all()
    rows = store_features(lower_state(task.make_schedule().state, task.args))
    assert rows and all(len(r) == len(STORE_FEATURE_NAMES) for r in rows)
    assert len(set(auto_scheduler.FEATURE_NAMES)) == len(auto_scheduler.FEATURE_NAMES)


def test_vectorized_program_has_a_vector_length_feature():
    plain, vec = features(_matmul_schedule(False)), features(_matmul_schedule(True))
    assert feature(plain, "max.vec_len") == 0
    assert feature(vec, "max.vec_len") == 8 and feature(vec, "max.vec_is_inner") == 1
    assert feature(vec, "max.unroll_prod") == 1  # log2(1 + product), no unrolled loop
    unrolled = features(_matmul_schedule(True, unroll=True))
    assert feature(unrolled, "max.unroll_prod") == pytest.approx(np.log2(1 + 32))
    # the same computation: the flop count does not depend on the schedule
    assert feature(plain, "total_flops") == feature(vec, "total_flops")
    assert feature(plain, "total_flops") == pytest.approx(np.log2(1 + 2 * 32**3), rel=0.01)


def test_pairwise_accuracy():
    pa = auto_scheduler.pairwise_accuracy
    assert pa([1, 2, 3], [10, 20, 30]) == 1.0
    assert pa([3, 2, 1], [10, 20, 30]) == 0.0
    assert pa([1, 3, 2], [10, 20, 30]) == pytest.approx(2 / 3)
    assert np.isnan(pa([1, 2], [5, 5]))  # ties in the truth are skipped


def test_normalized_throughput_is_per_task():
    y = normalized_throughput([2.0, 1.0, 4.0, 10.0, float("inf")], ["a", "a", "b", "b", "a"])
    assert list(y) == [0.5, 1.0, 1.0, 0.4, 0.0]


def test_random_forest_learns_a_synthetic_ranking():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 12))
    cost = 1e-3 * (1 + 4 * X[:, 0] + 2 * X[:, 1] ** 2 + 0.2 * rng.uniform(0, 1, 300))
    model = auto_scheduler.RandomForestModel(n_estimators=32)
    model.update(list(X[:200]), list(cost[:200]))
    assert model.num_samples == 200
    score = model.predict(list(X[200:]))
    assert auto_scheduler.pairwise_accuracy(score, 1 / cost[200:]) > 0.8


def test_random_forest_ranks_real_programs_by_a_proxy_cost():
    """Real feature vectors of sampled matmul candidates; the 'measured' cost is a proxy
    the features can see (wide vectors and small unroll budgets are fast)."""
    task = make_task(matmul(64))
    policy = fast_policy(task, seed=7)
    cands = policy.sample_initial_population(90)
    X = [policy.features_of(c) for c in cands]
    cost = np.array(
        [1.0 / (1 + feature(x, "max.vec_len")) + 0.1 * feature(x, "max.auto_unroll") for x in X]
    )
    model = auto_scheduler.RandomForestModel(n_estimators=32)
    model.update(X[:60], list(cost[:60]), [task.workload_key] * 60)
    score = model.predict(X[60:])
    assert auto_scheduler.pairwise_accuracy(score, 1 / cost[60:]) > 0.7


def test_model_waits_for_enough_samples_and_skips_duplicates():
    model = auto_scheduler.RandomForestModel(min_samples=4)
    x = [np.arange(3.0) + k for k in range(3)]
    model.update(x, [1.0, 2.0, 3.0])
    assert model.model is None  # too few samples: random scores
    assert np.all(model.predict(x) < 1e-3)
    model.update(x, [1.0, 2.0, 3.0])  # the same measurements again: nothing new
    assert model.num_samples == 3
    model.update([np.arange(3.0) + 5], [0.5])
    assert model.num_samples == 4 and model.model is not None


def test_model_save_and_load(tmp_path):
    model = auto_scheduler.RandomForestModel(min_samples=2)
    x = [np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.array([2.0, 2.0])]
    model.update(x, [1.0, 2.0, 4.0], ["t"] * 3)
    path = str(tmp_path / "model.json")
    model.save(path)
    assert len(json.load(open(path))["costs"]) == 3
    other = auto_scheduler.RandomForestModel(min_samples=2)
    other.load(path)
    assert other.num_samples == 3
    np.testing.assert_allclose(other.predict(x), model.predict(x))
    other.update(x[:1], [1.0], ["t"])  # already known after loading
    assert other.num_samples == 3


def test_tutorial_model_names():
    assert auto_scheduler.XGBModel is auto_scheduler.RandomForestModel
    scores = auto_scheduler.RandomModel(seed=0).predict([np.zeros(3)] * 5)
    assert scores.shape == (5,) and ((scores >= 0) & (scores < 1)).all()


def test_the_last_feature_is_the_analytic_prior_for_the_given_vector_width():
    from ansor_lab.search.prior import analytic_score

    sch = _matmul_schedule(True)
    func = lower_state(sch.state, sch.args, simplify=False)
    for vector_bytes in (32, 64):
        vec = auto_scheduler.program_features(func, vector_bytes, 1)
        assert auto_scheduler.FEATURE_NAMES[-1] == "prior_score"
        assert feature(vec, "prior_score") == pytest.approx(analytic_score(func, vector_bytes))
    # a program filling 8 lanes of a 256-bit vector scores above its scalar twin
    plain = _matmul_schedule(False)
    scalar = auto_scheduler.program_features(
        lower_state(plain.state, plain.args, simplify=False), 32, 1
    )
    assert (
        feature(auto_scheduler.program_features(func, 32, 1), "prior_score")
        > feature(scalar, "prior_score")
        > 0
    )


def test_a_model_asked_about_features_of_another_length_says_to_retrain():
    model = auto_scheduler.RandomForestModel(min_samples=2)
    x = [np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.array([2.0, 2.0])]
    model.update(x, [1.0, 2.0, 4.0], ["t"] * 3)
    with pytest.raises(AnsorLabError, match="update_from_file"):
        model.predict([np.zeros(3)])
