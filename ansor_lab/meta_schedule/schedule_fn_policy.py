"""The search over a user's stochastic schedule function (MetaSchedule's ReplayTrace).

Each candidate is the function run on a fresh schedule seeded anew, so its sampling
instructions (``sample_perfect_tile``, ``sample_categorical``...) take fresh decisions;
candidates with the same trace are measured once.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from ..errors import AnsorLabError, TaskError
from ..measure.records import MeasureInput


class ScheduleFnPolicy:
    """A search policy (``next_batch``/``update``) replaying ``sch_fn`` with fresh seeds."""

    def __init__(self, task: Any, sch_fn: Callable, seed: int | None = None) -> None:
        self.task = task
        self.sch_fn = sch_fn
        self.rng = random.Random(seed)
        self.seen: set = set()
        self.best_cost = float("inf")
        self.best_trace: dict | None = None
        self.last_predictions: dict = {}
        self.failures = 0

    def _candidates(self) -> list:
        sch = self.task.make_schedule(seed=self.rng.randrange(2**31))
        out = self.sch_fn(sch)
        if out is None:
            return [sch]
        return list(out) if isinstance(out, (list, tuple)) else [out]

    def next_batch(self, n: int) -> list[MeasureInput]:
        """Up to ``n`` new programs (fewer when the function's space is exhausted)."""
        batch: list[MeasureInput] = []
        tries = 0
        while len(batch) < n and tries < 20 * n:
            tries += 1
            try:
                schedules = self._candidates()
            except AnsorLabError as err:
                self.failures += 1
                if self.failures >= 20 and not self.seen:
                    raise TaskError(
                        f"the schedule function fails on every try; the last error: {err}"
                    ) from err
                continue
            for sch in schedules:
                trace = sch.trace.as_json()
                key = json.dumps(trace, sort_keys=True)
                if key not in self.seen:
                    self.seen.add(key)
                    batch.append(MeasureInput(self.task, trace))
        return batch

    def update(self, inputs: list, results: list) -> None:
        """Remember the best program measured."""
        for inp, res in zip(inputs, results):
            if res.mean_cost < self.best_cost:
                self.best_cost = res.mean_cost
                self.best_trace = inp.trace
