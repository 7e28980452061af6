"""Cost models: predict which programs are fast, learned from measurements.

``RandomForestModel`` (scikit-learn) fits the program feature vectors (``features``) to
throughput normalised per task (the best measured program of a task scores 1), so tasks
of different sizes share one model. ``XGBModel`` is accepted as an alias so tutorial
code runs unchanged; ``RandomModel`` scores at random (the search then degrades to
random search).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence

import numpy as np

from ..codegen.target import Target
from ..errors import AnsorLabError
from ..measure.records import task_records
from ..measure.timing import TimingGuard
from ..schedule.lower import lower_state
from .features import program_features
from .gpu_features import cuda_features


class CostModel:
    """Base class: ``update`` with measured (features, cost), ``predict`` scores."""

    def update(
        self,
        features: Sequence[np.ndarray],
        costs: Sequence[float],
        groups: Sequence[str] | None = None,
    ) -> None:
        """Learn from measured programs: their features and costs in seconds."""

    def predict(self, features: Sequence[np.ndarray]) -> np.ndarray:
        """Scores, higher for programs predicted faster."""
        raise NotImplementedError

    @property
    def num_samples(self) -> int:
        """How many measurements the model has learned from."""
        return 0

    def note_timing(self, groups: Sequence[str], estimated: Sequence[bool], who: str) -> None:
        """Refuse (MixedTimingError) to learn estimated and measured costs of one task.

        Called before ``update`` by the search policy and ``update_from_file``: an estimate
        (EmulatedRunner) and a measurement are not comparable, and a model fed both learns
        the gap between them instead of the gap between programs.
        """
        guard = self.__dict__.setdefault("_timings", TimingGuard())
        for g, e in zip(groups, estimated):
            guard.note(g, bool(e), "the cost model", who)

    @property
    def ready(self) -> bool:
        """Whether ``predict`` ranks programs (the policy uses its analytic prior until then)."""
        return True


class RandomModel(CostModel):
    """Uniform random scores."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def predict(self, features: Sequence[np.ndarray]) -> np.ndarray:
        """Random scores in [0, 1)."""
        return self.rng.random(len(features))


def normalized_throughput(costs: Sequence[float], groups: Sequence[str]) -> np.ndarray:
    """min_cost_of_group / cost for each sample (1 for the fastest of its task)."""
    costs = np.asarray(costs, dtype=float)
    groups = list(groups)
    best: dict = {}
    for c, g in zip(costs, groups):
        if np.isfinite(c) and c > 0:
            best[g] = min(best.get(g, np.inf), c)
    out = np.zeros(len(costs))
    for k, (c, g) in enumerate(zip(costs, groups)):
        if np.isfinite(c) and c > 0 and g in best:
            out[k] = best[g] / c
    return out


