"""Random annotation and mutation keep programs valid, and the policy's phases run alone."""

from __future__ import annotations

import math
import random

import pytest
from search_helpers import (
    FAST_PARAMS, check_numeric, conv2d_bias_relu, fast_policy, make_task, matmul, matmul_relu,
    softmax,
)

from ansor_lab import auto_scheduler
from ansor_lab.errors import AnsorLabError
from ansor_lab.ir.verify import verify
from ansor_lab.measure.records import MeasureInput
from ansor_lab.schedule.lower import lower_state
from ansor_lab.search.space import Candidate

SPACE_WORKLOADS = {"matmul": matmul, "matmul_relu": matmul_relu, "conv2d": conv2d_bias_relu,
                   "softmax": softmax}


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
            (pos,) = _changed(cand, child)  # a mutation changes exactly one decision
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


def test_compute_location_mutations_are_mostly_valid():
    """The mutation moves a stage to a neighbouring loop, not to a random index that is
    usually past the consumer's loops (then 4 of 5 such children were invalid)."""
    policy = fast_policy(make_task(softmax()), seed=2)
    valid = invalid = 0
    for cand in policy.sample_initial_population(16):
        for _ in range(6):
            child = policy.space.mutate(cand)
            (pos,) = _changed(cand, child)
            if _kinds(policy, cand)[pos] != "SampleComputeLocation":
                continue
            assert abs(child.decisions[pos] - cand.decisions[pos]) == 1
            if policy.features_of(child) is None:
                invalid += 1
            else:
                valid += 1
    assert valid + invalid >= 10
    assert valid >= 2 * invalid, (valid, invalid)


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
    assert [s.describe() for s in policy.generate_sketches()] == ["C: tile",
                                                                   "C: cache_write+tile"]
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
        assert sch.mod.script() == policy.space.schedule(
            Candidate(inp.sketch, inp.decisions)).mod.script()


def test_unknown_policy_params_are_refused():
    with pytest.raises(AnsorLabError, match=r"unknown SketchPolicy params \['populaton'\]"):
        auto_scheduler.SketchPolicy(make_task(matmul()), params={"populaton": 3})
