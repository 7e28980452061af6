"""Random annotation and mutation keep programs valid, and the policy's phases run alone."""

from __future__ import annotations

import math
import random
import zlib
from collections import Counter

import numpy as np
import pytest
from search_helpers import check_numeric
from workloads import (
    FAST_PARAMS,
    conv2d_bias_relu,
    fast_policy,
    make_task,
    matmul,
    matmul_relu,
    softmax,
)

from ansor_lab import auto_scheduler
from ansor_lab.errors import AnsorLabError
from ansor_lab.ir.verify import verify
from ansor_lab.measure.records import MeasureInput
from ansor_lab.schedule.lower import lower_state
from ansor_lab.search.space import Candidate

SPACE_WORKLOADS = {
    "matmul": matmul,
    "matmul_relu": matmul_relu,
    "conv2d": conv2d_bias_relu,
    "softmax": softmax,
}


def _kinds(policy, cand):
    return [i.kind for i in policy.space._kinds[cand.sketch]]


def _changed(a: Candidate, b: Candidate) -> list[int]:
    return [k for k, (x, y) in enumerate(zip(a.decisions, b.decisions)) if x != y]


@pytest.mark.parametrize("name", sorted(SPACE_WORKLOADS))
def test_sampled_and_mutated_programs_replay_lower_and_compute_the_reference(name):
    task = make_task(SPACE_WORKLOADS[name]())
    policy = fast_policy(task, seed=1)
    space = policy.space
    rng = random.Random(0)
    population = policy.sample_initial_population(8)
    assert len(population) == 8
    assert {c.sketch for c in population} <= set(range(len(policy.sketches)))
    valid: list[Candidate] = list(population)
    rejected_kinds = []
    for cand in population:
        for _ in range(3):
            child = space.mutate(cand)
            if child is None:
                continue
            # a mutation changes one decision or reshapes a register tile (two tiles of
            # one stage's spatial axes); a later decision it invalidated is redrawn
            # (``repair``), so the child replays
            changed = _changed(cand, child)
            assert changed
            space.schedule(child)
            pos = changed[0]
            try:
                verify(lower_state(space.schedule(child).state, task.args), "llvm")
            except Exception:  # noqa: BLE001 - counted below, by the kind it changed
                rejected_kinds.append(_kinds(policy, cand)[pos])
                continue
            valid.append(child)
    # tile and categorical mutations keep every program valid; only a compute location
    # may point past the loops of its consumer
    assert set(rejected_kinds) <= {"SampleComputeLocation"}
    assert len(valid) >= 20
    for cand in rng.sample(valid, 4):
        # replaying a candidate is deterministic, and its trace replays on a fresh schedule
        sch = space.schedule(cand)
        again = task.make_schedule()
        again.replay(sch.trace.as_json())
        assert again.mod.script() == sch.mod.script()
    # build a handful (the slow part) and compare with the reference
    for cand in rng.sample(valid, 3):
        check_numeric(space.schedule(cand), task.args)


def test_mutations_preserve_tile_products_and_the_innermost_limit():
    task = make_task(matmul(64))
    policy = fast_policy(task)
    space = policy.space
    cand = policy.sample_initial_population(1)[0]
    insts = space._kinds[cand.sketch]
    tiles = [k for k, i in enumerate(insts) if i.kind == "SamplePerfectTile"]
    for _ in range(200):
        child = space.mutate(cand)
        assert child is not None and child.sketch == cand.sketch
        for k in tiles:
            assert math.prod(child.decisions[k]) == math.prod(cand.decisions[k])
            assert child.decisions[k][-1] <= insts[k].arg("max_innermost_factor")
        cand = child


def test_compute_location_mutations_move_to_places_that_exist():
    """The mutation moves a stage to a neighbouring place among those its step accepted,
    not to a random index that is usually past the consumer's loops (then 4 of 5 such
    children were invalid on softmax): every such child replays."""
    policy = fast_policy(make_task(softmax()), seed=2)
    moved = 0
    for cand in policy.sample_initial_population(16):
        for _ in range(6):
            child = policy.space.mutate(cand)
            pos = _changed(cand, child)[0]  # the first: a later location may be repaired
            if _kinds(policy, cand)[pos] != "SampleComputeLocation":
                continue
            known = policy.space._location_choices[(cand.sketch, pos)]
            assert child.decisions[pos] in known and cand.decisions[pos] in known
            assert policy.features_of(child) is not None
            moved += 1
    assert moved >= 10
    assert policy.invalid_candidates == 0, policy.invalid


def test_crossover_mixes_parents_of_one_sketch():
    policy = fast_policy(make_task(matmul()))
    a, b = policy.space.sample(0)[0], policy.space.sample(0)[0]
    child = policy.space.crossover(a, b)
    assert child.sketch == 0
    assert all(c in (x, y) for c, x, y in zip(child.decisions, a.decisions, b.decisions))
    other = policy.space.sample(1)[0]
    assert policy.space.crossover(a, other) is None


