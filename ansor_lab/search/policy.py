"""SketchPolicy: sketches, random initial population, cost-model-guided evolution.

Each phase is callable alone, as a course needs: ``policy.generate_sketches()``,
``policy.sample_initial_population()``, ``policy.evolutionary_search(population, n)``,
and ``policy.next_batch(n)`` which chains them and picks what to measure next.

A task whose target is CUDA gets Ansor's GPU rules, annotation and post-processing
(``gpu_sketch``, ``gpu_postproc``); each of its candidates is checked against the
target's limits (``gpu_check``) and one that breaks them is dropped and counted in
``invalid_counts``, never measured; its features gain the GPU terms (``gpu_features``).
"""

from __future__ import annotations

import random
import time
import warnings
from collections import Counter, OrderedDict
from typing import Any

import numpy as np

from ..errors import RecordWarning, TaskError
from ..measure.records import MeasureInput, MeasureResult, task_records
from ..schedule.lower import lower_state
from .cost_model import CostModel, RandomForestModel
from .features import program_features
from .gpu_features import cuda_features
from .gpu_postproc import apply_gpu_postproc
from .gpu_sketch import annotate_gpu, gpu_rules
from .partial_schedule import as_partial_schedule, starting_schedule
from .postproc import apply_postproc
from .selection import diverse_top, finalists, hedge_picks, program_structure
from .sketch import Sketch, annotate_sampling, cpu_rules, generate_sketches
from .space import Candidate, SearchSpace, freeze

DEFAULT_PARAMS = {
    "population": 96,  # evolutionary population size
    "generations": 3,  # evolution rounds per search
    "mutation_prob": 0.85,
    "crossover_prob": 0.05,
    "migration_prob": 0.05,  # a child is its parent's decisions in another sketch
    "eps_greedy": 0.05,  # share of each batch picked at random (exploration)
    "sample_init_min_population": 48,
    # while the model cannot rank (the first batch), the analytic prior ranks this many
    # times sample_init_min_population random samples (1: the same sample as later
    # batches). Measured at 64 trials, 3 seeds, quiet machine (issue 21): 8 against 1,
    # BERT QKV GEMM 193/196/163 against 162/187/168 GFLOPS and ResNet-50's last conv
    # 161/146/148 against 161/132/132 (48 random samples often hold none of its good
    # tilings). With the prior before its dense-compute fixes, 8 cost the GEMM 10%.
    # 24 against 8, five seeds each, re-timed side by side (Zen 5, one thread): ResNet's
    # stride-2 conv 470-498 us against 481-574 (seed 4's 384 samples held no tile of
    # 32 channels x 7 lanes, the fastest; 1152 held several), the depthwise conv 24-30
    # against 21-31 us, the GEMV 96-97 against 87-96 us, ResNet's last conv alike
    # (1129-1373 against 1101-1340); the first batch costs 4 s more on the ResNet conv
    "prior_init_factor": 24,
    "use_measured_ratio": 0.2,  # share of the initial population taken from the best measured
    # until the cost model can rank, candidates are ranked by the analytic register-tile
    # prior (search/prior.py) instead of at random; 0 turns it off (Ansor's random start)
    "analytic_prior": 1,
    "prior_random_ratio": 0.25,  # share of a prior-ranked batch still picked at random
    # share of each model-ranked batch given to the sketches the greedy picks left out,
    # chosen by an upper confidence bound on their best measured speed: the model ranks a
    # sketch by the few programs it has seen of it, and a search that trusts it settles on
    # one sketch early (see sketch_bounds); 0 turns it off
    "sketch_explore": 0.125,
    "sketch_explore_c": 0.3,  # weight of the bound's exploration term
    # small budgets (selection.py): the prior-ranked first batch keeps its picks this many
    # decisions apart (0: plain rank order)
    "first_batch_min_diff": 2,
    # before that rule, up to this share of the first batch's ranked picks is the best of
    # each program structure (selection.program_structure: register tile and compute
    # locations) the prior scores within
    # first_batch_tile_margin of its best (0 turns it off)
    "first_batch_tiles": 0.5,
    "first_batch_tile_margin": 0.9,
    # share of a model-ranked batch ranked by the prior instead while the forest has seen
    # fewer than prior_hedge_until programs (0 turns it off)
    "prior_hedge": 0.25,
    "prior_hedge_until": 48,
    # the last batch of a search measures again up to this many programs within
    # finalist_margin of the best (each keeps its fastest time). Off by default: TVM's
    # Ansor never measures a program twice, and its logs hold each program once
    "finalists": 0,
    "finalist_margin": 0.15,
    # while the prior ranks, each sketch present in the population breeds an equal share
    # of the children (the prior still ranks what comes out across sketches): a sketch
    # whose good programs need a rare tiling (a 1x1 convolution's output channels as the
    # vector: 1 random tiling in 15 fills a vector) starts from its poor random draws and
    # was never bred beside the sketches that start well; 0 turns it off
    "prior_sketch_balance": 1,
}


