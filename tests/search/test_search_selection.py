"""search/selection.py: a diverse first batch, the prior's hedge, finalists measured again."""

from __future__ import annotations

import math

from workloads import FAST_PARAMS, fast_options, make_task, matmul

from ansor_lab import auto_scheduler
from ansor_lab.measure.records import MeasureResult
from ansor_lab.search.selection import (
    decision_distance,
    diverse_top,
    finalists,
    hedge_picks,
    location_kind,
    program_structure,
    register_tile,
)
from ansor_lab.search.space import Candidate


def cand(sketch, *decisions):
    return Candidate(sketch, tuple(decisions))


def test_decision_distance():
    assert decision_distance(cand(0, 1, 2, 3), cand(0, 1, 5, 4)) == 2
    assert decision_distance(cand(0, 1, 2), cand(0, 1, 2)) == 0
    assert decision_distance(cand(0, 1, 2), cand(1, 1, 2)) == math.inf


def test_diverse_top_keeps_picks_apart_then_fills_by_rank():
    ranked = [cand(0, 1, 1, 1), cand(0, 1, 1, 2), cand(0, 2, 2, 1), cand(1, 1, 1, 1),
              cand(0, 1, 2, 2), cand(0, 3, 3, 3)]  # fmt: skip
    seen: set = set()
    picks = diverse_top(ranked, 3, 2, seen)
    # the 2nd (one decision from the 1st) is passed over for the 3rd and 4th
    assert picks == [ranked[0], ranked[2], ranked[3]]
    assert seen == {c.key for c in picks}
    # asked for more than are far apart: the best-ranked of the rest fill the batch
    picks = diverse_top(ranked, 5, 3, set())
    assert picks == [ranked[0], ranked[3], ranked[5], ranked[1], ranked[2]]
    # what was seen is never picked
    assert diverse_top(ranked, 2, 1, {ranked[0].key}) == [ranked[1], ranked[2]]


def test_register_tile_is_the_sketch_and_innermost_factors():
    c = cand(1, [1, 1, 1, 1], [4, 2, 4, 4], [7, 1, 1, 4], [2, 1, 1, 14], 3, -2)
    assert register_tile(c) == (1, (1, 4, 4, 14))
    # outer factors and the other decisions do not change it; another sketch does
    assert register_tile(
        cand(1, [1, 1, 1, 1], [2, 4, 4, 4], [1, 7, 1, 4], [1, 2, 1, 14], 0, 5)
    ) == register_tile(c)
    assert register_tile(
        cand(0, [1, 1, 1, 1], [4, 2, 4, 4], [7, 1, 1, 4], [2, 1, 1, 14])
    ) != register_tile(c)


def test_diverse_top_takes_the_best_of_each_register_tile_first():
    # ranked by score: ten near-copies of a 4 x 14 tile, then a 2 x 28 tile in a tie
    # with them, then a poor 1 x 2 tile
    copies = [cand(0, [k, 1, 4], [2, 1, 14], 0) for k in range(1, 11)]
    wide = cand(0, [2, 1, 2], [1, 1, 28], 0)
    poor = cand(0, [4, 1, 1], [14, 1, 2], 0)
    ranked = copies + [wide, poor]
    scores = {c.key: 0.559 for c in copies} | {wide.key: 0.535, poor.key: 0.2}
    picks = diverse_top(ranked, 4, 3, set(), tiles=2, score=lambda c: scores[c.key])
    assert picks[:2] == [copies[0], wide]  # the tie's other tile is measured
    assert poor not in picks  # a tile far below the best is not
    # without the tile picks, rank order keeps the copies
    assert diverse_top(ranked, 4, 3, set()) == copies[:4]
    # scores missing: every tile counts, best-ranked first
    picks = diverse_top(ranked, 3, 2, set(), tiles=3)
    assert picks == [copies[0], wide, poor]


def test_program_structure_adds_the_kind_of_each_compute_location():
    assert [location_kind(d) for d in (-2, -1, 0, 9)] == ["inline", "root", "at", "at"]
    # a depthwise conv: four tiles, an unroll choice, the padding's location, an unroll
    inlined = cand(0, [1, 1, 1, 1], [2, 32, 4, 1], [1, 14, 2, 1], [1, 1, 1, 28], 2, -2, 2)
    copied = cand(0, [1, 1, 1, 1], [2, 32, 4, 1], [1, 14, 2, 1], [1, 1, 1, 28], 2, 9, 2)
    elsewhere = cand(0, [1, 1, 1, 1], [4, 16, 4, 1], [14, 1, 2, 1], [1, 1, 1, 28], 0, 2, 1)
    assert register_tile(inlined) == register_tile(copied)
    assert program_structure(inlined, [5]) == (0, (1, 1, 1, 28), ("inline",))
    assert program_structure(copied, [5]) == program_structure(elsewhere, [5])
    assert program_structure(copied, [5]) != program_structure(inlined, [5])
    assert program_structure(inlined) == (*register_tile(inlined), ())


def test_diverse_top_takes_the_best_of_each_structure():
    # ranked by the prior: near-copies of one tile with the padding copied per tile, then
    # the same tile with the padding inlined, a near-tie
    copies = [cand(0, [k, 1, 28], 9) for k in range(1, 8)]
    inlined = cand(0, [4, 1, 28], -2)
    ranked = copies + [inlined]
    scores = {c.key: 0.20 for c in copies} | {inlined.key: 0.19}
    kw = {"tiles": 2, "score": lambda c: scores[c.key]}
    # by register tile alone the inlined one is a copy; by structure it is taken second
    assert inlined not in diverse_top(ranked, 4, 3, set(), **kw)
    picks = diverse_top(ranked, 4, 3, set(), structure=lambda c: program_structure(c, [1]), **kw)
    assert picks[:2] == [copies[0], inlined]