def test_candidate_key_is_hashable_and_value_based():
    a = Candidate(0, ((2, 4), 1))
    b = Candidate(0, ([2, 4], 1))
    assert a.key == b.key and hash(a.key) == hash(b.key)


# -- the policy's phases, one at a time ------------------------------------------------


def test_policy_phases_alone():
    task = make_task(matmul())
    policy = fast_policy(task, seed=3)
    assert [s.describe() for s in policy.generate_sketches()] == ["C: tile", "C: cache_write+tile"]
    init = policy.sample_initial_population()
    assert len(init) == FAST_PARAMS["sample_init_min_population"]
    best = policy.evolutionary_search(init, 6)
    assert 1 <= len(best) <= 6
    assert len({c.key for c in best}) == len(best)
    scores = [policy.last_predictions[c.key] for c in best]
    assert scores == sorted(scores, reverse=True)  # best predicted first
    assert all(policy.features_of(c) is not None for c in best)


def test_next_batch_skips_measured_programs():
    task = make_task(matmul())
    policy = fast_policy(task, seed=4)
    first = policy.next_batch(6)
    assert len(first) == 6 and all(isinstance(i, MeasureInput) for i in first)
    keys = {(i.sketch, i.decisions) for i in first}
    assert len(keys) == 6
    # pretend they were measured
    for inp in first:
        policy.measured[Candidate(inp.sketch, inp.decisions).key] = 1e-3
    second = policy.next_batch(6)
    assert not keys & {(i.sketch, i.decisions) for i in second}
    # a MeasureInput's trace is the full program: sketch + decisions + post-processing
    for inp in second:
        sch = task.make_schedule()
        sch.replay(inp.trace)
        assert any(i.kind == "EnterPostproc" for i in sch.trace.insts)
        assert (
            sch.mod.script()
            == policy.space.schedule(Candidate(inp.sketch, inp.decisions)).mod.script()
        )


def test_unknown_policy_params_are_refused():
    with pytest.raises(AnsorLabError, match=r"unknown SketchPolicy params \['populaton'\]"):
        auto_scheduler.SketchPolicy(make_task(matmul()), params={"populaton": 3})


# -- exploration across sketches ------------------------------------------------------


class _TrainedModel(auto_scheduler.RandomModel):
    """A model that says it has learned (so the policy ranks by ``predict``)."""

    @property
    def num_samples(self) -> int:
        return 10


def _prefer_sketch_zero(policy):
    """Rank every program of sketch 0 above every other program (ties broken by a value
    of the decisions, so that "best predicted" means one program)."""

    def score(c):
        return (10.0 if c.sketch == 0 else 1.0) + zlib.crc32(repr(c.decisions).encode()) / 2**40

    policy.predict = lambda cands: np.array([score(c) for c in cands])


def test_sketch_bounds_weigh_best_speed_against_how_often_a_sketch_was_measured():
    policy = fast_policy(make_task(matmul()), seed=5)
    cands = [c for c in policy.sample_initial_population(16)]
    zero = [c for c in cands if c.sketch == 0][:6]
    one = [c for c in cands if c.sketch == 1][:1]
    assert len(zero) == 6 and len(one) == 1
    for c in zero:
        policy.measured[c.key] = 1e-3
        policy.measured_candidates.append((1e-3, c))
    policy.measured[one[0].key] = 2e-3
    policy.measured_candidates.append((2e-3, one[0]))
    c = policy.params["sketch_explore_c"]
    bounds = policy.sketch_bounds()
    assert bounds[0] == pytest.approx(1.0 + c * math.sqrt(math.log(8) / 7))
    assert bounds[1] == pytest.approx(0.5 + c * math.sqrt(math.log(8) / 2))
    # an error counts as measured but gives no speed
    policy.measured[(1, ("not", "a", "program"))] = float("inf")
    assert policy.sketch_bounds()[1] == pytest.approx(0.5 + c * math.sqrt(math.log(9) / 3))


@pytest.mark.parametrize("explore", [0.0, 0.25])
def test_sketch_exploration_measures_a_sketch_the_model_ranks_last(explore):
    task = make_task(matmul())
    params = dict(FAST_PARAMS, eps_greedy=0.0, sketch_explore=explore, prior_hedge=0)
    policy = auto_scheduler.SketchPolicy(
        task, _TrainedModel(seed=0), params=params, seed=6, verbose=0
    )
    _prefer_sketch_zero(policy)
    batch = policy.next_batch(8)
    sketches = [i.sketch for i in batch]
    assert len(batch) == 8 and len({(i.sketch, i.decisions) for i in batch}) == 8
    if explore:
        # one of the two exploration slots goes to sketch 1 (the only sketch the greedy
        # picks left out), with its best-predicted program
        assert sketches.count(1) >= 1
        explored = [i for i in batch if i.sketch == 1][0]
        # the evolution scores its whole first generation, the random sample included
        pool = [c for c in policy._last_ranked if c.sketch == 1]
        assert pool
        assert policy.predict([Candidate(1, explored.decisions)])[0] == max(policy.predict(pool))
    else:
        assert sketches == [0] * 8


