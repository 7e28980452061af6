"""The tuning loop: pick a batch, measure it, learn, repeat — observable through callbacks.

Callbacks (``SearchCallback``) see every measured batch, every new best program and
every model update; any of them can ask the search to stop, which it does after the
batch in flight (records already written stay written). Scripts get a tqdm progress bar.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..measure.measure import (
    LocalBuilder,
    LocalRunner,
    ProgramBuilder,
    ProgramMeasurer,
    ProgramRunner,
)
from ..measure.records import MeasureInput, MeasureResult, RecordMismatch
from ..schedule.trace import Trace
from .policy import SketchPolicy
from .preflight import preflight
from .space import freeze


class SearchCallback:
    """Observe a search; override what you need. ``request_stop()`` ends it cleanly."""

    def __init__(self) -> None:
        self._stop = False

    def request_stop(self) -> None:
        """Ask the search to stop after the batch in flight."""
        self._stop = True

    @property
    def stop_requested(self) -> bool:
        """Whether a stop was asked for."""
        return self._stop

    def on_tune_start(self, task: Any, options: Any, policy: Any) -> None:
        """The search is about to start."""

    def on_batch(self, task: Any, inputs: list, results: list, stats: TuneStats) -> None:
        """A batch was measured."""

    def on_new_best(
        self, task: Any, inp: MeasureInput, res: MeasureResult, stats: TuneStats
    ) -> None:
        """A faster program was found."""

    def on_model_update(self, task: Any, predicted: list, measured: list, stats: TuneStats) -> None:
        """The cost model was retrained; ``predicted`` vs ``measured`` throughput of the
        batch it had scored before measuring."""

    def on_tune_end(self, task: Any, result: TuneResult) -> None:
        """The search ended (budget spent, early stop, or stop requested)."""


@dataclass
class TuneStats:
    """Progress numbers shared with callbacks."""

    trials: int = 0
    budget: int = 0
    best_cost: float = math.inf
    best_gflops: float = 0.0
    errors: int = 0
    #: candidates the search found invalid and dropped before measuring (never measured,
    #: never fatal): the policy's ``invalid`` says where and why
    invalid: int = 0
    start_time: float = field(default_factory=time.perf_counter)
    search_time: float = 0.0
    measure_time: float = 0.0
    history: list = field(default_factory=list)  # (trial, cost or inf, best so far)
    rank_correlation: float = float("nan")

    @property
    def elapsed(self) -> float:
        """Seconds since the search started."""
        return time.perf_counter() - self.start_time

    @property
    def trials_per_second(self) -> float:
        """Measured programs per second so far."""
        return self.trials / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float:
        """Estimated seconds left."""
        rate = self.trials_per_second
        return (self.budget - self.trials) / rate if rate > 0 else float("nan")


@dataclass
class TuneResult:
    """What a search produced."""

    task: Any
    stats: TuneStats
    best_trace: dict | None
    log_file: str | None = None
    stopped_early: bool = False

    @property
    def best_cost(self) -> float:
        """Fastest measured time, seconds."""
        return self.stats.best_cost

    def apply_best(self) -> tuple:
        """(schedule, args) of the best program found."""

        if self.best_trace is None:
            raise RecordMismatch(
                "no program was measured successfully in this search (num_measure_trials=0, "
                "or every candidate failed: the log's error records say why); tune with "
                "num_measure_trials > 0, or apply the best of an earlier log with "
                "task.apply_best(log_file)"
            )
        sch = self.task.make_schedule()
        Trace.from_json(self.best_trace).apply_to_schedule(sch)
        return sch, list(self.task.args)


def _spearman(a: list, b: list) -> float:
    if len(a) < 3:
        return float("nan")
    ra = np.argsort(np.argsort(a))
    rb = np.argsort(np.argsort(b))
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def _log_file(options: Any) -> str | None:
    for cb in options.measure_callbacks or []:
        name = getattr(cb, "filename", None)
        if name:
            return name
    return None


class TuneSession:
    """One task's search, advanced a batch at a time (``tune_task`` and the task scheduler
    both drive it)."""

    def __init__(
        self, task: Any, options: Any, policy: Any = None, measurer: ProgramMeasurer | None = None
    ) -> None:

        self.task = task
        self.options = options
        if measurer is None:
            runner = getattr(options.runner, "runner", options.runner)
            if not isinstance(runner, ProgramRunner):
                runner = LocalRunner()
            # before any work: a runner that cannot time this target is refused now
            preflight(task, runner, options, policy)
            builder = (
                options.builder if isinstance(options.builder, ProgramBuilder) else LocalBuilder()
            )
            if options.check_correctness:
                runner.check_correctness = True
            threads = options.num_threads or task.hardware_params.num_cores
            measurer = ProgramMeasurer(builder, runner, options.measure_callbacks, threads)
        self.policy = policy or SketchPolicy(task, verbose=options.verbose)
        self.measurer = measurer
        self.callbacks = list(options.callbacks or [])
        self.stats = TuneStats(budget=options.num_measure_trials)
        self.stats.best_cost = self.policy.best_cost
        if math.isfinite(self.stats.best_cost):
            self.stats.best_gflops = task.flop_ct / self.stats.best_cost / 1e9
        self.result = TuneResult(task, self.stats, self.policy.best_trace, _log_file(options))
        self.since_best = 0
        self.exhausted = False
        for cb in self.callbacks:
            cb.on_tune_start(task, options, self.policy)

    @property
    def should_stop(self) -> bool:
        """Early stopping reached, stop requested, or the space is exhausted."""
        o = self.options
        if self.exhausted or any(cb.stop_requested for cb in self.callbacks):
            return True
        # as TVM: a negative early_stopping is off, and the check follows a measured round
        # (the task scheduler's per_task_early_stopping is set here without TuningOptions)
        es = o.early_stopping
        return es is not None and es >= 0 and self.stats.trials > 0 and self.since_best >= es

    def run_round(self, n: int, final: bool = False) -> list:
        """Pick, measure and learn from ``n`` programs; returns their results.

        ``final``: the search's last batch, where a policy with ``finalist_inputs``
        measures its closest finalists again (search/selection.py).
        """
        task, stats, policy = self.task, self.stats, self.policy
        t0 = time.perf_counter()
        again = policy.finalist_inputs(n) if final and hasattr(policy, "finalist_inputs") else []
        inputs = policy.next_batch(n - len(again)) + again if n > len(again) else again
        stats.search_time += time.perf_counter() - t0
        stats.invalid = int(getattr(policy, "invalid_candidates", 0))
        if not inputs:
            self.exhausted = True
            return []
        predicted = [
            policy.last_predictions.get((inp.sketch, freeze(inp.decisions)), float("nan"))
            for inp in inputs
        ]
        t1 = time.perf_counter()
        results = self.measurer.measure(task, policy, inputs)
        stats.measure_time += time.perf_counter() - t1
        t2 = time.perf_counter()
        policy.update(inputs, results)
        stats.search_time += time.perf_counter() - t2
        improved = False
        for inp, res in zip(inputs, results):
            stats.trials += 1
            cost = res.mean_cost
            if res.error_no != 0:
                stats.errors += 1
            if cost < stats.best_cost:
                stats.best_cost = cost
                stats.best_gflops = task.flop_ct / cost / 1e9
                self.result.best_trace = inp.trace
                improved = True
                for cb in self.callbacks:
                    cb.on_new_best(task, inp, res, stats)
            stats.history.append((stats.trials, cost, stats.best_cost))
        self.since_best = 0 if improved else self.since_best + len(inputs)
        measured_tp = [1.0 / r.mean_cost if r.error_no == 0 else 0.0 for r in results]
        pairs = [(p, m) for p, m in zip(predicted, measured_tp) if np.isfinite(p)]
        if pairs:
            stats.rank_correlation = _spearman([p for p, _ in pairs], [m for _, m in pairs])
            for cb in self.callbacks:
                cb.on_model_update(task, [p for p, _ in pairs], [m for _, m in pairs], stats)
        for cb in self.callbacks:
            cb.on_batch(task, inputs, results, stats)
        return results

    def finish(self, close: bool = True) -> TuneResult:
        """End the session: stop workers, tell the callbacks."""
        if close:
            self.measurer.close()
        self.result.stopped_early = (
            self.should_stop and self.stats.trials < self.options.num_measure_trials
        )
        for cb in self.callbacks:
            cb.on_tune_end(self.task, self.result)
        return self.result


def tune_task(task: Any, options: Any, policy: Any = None) -> TuneResult:
    """Tune one task with ``options`` (a TuningOptions)."""
    session = TuneSession(task, options, policy)
    bar = None
    if options.verbose >= 1 and options.num_measure_trials > 0:
        from tqdm.auto import tqdm  # noqa: PLC0415 - tqdm.auto probes for IPython

        bar = tqdm(
            total=options.num_measure_trials,
            desc=f"tune {task.desc[:40]}",
            unit="trial",
            leave=True,
        )
    try:
        while session.stats.trials < options.num_measure_trials and not session.should_stop:
            n = min(
                options.num_measures_per_round, options.num_measure_trials - session.stats.trials
            )
            final = session.stats.trials + n >= options.num_measure_trials
            results = session.run_round(n, final=final)
            if bar is not None:
                bar.update(len(results))
                bar.set_postfix(
                    best_gflops=f"{session.stats.best_gflops:.1f}",
                    errors=session.stats.errors,
                    dropped=session.stats.invalid,
                )
    finally:
        if bar is not None:
            bar.close()
        result = session.finish()
    invalid = getattr(session.policy, "invalid", None)
    if options.verbose >= 1 and invalid:
        parts = ", ".join(f"{k} {v}" for k, v in invalid.most_common())
        print(
            f"{task.desc or task.workload_key}: {sum(invalid.values())} invalid candidates "
            f"dropped before measuring ({parts})"
        )
    return result