class RandomForestModel(CostModel):
    """A random forest regressor on program features, target = normalised throughput."""

    def __init__(
        self,
        n_estimators: int = 64,
        max_depth: int | None = None,
        min_samples: int = 8,
        seed: int = 0,
        num_warmup_sample: int | None = None,
        **unused: object,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.min_samples = min_samples if num_warmup_sample is None else num_warmup_sample
        self.seed = seed
        self.features: list[np.ndarray] = []
        self.costs: list[float] = []
        self.groups: list[str] = []
        self._seen: set = set()  # (group, cost, feature bytes) of every sample learned
        self.model = None
        self._rng = np.random.default_rng(seed)

    @property
    def num_samples(self) -> int:
        """Measurements learned from."""
        return len(self.costs)

    @property
    def ready(self) -> bool:
        """Whether the forest has been fitted (``min_samples`` measurements seen)."""
        return self.model is not None

    def update(self, features, costs, groups=None) -> None:
        """Add measurements and refit (valid costs only; errors get throughput 0).

        A measurement seen before (same task, program features and cost) is skipped: the
        tutorial's resume flow feeds one log twice (``update_from_file`` and then
        ``PreloadMeasuredStates``), and duplicates would weigh those programs double.
        """
        groups = list(groups) if groups is not None else ["task"] * len(costs)
        for f, c, g in zip(features, costs, groups):
            if f is None:
                continue
            f = np.asarray(f, dtype=float)
            c = float(c) if c is not None else float("inf")
            key = (g, c, f.tobytes())
            if key in self._seen:
                continue
            self._seen.add(key)
            self.features.append(f)
            self.costs.append(c)
            self.groups.append(g)
        self.fit()

    def fit(self) -> None:
        """Refit on everything seen so far."""
        if len(self.costs) < self.min_samples:
            return
        from sklearn.ensemble import RandomForestRegressor  # noqa: PLC0415 - 1 s to import

        X = np.stack(self.features)
        y = normalized_throughput(self.costs, self.groups)
        self.model = RandomForestRegressor(
            n_estimators=self.n_estimators,
            max_depth=self.max_depth,
            random_state=self.seed,
            n_jobs=1,
            min_samples_leaf=1,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model.fit(X, y)

    def predict(self, features) -> np.ndarray:
        """Predicted normalised throughput (random until enough samples are seen)."""
        if self.model is None or not len(features):
            return self._rng.random(len(features)) * 1e-3
        x = np.stack([np.asarray(f, dtype=float) for f in features])
        if x.shape[1] != self.model.n_features_in_:
            raise AnsorLabError(
                f"this model learned from {self.model.n_features_in_} features per program "
                f"and is asked about {x.shape[1]}: its training data was saved by another "
                "version of ansor_lab. Train a new model with update_from_file(log)."
            )
        return self.model.predict(x)

    def feature_importances(self, names: Sequence[str]) -> list[tuple[str, float]]:
        """(feature name, importance) for the fitted forest, largest first."""
        if self.model is None:
            return []
        pairs = zip(names, self.model.feature_importances_)
        return sorted(pairs, key=lambda p: -p[1])

    def update_from_file(self, file_name: str, task=None) -> int:
        """Learn from a records file (optionally only the records of ``task``).

        Records that do not apply (another structure, target, CPU or version: the whole key,
        as apply_best checks) are left out with a warning saying what differs. Returns how
        many records were used.
        """
        # task -> tune -> policy -> this module: the cycle is why this import is here
        from .task import schedule_from_record  # noqa: PLC0415

        feats, costs, groups, estimated = [], [], [], []
        for inp, res in task_records(file_name, task, "update_from_file"):
            try:
                sch = schedule_from_record(inp)
            except Exception:  # noqa: BLE001 - a record of another version: skip it
                continue

            target = Target(inp.target)
            if target.kind == "cuda":  # the features the policy computes for a CUDA task
                from .task import HardwareParams  # noqa: PLC0415 - the same cycle as above

                hw = HardwareParams.from_target(target)
                f, _, _ = cuda_features(sch.state, sch.args, hw, target)
                if f is None:
                    continue
                feats.append(f)
            else:
                func = lower_state(sch.state, sch.args, simplify=False)
                feats.append(program_features(func, target.vector_bytes, target.num_cores))
            costs.append(res.mean_cost if res.error_no == 0 else float("inf"))
            groups.append(inp.workload_key)
            estimated.append(res.estimated)
        if feats:
            ok = [k for k, c in enumerate(costs) if c != float("inf")]  # failures carry no cost
            self.note_timing([groups[k] for k in ok], [estimated[k] for k in ok], file_name)
            self.update(feats, costs, groups)
        return len(feats)

    def save(self, path: str) -> None:
        """Save the training data (the forest is refit on load)."""
        with open(path, "w") as f:
            json.dump(
                {
                    "features": [list(map(float, x)) for x in self.features],
                    "costs": self.costs,
                    "groups": self.groups,
                },
                f,
            )

    def load(self, path: str) -> None:
        """Load training data written by ``save`` and refit."""
        with open(path) as f:
            data = json.load(f)
        self.features = [np.asarray(x, dtype=float) for x in data["features"]]
        self.costs = list(data["costs"])
        self.groups = list(data["groups"])
        self._seen = {
            (g, c, f.tobytes()) for f, c, g in zip(self.features, self.costs, self.groups)
        }
        self.fit()


#: TVM's tutorials create ``XGBModel()``; here it is the random forest.
XGBModel = RandomForestModel


def pairwise_accuracy(pred: Sequence[float], truth: Sequence[float]) -> float:
    """Fraction of pairs ordered the same way by prediction and truth (ties skipped)."""
    pred = np.asarray(pred, dtype=float)
    truth = np.asarray(truth, dtype=float)
    i, j = np.triu_indices(len(pred), k=1)
    dt = np.sign(truth[i] - truth[j])
    dp = np.sign(pred[i] - pred[j])
    mask = dt != 0
    if not mask.any():
        return float("nan")
    return float((dt[mask] == dp[mask]).mean())