def test_migrate_moves_decisions_between_sketches_that_draw_the_same_steps():
    task = make_task(matmul())
    policy = fast_policy(task, seed=7)
    cand = policy.space.sample(sketch=0)[0]
    moved = policy.space.migrate(cand, 1)  # "C: tile" -> "C: cache_write+tile"
    assert moved == Candidate(1, cand.decisions)
    sch = policy.space.schedule(moved)
    assert "C_local" in sch.mod.script()
    check_numeric(sch, task.args)
    assert policy.space.migrate(cand, 0) is None  # not a move
    # softmax's plain sketch and its rfactor sketch draw different steps
    soft = fast_policy(make_task(softmax()), seed=7)
    assert soft.space.migrate(soft.space.sample(sketch=0)[0], 1) is None


def test_sketch_exploration_first_tries_the_best_measured_tiling_in_the_other_sketch():
    task = make_task(matmul())
    params = dict(FAST_PARAMS, eps_greedy=0.0, sketch_explore=0.25, prior_hedge=0)
    policy = auto_scheduler.SketchPolicy(
        task, _TrainedModel(seed=0), params=params, seed=8, verbose=0
    )
    _prefer_sketch_zero(policy)
    zero = [policy.space.sample(sketch=0)[0] for _ in range(3)]
    for cost, c in zip([3e-3, 1e-3, 2e-3], zero):
        policy.measured[c.key] = cost
        policy.measured_candidates.append((cost, c))
    # (the batch's last slot is a random program, of either sketch)
    picked = {(i.sketch, i.decisions) for i in policy.next_batch(8)}
    assert (1, zero[1].decisions) in picked and (1, zero[2].decisions) not in picked
    # once measured there, the sketch's pick is the next leader's tiling
    policy.measured[Candidate(1, zero[1].decisions).key] = 1.5e-3
    picked = {(i.sketch, i.decisions) for i in policy.next_batch(8)}
    assert (1, zero[2].decisions) in picked and (1, zero[1].decisions) not in picked


def test_reshape_moves_a_factor_between_register_tiles_keeping_their_size():
    task = make_task(matmul(64))
    policy = fast_policy(task, seed=9)
    assert policy.space._spatial_tiles == [[[0, 1]], [[0, 1]]]  # i and j of C, per sketch
    seen_shapes = set()
    for _ in range(40):
        cand = policy.space.sample(sketch=1)[0]
        moved = policy.space.reshape_tile(cand)
        if moved is None:
            continue
        (ia, ja), (ib, jb) = cand.decisions[:2], moved.decisions[:2]
        assert moved.decisions[2:] == cand.decisions[2:]
        assert math.prod(ib) == math.prod(ia) == 64 and math.prod(jb) == math.prod(ja) == 64
        assert ib[-1] * jb[-1] == ia[-1] * ja[-1]  # the register tile keeps its size
        assert ib[-1] != ia[-1] and ib[-1] <= 64 and jb[-1] <= 64
        seen_shapes.add((ia[-1], ja[-1], ib[-1], jb[-1]))
        if len(seen_shapes) <= 2:
            check_numeric(policy.space.schedule(moved), task.args)
    assert len(seen_shapes) >= 5
    # softmax tiles only one axis per stage: nothing to reshape
    soft = fast_policy(make_task(softmax()), seed=9)
    assert all(groups == [] for groups in soft.space._spatial_tiles)
    assert soft.space.reshape_tile(soft.space.sample(sketch=0)[0]) is None


def test_a_location_mutation_reaches_inline_and_root_from_any_loop():
    """Inline (-2) and root (-1) are a step from every loop: a stage computed at its
    consumer's 5th loop was 7 neighbour steps from inline, which searches never walked."""
    policy = fast_policy(make_task(softmax()), seed=2)
    space = policy.space
    sketch, pos = next(
        (k, p) for k in range(len(policy.sketches)) for p in space.location_positions(k)
    )
    space._location_choices[(sketch, pos)] = frozenset({-2, -1, 0, 1, 2, 3, 4, 5})
    seen = Counter(space._mutate_location(sketch, pos, 5) for _ in range(400))
    assert set(seen) == {4, -1, -2}  # 6 was never accepted; 0-3 are not neighbours
    assert min(seen.values()) > 80  # each about a third
    seen = Counter(space._mutate_location(sketch, pos, -2) for _ in range(200))
    assert set(seen) == {-1}  # from inline: root is its neighbour, and the only special one
