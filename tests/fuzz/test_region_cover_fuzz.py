"""Fuzzing the dense-box analysis that ``reverse_compute_at`` relies on.

A consumer computed after loop ``x`` of its producer runs on the box the producer wrote
in one iteration of ``x``; bound inference (``regions.covered_lengths``) decides from the
split/fuse relations whether that set is a box and how long it is per axis. Here random splits
(non-dividing ones included), fuses and reorders of a small 1-3-d stage are enumerated
point by point: whenever the analysis says "box", every iteration of the outer loops must
write exactly a box whose sides fit the predicted lengths. (Seeded ``random`` rather than
hypothesis: the failing structures are rare and hypothesis's small-value bias misses them.)
"""

from __future__ import annotations

import itertools
import random

import pytest

from ansor_lab import te
from ansor_lab.errors import ScheduleError
from ansor_lab.schedule import primitives as P
from ansor_lab.schedule.regions import covered_lengths
from ansor_lab.schedule.state import Split, State, derive_extents


def _root_values(stage, extents: dict, leaf_values: dict) -> dict | None:
    """Every iter's value from the leaves' (None where a non-dividing split's guard fails)."""
    vals = dict(leaf_values)
    for rel in reversed(stage.relations):
        if isinstance(rel, Split):
            acc, stride = 0, 1
            for c in reversed(rel.children):
                acc += vals[c] * stride
                stride *= extents[c]
            if acc >= extents[rel.parent]:
                return None
            vals[rel.parent] = acc
        else:
            f, stride = vals[rel.fused], 1
            for k in range(len(rel.children) - 1, -1, -1):
                c = rel.children[k]
                vals[c] = f // stride if k == 0 else (f // stride) % extents[c]
                stride *= extents[c]
    return vals


def _random_stage(rng: random.Random) -> State:
    """A 1-3-d stage after a few random splits (non-dividing ones too), fuses, reorders."""
    shape = tuple(rng.randint(1, 7) for _ in range(rng.randint(1, 3)))
    A = te.placeholder(shape, name="A")
    B = te.compute(shape, lambda *i: A[i] + 1.0, name="B")
    state = State.create([B], [A, B])
    for _ in range(rng.randint(0, 5)):
        s = state.stages["B"]
        kind = rng.random()
        try:
            if kind < 0.45:
                lp = rng.choice(s.leaves)
                ext = derive_extents(s)[lp]
                factors = [rng.randint(1, ext + 1) for _ in range(rng.randint(2, 3))]
                factors[rng.randrange(len(factors))] = None
                P.split(state, "B", lp, factors)
            elif kind < 0.75 and len(s.leaves) > 1:
                a = rng.randrange(len(s.leaves) - 1)
                P.fuse(state, "B", s.leaves[a : rng.randint(a + 2, len(s.leaves))])
            else:
                P.reorder(state, "B", rng.sample(s.leaves, len(s.leaves)))
        except ScheduleError:
            pass
    return state


@pytest.mark.parametrize("seed", range(3))
def test_covered_box_is_exact(seed: int) -> None:
    """A claimed box is one: no strided or ragged write set is taken for a box."""
    rng = random.Random(seed)
    claimed = 0
    for _ in range(1000):
        s = _random_stage(rng).stages["B"]
        pos = rng.randrange(len(s.leaves))
        claimed += _check_cover(s, pos)
    assert claimed > 500  # most cases are boxes: the check is not vacuous


def _check_cover(s, pos: int) -> bool:
    """Enumerate the writes of each iteration of the loops up to ``pos``; True if claimed."""
    extents = derive_extents(s)
    covered = covered_lengths(s, set(s.leaves[pos + 1 :]), extents)
    roots = [it.name for it in s.root]
    if any(covered[r] is None for r in roots):
        return False  # not claimed to be a box (reverse_compute_at refuses it)
    groups: dict = {}
    for combo in itertools.product(*[range(extents[lp]) for lp in s.leaves]):
        vals = _root_values(s, extents, dict(zip(s.leaves, combo)))
        if vals is not None:
            groups.setdefault(combo[: pos + 1], set()).add(tuple(vals[r] for r in roots))
    for key, points in groups.items():
        lo = [min(p[d] for p in points) for d in range(len(roots))]
        hi = [max(p[d] for p in points) for d in range(len(roots))]
        volume = 1
        for d, r in enumerate(roots):
            volume *= hi[d] - lo[d] + 1
            assert hi[d] - lo[d] + 1 <= covered[r], (s.relations, s.leaves, pos, covered, key)
        assert volume == len(points), ("not a box", s.relations, s.leaves, pos, covered, key)
    return True
