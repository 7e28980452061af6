"""TaskScheduler: tune several tasks with one budget, where it helps the total most.

Ansor's gradient strategy: after a warm-up round per task, each round goes to the task
whose weighted latency is expected to drop most — a mix of its recent improvement
(backward difference over a window of rounds) and an optimistic forward estimate
(latency / trials so far). All tasks share one cost model (throughput is normalised per
task, so they can), as in Ansor.
"""

from __future__ import annotations

import math
from typing import Any

from ..measure.measure import (
    LocalBuilder,
    LocalRunner,
    ProgramBuilder,
    ProgramMeasurer,
    ProgramRunner,
)
from .cost_model import RandomForestModel
from .policy import PreloadMeasuredStates, SketchPolicy
from .preflight import preflight
from .task import SearchTask, TaskError
from .tune import TuneSession


class TaskScheduler:
    """Allocate measurement trials across tasks (TVM's arguments)."""

    def __init__(
        self,
        tasks: list,
        task_weights: list | None = None,
        objective_func: Any = None,
        strategy: str = "gradient",
        load_model_file: str | None = None,
        load_log_file: str | None = None,
        alpha: float = 0.2,
        beta: float = 2,
        gamma: float = 0.5,
        backward_window_size: int = 3,
        callbacks: list | None = None,
    ) -> None:
        if not tasks:
            raise TaskError("TaskScheduler needs at least one task")
        if strategy not in ("gradient", "round-robin"):
            raise TaskError("strategy must be 'gradient' or 'round-robin'")
        self.tasks = list(tasks)
        # checked here, not at the first round of tune(), where a wrong item meets
        # attribute lookups far from this call
        for k, t in enumerate(self.tasks):
            if not isinstance(t, SearchTask):
                raise TaskError(
                    f"tasks[{k}] is {type(t).__name__} {t!r:.60}, not a SearchTask; pass "
                    "[auto_scheduler.SearchTask(func=..., args=..., target=...), ...]"
                )
        self.task_weights = list(task_weights) if task_weights else [1.0] * len(tasks)
        if len(self.task_weights) != len(self.tasks):
            raise TaskError(
                f"task_weights has {len(self.task_weights)} weights for {len(self.tasks)} "
                f"task{'s' if len(self.tasks) != 1 else ''}; give one weight per task (how "
                "many times the network runs it), or "
                "leave task_weights out for weight 1 each"
            )
        self.objective_func = objective_func or (
            lambda costs: sum(w * c for w, c in zip(self.task_weights, costs))
        )
        self.strategy = strategy
        self.alpha = alpha
        self.backward_window_size = backward_window_size
        self.load_log_file = load_log_file
        self.load_model_file = load_model_file
        self.callbacks = list(callbacks or [])
        self.best_costs = [math.inf] * len(tasks)
        self.task_cts = [0] * len(tasks)  # rounds given to each task
        self.task_costs_history: list[list[float]] = [[] for _ in tasks]
        self.sessions: list[TuneSession] = []
        self.allocation: list[int] = []  # which task each round went to

    def _gradient(self, i: int) -> float:
        hist = self.task_costs_history[i]
        w = self.task_weights[i]
        if not hist or not math.isfinite(hist[-1]):
            return -math.inf  # nothing works yet: most urgent
        k = self.backward_window_size
        if len(hist) > k and math.isfinite(hist[-1 - k]):
            backward = (hist[-1] - hist[-1 - k]) / k
        else:
            backward = 0.0
        forward = -hist[-1] / max(1, self.task_cts[i])
        return w * (self.alpha * backward + (1 - self.alpha) * forward)

    def tune(
        self,
        tune_option: Any,
        search_policy: Any = "default",
        search_policy_params: dict | None = None,
        adaptive_training: bool = False,
        per_task_early_stopping: int | None = None,
    ) -> list:
        """Spend ``tune_option.num_measure_trials`` over the tasks; returns TuneResults."""
        budget = tune_option.num_measure_trials
        # as TVM: a round is at most an equal share of the budget, so every task gets its
        # warm-up round before one task can take the whole budget
        per_round = min(tune_option.num_measures_per_round, budget // len(self.tasks))
        if budget > 0 and per_round < 1:
            raise TaskError(
                f"num_measure_trials={budget} is too small for "
                f"{len(self.tasks)} tasks; set it to at least {len(self.tasks)}"
            )
        model = RandomForestModel()
        if self.load_log_file:
            for t in self.tasks:
                model.update_from_file(self.load_log_file, t)
        builder = (
            tune_option.builder
            if isinstance(tune_option.builder, ProgramBuilder)
            else LocalBuilder()
        )
        runner = getattr(tune_option.runner, "runner", tune_option.runner)
        if not isinstance(runner, ProgramRunner):
            runner = LocalRunner()
        for t in self.tasks:  # before any work: every task's target must be timeable
            preflight(t, runner, tune_option, None)
        if tune_option.check_correctness:  # as TuneSession does for a single task
            runner.check_correctness = True
        init_cbs = [PreloadMeasuredStates(self.load_log_file)] if self.load_log_file else []
        for t in self.tasks:
            policy = SketchPolicy(
                t,
                program_cost_model=model,
                params=search_policy_params,
                verbose=tune_option.verbose,
                init_search_callbacks=init_cbs,
            )
            threads = tune_option.num_threads or t.hardware_params.num_cores
            measurer = ProgramMeasurer(builder, runner, tune_option.measure_callbacks, threads)
            self.sessions.append(TuneSession(t, tune_option, policy, measurer))
        spent = 0
        bar = None
        if tune_option.verbose >= 1 and budget > 0:
            from tqdm.auto import tqdm  # noqa: PLC0415 - tqdm.auto probes for IPython

            bar = tqdm(total=budget, desc=f"tune {len(self.tasks)} tasks", unit="trial")
        try:
            order = list(range(len(self.tasks)))  # warm-up: one round each
            while spent < budget:
                if any(
                    s.should_stop and s.callbacks and any(cb.stop_requested for cb in s.callbacks)
                    for s in self.sessions
                ):
                    break  # a stop was requested: warm-up rounds included, end now
                if order:
                    i = order.pop(0)
                else:
                    live = [k for k, s in enumerate(self.sessions) if not s.should_stop]
                    if not live:
                        break
                    if self.strategy == "round-robin":
                        i = min(live, key=lambda k: self.task_cts[k])
                    else:
                        i = min(live, key=self._gradient)
                session = self.sessions[i]
                if per_task_early_stopping is not None:
                    session.options.early_stopping = per_task_early_stopping
                n = min(per_round, budget - spent)
                results = session.run_round(n)
                spent += len(results)
                self.task_cts[i] += 1
                self.allocation.append(i)
                self.best_costs[i] = session.stats.best_cost
                self.task_costs_history[i].append(session.stats.best_cost)
                for cb in self.callbacks:
                    cb(self, i, session)
                if bar is not None:
                    bar.update(len(results))
                    total = self.objective_func(self.best_costs)
                    bar.set_postfix(task=i, latency_ms=f"{total * 1e3:.3f}")
                if not results and all(s.should_stop for s in self.sessions):
                    break
        finally:
            if bar is not None:
                bar.close()
            builder.close()
            runner.close()
        return [s.finish(close=False) for s in self.sessions]

    def summary(self) -> str:
        """A table: task, weight, best latency, trials."""
        lines = [f"{'ID':>3} | {'task':40} | {'weight':>6} | {'latency (ms)':>12} | trials"]
        for k, (t, s) in enumerate(zip(self.tasks, self.sessions)):
            lat = s.stats.best_cost * 1e3
            lines.append(
                f"{k:>3} | {t.desc[:40]:40} | {self.task_weights[k]:>6g} | "
                f"{lat:>12.4f} | {s.stats.trials}"
            )
        return "\n".join(lines)
