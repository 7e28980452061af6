"""The search space: candidates as (sketch, decisions), sampled, replayed and mutated."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ScheduleError
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


#: share of mutations that reshape a register tile (where a sketch has one to reshape)
RESHAPE_SHARE = 0.25


class SearchSpace:
    """The sketches of one task, and how to turn candidates into schedules."""

    def __init__(
        self,
        sketches: list[Sketch],
        make_schedule: Callable[[], Schedule],
        seed: int | None = None,
        postproc: Callable[[Schedule], None] = apply_postproc,
    ) -> None:
        self.sketches = sketches
        self.make_schedule = make_schedule
        self.postproc = postproc  # the CPU's, or gpu_postproc.apply_gpu_postproc
        self.replay_failures = 0  # sampled decisions the schedule refused
        self.rng = random.Random(seed)
        #: which sampling steps mutations may change (a predicate of the instruction; None:
        #: all), as a custom ``PostOrderApply(mutator_probs=...)`` chooses them
        self.mutable: Callable | None = None
        #: candidates found invalid and dropped, by ``"<where>: <ErrorClass>"`` (a sampled
        #: decision that does not fit never ends a search: it costs one candidate; a class
        #: that is not one of ansor_lab.errors is a bug, and the search fuzzer fails on it)
        self.invalid: Counter = Counter()
        self._templates = [s.trace.as_json() for s in sketches]
        self._sampling = [
            [k for k, inst in enumerate(s.trace.insts) if inst.is_sampling] for s in sketches
        ]
        self._kinds = [[s.trace.insts[k] for k in idx] for s, idx in zip(sketches, self._sampling)]
        self._signatures = [tuple(_signature(i) for i in insts) for insts in self._kinds]
        self._locations = [
            [p for p, inst in enumerate(insts) if inst.kind == "SampleComputeLocation"]
            for insts in self._kinds
        ]
        self._spatial_tiles = [
            _spatial_tile_groups(s.trace.insts, idx) for s, idx in zip(sketches, self._sampling)
        ]
        #: per (sketch, position of a compute-location decision): the decisions every
        #: schedule built so far accepted there (the intersection: an earlier decision may
        #: narrow them, as a stage computed inside another keeps that one from inlining)
        self._location_choices: dict[tuple[int, int], frozenset] = {}
        #: children a mutation replayed to repair (key -> schedule before postproc)
        self._repaired: dict[tuple, Schedule] = {}
        #: whether a candidate key was replayed before (the policy's feature cache): such a
        #: child is not replayed again to repair it
        self.known: Callable[[tuple], bool] | None = None

    def schedule(self, cand: Candidate, postproc: bool = True) -> Schedule:
        """Replay a candidate; raises ScheduleError when its decisions do not fit (see
        ``try_schedule`` for the form that drops and counts it)."""
        sch = self.make_schedule()
        data = Trace.from_json(self._templates[cand.sketch])
        overrides = dict(zip(self._sampling[cand.sketch], cand.decisions))
        data.apply_to_schedule(sch, decisions=overrides)
        self._learn_locations(cand.sketch, sch)
        if postproc:
            self.postproc(sch)
        return sch

    def location_positions(self, sketch: int) -> list[int]:
        """Positions of ``sketch``'s compute-location decisions in a candidate's decisions."""
        return self._locations[sketch]

    def _learn_locations(self, sketch: int, sch: Schedule) -> None:
        """Remember which decisions each compute-location step of ``sketch`` accepts."""
        positions = self.location_positions(sketch)
        seen = sch.location_choices[: len(positions)]
        if len(seen) != len(positions):
            return
        for pos, choices in zip(positions, seen):
            known = self._location_choices.get((sketch, pos))
            self._location_choices[(sketch, pos)] = (
                frozenset(choices) if known is None else known & frozenset(choices)
            )

    def try_schedule(self, cand: Candidate, where: str = "replay") -> Schedule | None:
        """``schedule(cand)``, or None (counted in ``invalid`` under ``where``) when the
        candidate's decisions are refused by a primitive, lowering or a check."""
        built = self._repaired.pop(cand.key, None)
        try:
            if built is not None:  # replayed by the mutation that made it: postproc left
                self.postproc(built)
                return built
            return self.schedule(cand)
        except Exception as e:  # noqa: BLE001 - counted by class: a bug shows, never ends it
            self.invalid[f"{where}: {type(e).__name__}"] += 1
            return None

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
            self._learn_locations(k, sch)
            self.postproc(sch)
        except Exception as e:  # noqa: BLE001 - counted by class: a bug shows, never ends it
            self.invalid[f"sample: {type(e).__name__}"] += 1
            self.replay_failures += 1
            return None
        return cand, sch

    # -- mutations (Ansor's: tile size, unroll / parallel choice, compute location) ---
    def mutate(self, cand: Candidate) -> Candidate | None:
        """A neighbour of ``cand``: one decision changed in a way that keeps it valid, or
        (with probability ``RESHAPE_SHARE``, where the sketch tiles two spatial axes of a
        stage) that stage's register tile reshaped."""
        insts = self._kinds[cand.sketch]
        allowed = self.mutable or (lambda inst: True)
        tiles_mutable = any(allowed(i) for i in insts if i.kind == "SamplePerfectTile")
        if tiles_mutable and self._spatial_tiles[cand.sketch] and self.rng.random() < RESHAPE_SHARE:
            moved = self.reshape_tile(cand)
            if moved is not None:
                return moved
        order = [k for k, inst in enumerate(insts) if allowed(inst)]
        if not order:
            return None
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
                new = self._mutate_location(cand.sketch, pos, int(cand.decisions[pos]))
            if new is not None:
                decisions = list(cand.decisions)
                decisions[pos] = freeze(new)
                if inst.kind == "SampleComputeLocation":
                    # a later place the move took away goes to the root; one no schedule
                    # has refused yet (rstd inline once sum2 moved inside it) is redrawn
                    self._repair_later_locations(cand.sketch, pos, decisions)
                return self.repair(Candidate(cand.sketch, tuple(decisions)), after=pos)
        return None

    def repair(self, cand: Candidate, after: int = -1, tries: int = 4) -> Candidate:
        """``cand`` replayed, with a later decision it invalidated drawn afresh.

        A tile size may set the extent of a loop that a later step splits (the panel a
        packing sketch copies is the register tile's width): changing one then leaves the
        other's recorded factors not multiplying to its loop, and the child was dropped
        (90 of a ResNet conv's children). Only decisions after position ``after`` are
        redrawn; a child that still fails is returned as it is (replay drops and counts
        it). The repaired child's schedule is kept for ``try_schedule``.
        """
        if self.known is not None and self.known(cand.key):
            return cand
        sampling = self._sampling[cand.sketch]
        overrides = dict(zip(sampling, cand.decisions))
        for _ in range(tries):
            sch = self.make_schedule()
            sch.seed(self.rng.randrange(1, 2**31 - 1))
            try:
                Trace.from_json(self._templates[cand.sketch]).apply_to_schedule(
                    sch, decisions=overrides
                )
            except Exception as e:  # noqa: BLE001 - never ends a search: try_schedule counts it
                at = getattr(e, "instruction_index", None)
                if (
                    not isinstance(e, ScheduleError)
                    or at not in overrides
                    or overrides[at] is None
                    or sampling.index(at) <= after
                ):
                    return cand
                overrides[at] = None  # drawn afresh on the next replay
                continue
            self._learn_locations(cand.sketch, sch)
            fixed = Candidate(cand.sketch, self._read_decisions(cand.sketch, sch))
            if len(self._repaired) >= 4096:  # children never scored: let them go
                self._repaired.clear()
            self._repaired[fixed.key] = sch
            return fixed
        return cand

    def _repair_later_locations(self, sketch: int, pos: int, decisions: list) -> None:
        """After moving the stage at ``pos``, a later compute location that not every
        schedule accepted goes to the root (always a choice): the move may have taken it
        away (a stage computed inside another keeps that one from inlining)."""
        for later, inst in enumerate(self._kinds[sketch]):
            known = self._location_choices.get((sketch, later))
            if later > pos and inst.kind == "SampleComputeLocation" and known is not None:
                if decisions[later] not in known:
                    decisions[later] = -1

    def _mutate_location(self, sketch: int, pos: int, cur: int) -> int | None:
        """A neighbouring place (a loop, root = -1, or inline = -2) among those the step
        accepted in every schedule built so far; before any, a neighbour that replay may
        refuse. A uniform draw from a fixed range pointed past the loops most of the time
        (4 of 5 such children were invalid on softmax and row sums), and a blind step
        still half the time on a layer norm (inline where a stage is computed inside)."""
        known = self._location_choices.get((sketch, pos))
        if known is None:
            return self.rng.choice([d for d in (cur - 1, cur + 1) if d >= -2])
        others = sorted(d for d in known if d != cur)
        if not others:
            return None
        # inline and root are no loop's neighbours: one step from any loop, or a stage
        # computed at its consumer's 5th loop is 7 steps from inline (a depthwise
        # convolution's padding: 3 of 5 searches measured inline only under poor tiles
        # and never moved their best tile there, which ran 1.25x faster)
        near = [d for d in others if abs(d - cur) == 1 or d < 0]
        return self.rng.choice(near or others)

    def reshape_tile(self, cand: Candidate) -> Candidate | None:
        """Move a prime factor from one spatial axis's innermost tile to another's, the
        same factor going the other way between outer levels: the register tile changes
        shape (8x8 -> 4x16) while its size and every axis's extent stay.

        A single-decision mutation cannot make this move without passing through a
        register tile twice or half the size, which the model rightly ranks low; searches
        were seen settling on an 8x8 tile that runs at 2/3 of the 4x16 one.
        """
        groups = self._spatial_tiles[cand.sketch]
        if not groups:
            return None
        insts = self._kinds[cand.sketch]
        for _ in range(8):
            group = self.rng.choice(groups)
            a, b = self.rng.sample(group, 2)
            ta, tb = list(cand.decisions[a]), list(cand.decisions[b])
            if ta[-1] == 1:
                continue
            p = self.rng.choice([q for q, _ in prime_factors(ta[-1])])
            outer_b = [lv for lv in range(len(tb) - 1) if tb[lv] % p == 0]
            max_inner = int(insts[b].arg("max_innermost_factor", 0) or 0)
            if not outer_b or (max_inner > 0 and tb[-1] * p > max_inner):
                continue
            ta[-1] //= p
            ta[self.rng.randrange(len(ta) - 1)] *= p
            tb[-1] *= p
            tb[self.rng.choice(outer_b)] //= p
            decisions = list(cand.decisions)
            decisions[a], decisions[b] = freeze(ta), freeze(tb)
            return self.repair(Candidate(cand.sketch, tuple(decisions)), after=max(a, b))
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

    def migrate(self, cand: Candidate, sketch: int) -> Candidate | None:
        """``cand``'s decisions in another sketch, where both sketches draw the same
        sampling steps in the same order (None otherwise).

        The sketches of one task differ mostly in cache and packing steps around the same
        tiles, so a tiling found good in one is a good first guess in the others. Replay
        still checks each decision (a compute location may not exist in the other sketch).
        """
        if sketch == cand.sketch or self._signatures[sketch] != self._signatures[cand.sketch]:
            return None
        return Candidate(sketch, cand.decisions)

    def crossover(self, a: Candidate, b: Candidate) -> Candidate | None:
        """Mix two parents of one sketch decision by decision."""
        if a.sketch != b.sketch:
            return None
        picks = tuple(x if self.rng.random() < 0.5 else y for x, y in zip(a.decisions, b.decisions))
        # a tile of one parent may not fit a loop the other's tiles made: redrawn
        return self.repair(Candidate(a.sketch, picks))