class PreloadMeasuredStates:
    """An init callback: mark the programs of a log as measured (and teach the model)."""

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def enter(self, policy: SketchPolicy) -> None:
        """Load the records of the policy's task."""
        policy.preload(self.filename)


class SketchPolicy:
    """Ansor's search policy over the sketches of one task.

    ``partial_schedule`` (keyword; a function of a tir.Schedule, or a trace) warm-starts
    the search from the steps a user is sure of: every sketch begins with them and the
    search fills in the rest (see ``partial_schedule.py``).
    """

    def __init__(
        self,
        task: Any,
        program_cost_model: CostModel | None = None,
        params: dict | None = None,
        seed: int | None = None,
        verbose: int = 1,
        init_search_callbacks: list | None = None,
        *,
        partial_schedule: Any = None,
    ) -> None:
        self.task = task
        # the steps the user is sure of: every sketch starts from them (partial_schedule.py)
        self._start = starting_schedule(task, as_partial_schedule(partial_schedule))
        self.model = program_cost_model if program_cost_model is not None else RandomForestModel()
        self.params = {**DEFAULT_PARAMS, **(params or {})}
        unknown = set(self.params) - set(DEFAULT_PARAMS)
        if unknown:
            raise TaskError(
                f"unknown SketchPolicy params {sorted(unknown)}; known: {sorted(DEFAULT_PARAMS)}"
            )
        self.seed = seed if seed is not None else random.randrange(2**31)
        self.rng = random.Random(self.seed)
        self.verbose = verbose
        self.is_gpu = getattr(getattr(task, "target", None), "kind", "llvm") == "cuda"
        # candidates dropped as invalid (over the target's limits, refused by lowering or
        # by replay), by reason: never measured, never a crash
        self.invalid_counts: Counter = Counter()
        self.sketches = self.generate_sketches()
        self.space = SearchSpace(
            self.sketches,
            task.make_schedule,
            seed=self.seed,
            postproc=apply_gpu_postproc if self.is_gpu else apply_postproc,
        )
        self.measured: dict = {}  # candidate key -> mean cost (inf for errors)
        self.measured_candidates: list[tuple[float, Candidate]] = []
        self._features: OrderedDict = OrderedDict()
        # a child the policy has already replayed needs no repair replay (space.repair)
        self.space.known = self._features.__contains__
        self._traces: OrderedDict = OrderedDict()
        self._priors: dict = {}
        self.best_cost = float("inf")
        self.best_trace: dict | None = None
        self.search_time = 0.0
        self.last_predictions: dict = {}
        self._last_ranked: list[Candidate] = []  # the last evolution's unmeasured, best first
        for cb in init_search_callbacks or []:
            cb.enter(self)

    # -- phase 1: sketches ------------------------------------------------------------
    def generate_sketches(self, print_for_debug: bool = False) -> list[Sketch]:
        """The task's sketches (program structures with open decisions)."""
        hw = self.task.hardware_params
        self.dropped_sketches: Counter = Counter()
        if self.is_gpu:  # Ansor's GPU rules and annotation, within the target's limits
            sketches = generate_sketches(
                self._start,
                rules=gpu_rules(hw.max_threads_per_block, hw.warp_size),
                annotate=lambda sch: annotate_gpu(sch, hw.max_threads_per_block),
                dropped=self.dropped_sketches,
            )
        else:
            sketches = generate_sketches(
                self._start,
                rules=cpu_rules(hw.num_cores, lanes=max(1, hw.vector_unit_bytes // 4)),
                annotate=lambda sch: annotate_sampling(sch, hw.num_cores),
                dropped=self.dropped_sketches,
            )
        if self.dropped_sketches and self.verbose >= 1:
            print(f"sketch generation dropped {_describe(self.dropped_sketches)}")
        if print_for_debug:
            for s in sketches:
                print(s)
        return sketches

    @property
    def invalid_candidates(self) -> int:
        """How many candidates were found invalid and dropped so far (see ``invalid``)."""
        return sum(self.space.invalid.values())

    @property
    def invalid(self) -> Counter:
        """Dropped candidates by ``"<where>: <ErrorClass>"`` (sample, replay, lower)."""
        return self.space.invalid

    # -- phase 2: random initial population -------------------------------------------
    def sample_initial_population(self, n: int | None = None) -> list[Candidate]:
        """``n`` valid random candidates (random annotation of random sketches)."""
        n = n or self.params["sample_init_min_population"]
        out: list[Candidate] = []
        tries = 0
        while len(out) < n and tries < n * 4:
            tries += 1
            r = self.space.sample()
            if r is None:
                self.invalid_counts["replay"] += 1
                continue
            cand, sch = r
            if self._remember(cand, sch) is None and self.is_gpu:
                continue  # over the GPU's limits (counted in invalid_counts)
            out.append(cand)
        return out

    def _remember(self, cand: Candidate, sch: Any) -> np.ndarray | None:
        key = cand.key
        if key not in self._features:
            hw = self.task.hardware_params
            if self.is_gpu:
                feats, problems, prior = cuda_features(sch.state, sch.args, hw, self.task.target)
                if problems:
                    self.invalid_counts[_reason(problems[0])] += 1
                self._priors[key] = prior
            else:
                try:
                    func = lower_state(sch.state, sch.args, simplify=False, check=False)
                    feats = program_features(func, hw.vector_unit_bytes, hw.num_cores)
                    self._priors[key] = float(feats[-1])  # the analytic prior's score
                except Exception as e:  # noqa: BLE001 - counted by class: a bug shows
                    self.space.invalid[f"lower: {type(e).__name__}"] += 1
                    feats = None
            self._features[key] = feats
            self._traces[key] = sch.trace.as_json()
            while len(self._features) > 20000:
                old, _ = self._features.popitem(last=False)
                self._traces.popitem(last=False)
                self._priors.pop(old, None)
        return self._features[key]

    def features_of(self, cand: Candidate) -> np.ndarray | None:
        """Program features of a candidate (replayed and lowered on first use)."""
        if cand.key in self._features:
            return self._features[cand.key]
        sch = self.space.try_schedule(cand)
        if sch is None:  # counted in space.invalid
            self._features[cand.key] = None
            self.invalid_counts["replay"] += 1
            return None
        return self._remember(cand, sch)

    # -- phase 3: evolution -----------------------------------------------------------
    @property
    def uses_prior(self) -> bool:
        """Whether candidates are ranked by the analytic prior (the model cannot rank yet)."""
        return bool(self.params["analytic_prior"]) and not self.model.ready

    def predict(self, cands: list[Candidate]) -> np.ndarray:
        """Cost-model scores (higher = faster); invalid candidates get -inf.

        Until the model can rank (``model.ready``), the scores are the analytic prior's.
        """
        feats = [self.features_of(c) for c in cands]
        valid = [k for k, f in enumerate(feats) if f is not None]
        scores = np.full(len(cands), -np.inf)
        if valid and self.uses_prior:
            scores[valid] = [self._priors.get(cands[k].key, 0.0) for k in valid]
        elif valid:
            pred = self.model.predict([feats[k] for k in valid])
            scores[valid] = pred
        return scores

    def evolutionary_search(self, init_population: list[Candidate], out_size: int) -> list:
        """The ``out_size`` best unmeasured candidates found by mutating the population."""
        p = self.params
        pop = list(init_population)
        measured_best = [c for _, c in sorted(self.measured_candidates, key=lambda x: x[0])]
        pop += measured_best[: int(len(pop) * p["use_measured_ratio"]) + 1]
        pop = [c for c in pop if self.features_of(c) is not None]
        best: dict = {}
        for generation in range(p["generations"] + 1):
            if not pop:
                break
            scores = self.predict(pop)
            for c, s in zip(pop, scores):
                if c.key not in self.measured and np.isfinite(s):
                    best[c.key] = (s, c)
            if generation == p["generations"]:
                break  # children of the last generation would never be scored
            finite = np.where(np.isfinite(scores), scores, np.nan)
            lo = np.nanmin(finite) if np.isfinite(finite).any() else 0.0
            weights = np.nan_to_num(finite - lo, nan=0.0) + 1e-6
            if self.uses_prior and p["prior_sketch_balance"]:
                weights = _per_sketch(weights, [c.sketch for c in pop])
            children: list[Candidate] = []
            attempts = 0
            while len(children) < p["population"] and attempts < p["population"] * 4:
                attempts += 1
                parent = self.rng.choices(pop, weights=weights)[0]
                r = self.rng.random()
                child = None
                if r < p["crossover_prob"]:
                    other = self.rng.choices(pop, weights=weights)[0]
                    child = self.space.crossover(parent, other)
                elif r < p["crossover_prob"] + p["mutation_prob"]:
                    child = self.space.mutate(parent)
                elif r < p["crossover_prob"] + p["mutation_prob"] + p["migration_prob"]:
                    child = self.space.migrate(parent, self.rng.randrange(len(self.sketches)))
                else:
                    child = parent
                if child is not None and self.features_of(child) is not None:
                    children.append(child)
            pop = children
        ranked = sorted(best.values(), key=lambda x: -x[0])
        self.last_predictions = {c.key: s for s, c in ranked}
        self._last_ranked = [c for _, c in ranked]
        return self._last_ranked[:out_size]

    # -- picking a batch --------------------------------------------------------------
    def next_batch(self, n: int) -> list[MeasureInput]:
        """The next ``n`` programs to measure (best predicted, plus a few random ones)."""
        start = time.perf_counter()
        n_init = self.params["sample_init_min_population"]
        if self.uses_prior:  # ranking by the prior is cheap: rank a wider sample
            n_init *= max(1, int(self.params["prior_init_factor"]))
        init = self.sample_initial_population(n_init)
        chosen: list[Candidate] = []
        seen = set(self.measured)
        if self.uses_prior:  # keep the first batch diverse: the model learns from it
            n_random = int(round(n * self.params["prior_random_ratio"]))
        else:
            n_random = int(round(n * self.params["eps_greedy"])) if self.model.num_samples else 0
        n_explore = (
            0
            if self.uses_prior or not self.model.num_samples
            else int(round(n * self.params["sketch_explore"]))
        )
        p = self.params
        n_greedy = n - n_random - n_explore
        ranked = self.evolutionary_search(init, 2 * n)
        n_hedge = 0
        if self.uses_prior and p["first_batch_min_diff"]:  # diverse first batch
            chosen += diverse_top(
                self._last_ranked,
                n_greedy,
                p["first_batch_min_diff"],
                seen,
                tiles=int(n_greedy * p["first_batch_tiles"]),
                score=lambda c: self.last_predictions.get(c.key),
                tile_margin=p["first_batch_tile_margin"],
                structure=lambda c: program_structure(c, self.space.location_positions(c.sketch)),
            )
        elif self.model.ready and self.model.num_samples < p["prior_hedge_until"]:
            n_hedge = int(round(n_greedy * p["prior_hedge"]))
        for c in ranked:
            if len(chosen) >= n_greedy - n_hedge:
                break
            if c.key not in seen:
                chosen.append(c)
                seen.add(c.key)
        chosen += hedge_picks(self._last_ranked + init, self._prior_of, n_hedge, seen)
        chosen += self._sketch_explore_picks(n_explore, chosen, init, seen)
        pool = [c for c in init if c.key not in seen]
        self.rng.shuffle(pool)
        for c in pool:
            if len(chosen) >= n:
                break
            chosen.append(c)
            seen.add(c.key)
        extra = 0
        while len(chosen) < n and extra < 4 * n:  # space nearly exhausted: sample more
            extra += 1
            r = self.space.sample()
            if r is None:
                continue
            cand, sch = r
            if self._remember(cand, sch) is None and self.is_gpu:
                continue
            if cand.key not in seen:
                chosen.append(cand)
                seen.add(cand.key)
        inputs = []
        for c in chosen:
            if c.key not in self._traces or self._traces[c.key] is None:
                self.features_of(c)
            trace = self._traces.get(c.key)
            if trace is not None:
                inputs.append(MeasureInput(self.task, trace, c.sketch, c.decisions))
        self.search_time += time.perf_counter() - start
        return inputs

    def _prior_of(self, cand: Candidate) -> float | None:
        if self.features_of(cand) is None:
            return None
        return self._priors.get(cand.key)

    def finalist_inputs(self, n: int) -> list[MeasureInput]:
        """Programs to measure again in a search's last batch of ``n``: the measured ones
        within ``finalist_margin`` of the best, at most ``finalists`` and a quarter of the
        batch (see selection.py)."""
        k = min(int(self.params["finalists"]), n // 4)
        out = []
        for c in finalists(self.measured_candidates, k, self.params["finalist_margin"]):
            if self._traces.get(c.key) is None:
                self.features_of(c)
            trace = self._traces.get(c.key)
            if trace is not None:
                out.append(MeasureInput(self.task, trace, c.sketch, c.decisions))
        return out

    def sketch_bounds(self) -> dict[int, float]:
        """Upper confidence bound of each sketch's best speed (UCB1 over sketches).

        The bound is the sketch's best measured speed relative to the best of all, plus
        ``c * sqrt(ln(total measured) / (measured of the sketch + 1))``: a sketch that was
        rarely measured keeps a claim on the exploration share until its programs show it
        behind.
        """
        count = [0] * len(self.sketches)
        best = [float("inf")] * len(self.sketches)
        for sketch, _ in self.measured:
            if 0 <= sketch < len(count):
                count[sketch] += 1
        for cost, cand in self.measured_candidates:
            if 0 <= cand.sketch < len(best):
                best[cand.sketch] = min(best[cand.sketch], cost)
        top = min(best) if best else float("inf")
        total = max(sum(count), 1)
        c = self.params["sketch_explore_c"]
        return {
            k: (top / best[k] if np.isfinite(best[k]) else 0.0)
            + c * float(np.sqrt(np.log(total + 1) / (count[k] + 1)))
            for k in range(len(self.sketches))
        }

    def _sketch_explore_picks(
        self, n: int, chosen: list[Candidate], init: list[Candidate], seen: set
    ) -> list[Candidate]:
        """Up to ``n`` candidates, one each from the sketches with the highest bound that
        the batch has not picked.

        A sketch's pick is the best measured program so far moved into it (its tiling is the
        best guess the search has), or where that was measured already or does not fit,
        the sketch's best-predicted unmeasured program.
        """
        if n <= 0:
            return []
        taken = {c.sketch for c in chosen}
        bounds = self.sketch_bounds()
        order = sorted((k for k in bounds if k not in taken), key=lambda k: -bounds[k])
        leaders = [c for _, c in sorted(self.measured_candidates, key=lambda x: x[0])[:4]]
        picks: list[Candidate] = []
        for k in order:
            if len(picks) >= n:
                break
            moved = [m for m in (self.space.migrate(c, k) for c in leaders) if m is not None]
            moved = [m for m in moved if m.key not in seen and self.features_of(m) is not None]
            if moved:
                picks.append(moved[0])
                seen.add(moved[0].key)
                continue
            pool = [c for c in self._last_ranked + init if c.sketch == k and c.key not in seen]
            if not pool:  # evolution did not reach the sketch: draw a few of its own
                for _ in range(8):
                    r = self.space.sample(sketch=k)
                    if r is not None and r[0].key not in seen:
                        self._remember(*r)
                        pool.append(r[0])
            scores = self.predict(pool) if pool else np.array([])
            if len(scores) and np.isfinite(scores).any():
                pick = pool[int(np.argmax(scores))]
                picks.append(pick)
                seen.add(pick.key)
        return picks

    def update(self, inputs: list[MeasureInput], results: list[MeasureResult]) -> None:
        """Record measurements and retrain the cost model."""
        start = time.perf_counter()
        feats, costs = [], []
        note = getattr(self.model, "note_timing", None)  # a user's model may not have it
        if note is not None:
            good = [r for r in results if r.error_no == 0]
            note([self.task.workload_key] * len(good), [r.estimated for r in good], "tuning")
        for inp, res in zip(inputs, results):
            cand = Candidate(inp.sketch, tuple(inp.decisions)) if inp.sketch is not None else None
            cost = res.mean_cost
            if cand is not None:  # measured again (a finalist): its fastest time counts
                self.measured[cand.key] = min(cost, self.measured.get(cand.key, cost))
                if np.isfinite(cost):
                    self.measured_candidates.append((cost, cand))
                f = self.features_of(cand)
                if f is not None:
                    feats.append(f)
                    costs.append(cost)
            if cost < self.best_cost:
                self.best_cost = cost
                self.best_trace = inp.trace
        if feats:
            self.model.update(feats, costs, [self.task.workload_key] * len(costs))
        self.search_time += time.perf_counter() - start

    def preload(self, filename: str) -> int:
        """Treat the task's records in ``filename`` as measured; returns how many.

        Only records that apply to this task under the whole key (structure, target, CPU
        features, versions: ``RecordKey``, as apply_best checks) are used; the others, and
        records naming a sketch this task does not have, are left out with a warning.
        """
        n = 0
        feats, costs = [], []
        unknown_sketch = 0
        records = list(task_records(filename, self.task, "PreloadMeasuredStates"))
        note = getattr(self.model, "note_timing", None)
        if note is not None:
            good = [r for _, r in records if r.error_no == 0]
            note([self.task.workload_key] * len(good), [r.estimated for r in good], filename)
        for inp, res in records:
            if inp.sketch is None:
                continue
            if inp.sketch >= len(self.sketches):
                unknown_sketch += 1
                continue
            cand = Candidate(inp.sketch, freeze(inp.decisions))
            self.measured[cand.key] = res.mean_cost
            n += 1
            if res.error_no == 0:
                self.measured_candidates.append((res.mean_cost, cand))
                if res.mean_cost < self.best_cost:
                    self.best_cost = res.mean_cost
                    self.best_trace = inp.trace
            f = self.features_of(cand)
            if f is not None:
                feats.append(f)
                costs.append(res.mean_cost)
        if unknown_sketch:
            warnings.warn(
                f"PreloadMeasuredStates: {unknown_sketch} records in {filename} name a sketch "
                f"this task does not have (it has {len(self.sketches)}); they were not used. "
                "The log was written by another version of the sketch rules: tune again.",
                RecordWarning,
                2,
            )
        if feats:
            self.model.update(feats, costs, [self.task.workload_key] * len(costs))
        return n


def _per_sketch(weights: np.ndarray, sketches: list[int]) -> np.ndarray:
    """``weights`` rescaled so that each sketch's candidates together weigh the same."""
    total: dict = {}
    for w, k in zip(weights, sketches):
        total[k] = total.get(k, 0.0) + float(w)
    return np.array([w / total[k] for w, k in zip(weights, sketches)])


def _describe(counts: Counter) -> str:
    """``"3 (annotate: ScheduleError 2, sketch: LoweringError 1)"``."""
    parts = ", ".join(f"{k} {v}" for k, v in counts.most_common())
    return f"{sum(counts.values())} ({parts})"


def _reason(problem: str) -> str:
    """The kind of a GPU check's problem, for ``SketchPolicy.invalid_counts``."""
    for key in (
        "threads per block",
        "virtual threads",
        "shared bytes",
        "local bytes",
        "global buffers",
        "extent",
        "lowering",
        "kernels",
        "verify",
    ):
        if key in problem:
            return key
    return "other"