def test_hedge_picks_rank_by_prior_and_skip_seen():
    pool = [cand(0, k) for k in range(5)] + [cand(0, 2)]  # a repeat
    prior = {0: 1.0, 1: 5.0, 2: 3.0, 3: None, 4: 4.0}
    seen = {cand(0, 4).key}
    picks = hedge_picks(pool, lambda c: prior[c.decisions[0]], 2, seen)
    assert picks == [cand(0, 1), cand(0, 2)]
    assert cand(0, 1).key in seen and cand(0, 2).key in seen
    assert hedge_picks(pool, lambda c: 1.0, 0, set()) == []


def test_finalists_within_margin_fastest_first_each_once():
    measured = [(1.10, cand(0, 1)), (1.00, cand(0, 2)), (1.30, cand(0, 3)),
                (1.05, cand(0, 1)), (math.inf, cand(0, 4)), (1.14, cand(1, 1))]  # fmt: skip
    assert finalists(measured, 3, 0.15) == [cand(0, 2), cand(0, 1), cand(1, 1)]
    assert finalists(measured, 2, 0.15) == [cand(0, 2), cand(0, 1)]
    assert finalists(measured, 3, 0.01) == [cand(0, 2)]
    assert finalists([], 3, 0.15) == [] and finalists(measured, 0, 0.15) == []


def test_first_batch_is_diverse():
    task = make_task(matmul(64))
    params = {**FAST_PARAMS, "prior_random_ratio": 0.0}
    policy = auto_scheduler.SketchPolicy(task, params=params, seed=3, verbose=0)
    assert policy.uses_prior
    batch = policy.next_batch(8)
    cands = [Candidate(i.sketch, tuple(i.decisions)) for i in batch]
    assert len({c.key for c in cands}) == 8
    far = [decision_distance(a, b) >= 2 for k, a in enumerate(cands) for b in cands[:k]]
    assert sum(far) >= len(far) - 4  # apart, but for the few filled in rank order


def test_finalists_measured_again_keep_their_fastest_time(tmp_path):
    task = make_task(matmul(32))
    params = {**FAST_PARAMS, "finalists": 3}  # off by default, as TVM measures once
    policy = auto_scheduler.SketchPolicy(task, params=params, seed=0, verbose=0)
    inputs = policy.next_batch(8)
    costs = [1e-3 * (1 + 0.05 * k) for k in range(8)]  # 1.0, 1.05, 1.10, 1.15, ... ms
    policy.update(inputs, [MeasureResult([c]) for c in costs])
    again = policy.finalist_inputs(16)  # at most 3 and a quarter of the batch
    assert [(i.sketch, tuple(i.decisions)) for i in again] == [
        (inputs[k].sketch, tuple(inputs[k].decisions)) for k in range(3)
    ]
    assert len(policy.finalist_inputs(8)) == 2
    # the second measurement of the best was slower: its fastest time stays
    policy.update(again[:1], [MeasureResult([2e-3])])
    key = Candidate(inputs[0].sketch, tuple(inputs[0].decisions)).key
    assert policy.measured[key] == 1e-3
    policy.params["finalists"] = 0
    assert policy.finalist_inputs(16) == []
    # a whole search asked for finalists: its last batch measures them again, in budget
    log = str(tmp_path / "f.json")
    params = {**FAST_PARAMS, "finalists": 3}
    policy = auto_scheduler.SketchPolicy(task, params=params, seed=0, verbose=0)
    result = task.tune(fast_options(log, 16, 8), search_policy=policy)
    records = list(auto_scheduler.load_records(log))
    assert len(records) == 16 == result.stats.trials
    keys = [(i.sketch, tuple(map(str, i.decisions))) for i, _ in records]
    repeats = len(keys) - len(set(keys))
    assert 1 <= repeats <= 2
    assert set(keys[8:]) & set(keys[:8])  # only the last batch measures again


def test_the_prior_ranks_a_wider_first_sample(monkeypatch):
    task = make_task(matmul(64))
    sizes = []

    def ranked_batch(params):
        policy = auto_scheduler.SketchPolicy(task, params=params, seed=3, verbose=0)
        real = policy.sample_initial_population
        monkeypatch.setattr(
            policy, "sample_initial_population", lambda n=None: sizes.append(n) or real(n)
        )
        return policy, policy.next_batch(8)

    policy, batch = ranked_batch({**FAST_PARAMS, "prior_init_factor": 4})
    assert policy.uses_prior and sizes == [4 * FAST_PARAMS["sample_init_min_population"]]
    assert len(batch) == 8
    sizes.clear()
    ranked_batch({**FAST_PARAMS, "prior_init_factor": 1})  # off: the plain sample
    ranked_batch({**FAST_PARAMS, "analytic_prior": 0})  # no prior ranks: nothing to widen
    assert sizes == [FAST_PARAMS["sample_init_min_population"]] * 2
    # ranked by the forest later: later batches sample as many as before
    policy.update(batch, [MeasureResult([1e-3 * (1 + 0.1 * k)]) for k in range(8)])
    assert not policy.uses_prior  # the forest is fitted from 8 measurements
    sizes.clear()
    policy.next_batch(8)
    assert sizes == [FAST_PARAMS["sample_init_min_population"]]