def _signature(inst) -> tuple:
    """What a sampling step draws: its kind and the shape of its decision."""
    if inst.kind == "SamplePerfectTile":
        return (inst.kind, inst.arg("n"), inst.arg("max_innermost_factor", 0))
    if inst.kind == "SampleCategorical":
        return (inst.kind, tuple(inst.arg("candidates")))
    return (inst.kind,)


def _spatial_tile_groups(insts: list, sampling: list[int]) -> list[list[int]]:
    """Per stage tiled on two or more spatial axes, the positions (among the sketch's
    sampling steps) of those axes' tile decisions.

    Tiles belong to one stage when their loops come from one ``get_loops``; its spatial
    tiles are those with the most levels (a multi-level structure has more S levels than
    R levels: SSRSRS, SSSRRSRS).
    """
    source = {}
    for k, inst in enumerate(insts):
        if inst.kind == "GetLoops":
            for rv in inst.outputs:
                source[id(rv)] = k
    groups: dict[int, list[tuple[int, int]]] = {}
    for pos, k in enumerate(sampling):
        inst = insts[k]
        if inst.kind != "SamplePerfectTile":
            continue
        origin = source.get(id(inst.arg("loop")))
        if origin is not None:
            groups.setdefault(origin, []).append((pos, int(inst.arg("n"))))
    out = []
    for tiles in groups.values():
        most = max(n for _, n in tiles)
        spatial = [pos for pos, n in tiles if n == most]
        if len(spatial) >= 2 and most >= 3:
            out.append(spatial)
    return out
