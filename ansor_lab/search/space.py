"""The search space: candidates as (sketch, decisions), sampled, replayed and mutated."""

from __future__ import annotations

import random
from dataclasses import dataclass
from collections.abc import Callable

from ..errors import LoweringError, ScheduleError
from ..schedule.sampling import prime_factors
from ..schedule.tir_schedule import Schedule
from ..schedule.trace import Trace
from .postproc import apply_postproc
from .sketch import Sketch


@dataclass(frozen=True)
class Candidate:
    """A point of the space: a sketch and the decision of each of its sampling steps."""

    sketch: int
    decisions: tuple  # one entry per sampling instruction of the sketch's trace

    @property
    def key(self) -> tuple:
        """Hashable identity (used to skip programs already measured)."""
        return (self.sketch, freeze(self.decisions))


def freeze(x):
    """Lists (from JSON) as tuples, recursively: decisions become hashable."""
    if isinstance(x, (list, tuple)):
        return tuple(freeze(v) for v in x)
    return x


class SearchSpace:
    """The sketches of one task, and how to turn candidates into schedules."""

    def __init__(self, sketches: list[Sketch], make_schedule: Callable[[], Schedule],
                 seed: int | None = None) -> None:
        self.sketches = sketches
        self.make_schedule = make_schedule
        self.rng = random.Random(seed)
        self._templates = [s.trace.as_json() for s in sketches]
        self._sampling = [
            [k for k, inst in enumerate(s.trace.insts) if inst.is_sampling] for s in sketches
        ]
        self._kinds = [
            [s.trace.insts[k] for k in idx] for s, idx in zip(sketches, self._sampling)
        ]

    def schedule(self, cand: Candidate, postproc: bool = True) -> Schedule:
        """Replay a candidate; raises ScheduleError when its decisions do not fit."""
        sch = self.make_schedule()
        data = Trace.from_json(self._templates[cand.sketch])
        overrides = dict(zip(self._sampling[cand.sketch], cand.decisions))
        data.apply_to_schedule(sch, decisions=overrides)
        if postproc:
            apply_postproc(sch)
        return sch

    def _read_decisions(self, sketch: int, sch: Schedule) -> tuple:
        insts = sch.trace.insts
        return tuple(freeze(insts[k].decision) for k in self._sampling[sketch])

    def sample(self, sketch: int | None = None) -> tuple[Candidate, Schedule] | None:
        """A random candidate (fresh decisions everywhere) and its schedule."""
        if not self.sketches:
            return None
        k = self.rng.randrange(len(self.sketches)) if sketch is None else sketch
        sch = self.make_schedule()
        sch.seed(self.rng.randrange(1, 2**31 - 1))
        data = Trace.from_json(self._templates[k])
        try:
            data.apply_to_schedule(sch, decisions={i: None for i in self._sampling[k]})
            cand = Candidate(k, self._read_decisions(k, sch))
            apply_postproc(sch)
        except (ScheduleError, LoweringError):
            return None
        return cand, sch

    # -- mutations (Ansor's: tile size, unroll / parallel choice, compute location) ---
    def mutate(self, cand: Candidate) -> Candidate | None:
        """A neighbour of ``cand``: one decision changed in a way that keeps it valid."""
        insts = self._kinds[cand.sketch]
        if not insts:
            return None
        order = list(range(len(insts)))
        self.rng.shuffle(order)
        for pos in order:
            inst = insts[pos]
            new = None
            if inst.kind == "SamplePerfectTile":
                new = self._mutate_tile(list(cand.decisions[pos]), inst)
            elif inst.kind == "SampleCategorical":
                n = len(inst.arg("candidates"))
                if n > 1:
                    choices = [c for c in range(n) if c != cand.decisions[pos]]
                    new = self.rng.choice(choices)
            elif inst.kind == "SampleComputeLocation":
                # a neighbouring place (a loop, root = -1, or inline = -2, which replay
                # refuses where it is not allowed): the number of candidate loops is not
                # known here, and a uniform draw from a fixed range points past them most
                # of the time (4 of 5 such children were invalid on softmax and row sums)
                cur = int(cand.decisions[pos])
                steps = [d for d in (cur - 1, cur + 1) if d >= -2]
                new = self.rng.choice(steps)
            if new is not None:
                decisions = list(cand.decisions)
                decisions[pos] = freeze(new)
                return Candidate(cand.sketch, tuple(decisions))
        return None

    def _mutate_tile(self, tiles: list[int], inst) -> list[int] | None:
        """Move one prime factor from one tile level to another."""
        max_inner = int(inst.arg("max_innermost_factor", 0) or 0)
        sources = [i for i, t in enumerate(tiles) if t > 1]
        if not sources or len(tiles) < 2:
            return None
        for _ in range(8):
            src = self.rng.choice(sources)
            dst = self.rng.choice([i for i in range(len(tiles)) if i != src])
            p = self.rng.choice([q for q, _ in prime_factors(tiles[src])])
            new = list(tiles)
            new[src] //= p
            new[dst] *= p
            if max_inner <= 0 or new[-1] <= max_inner:
                return new
        return None

    def crossover(self, a: Candidate, b: Candidate) -> Candidate | None:
        """Mix two parents of one sketch decision by decision."""
        if a.sketch != b.sketch:
            return None
        picks = tuple(x if self.rng.random() < 0.5 else y
                      for x, y in zip(a.decisions, b.decisions))
        return Candidate(a.sketch, picks)
