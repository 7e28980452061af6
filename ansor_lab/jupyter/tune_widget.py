"""The live tuning widget: ``auto_scheduler.tune_widget(task, trials=200, ...)``.

The search runs in a background thread (the kernel stays responsive) and is observed only
through a ``SearchCallback``: the callback records numbers under a lock and marks the
widget dirty; one UI thread redraws at most every ``update_interval`` seconds, in one
method (``TuneWidget._refresh``), batching figure changes with ``fig.batch_update()``.
Nothing else mutates a widget, so the search thread never touches the front end.

The charts are plotly figures redrawn (from the same UI thread) into ``Output`` widgets,
which JupyterLab's plotly renderer draws; ``plotly_widget=True`` uses ``go.FigureWidget``.

What it shows: best-so-far GFLOPS against trials (one curve per task) with every measured
candidate as a point; the cost model's predictions against the measured throughput of
each batch it chose, with the rank correlation in the title; a progress bar with trials/s
and time left; a stop button (the search ends after the batch in flight, records kept);
tabs with the current best program's trace, lowered IR and LLVM IR (CUDA source for a
CUDA target). Without an IPython kernel it runs in the foreground and prints progress.

This module holds the data and the threads; the view (figures, widgets, redraw) is the
``TuneView`` mixin of ``_tune_view.py``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import tempfile
import threading
import time
from typing import Any

from ..search.tune import SearchCallback
from ._tune_view import COLORS, TuneView, _Snapshot, task_name

# the view's public names stay importable from here, where they always were
__all__ = ["COLORS", "TuneWidget", "in_kernel", "task_name", "tune_widget"]


def in_kernel() -> bool:
    """True inside a Jupyter kernel (an IPython shell with a kernel attached)."""
    ipython_mod = sys.modules.get("IPython")
    if ipython_mod is None:
        return False
    ip = ipython_mod.get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


class _Observer(SearchCallback):
    """The widget's eyes on the search: forwards events, never touches a widget."""

    def __init__(self, widget: TuneWidget) -> None:
        super().__init__()
        self.widget = widget

    def on_tune_start(self, task: Any, options: Any, policy: Any) -> None:
        self.widget._task_index(task)

    def on_batch(self, task: Any, inputs: list, results: list, stats: Any) -> None:
        self.widget._on_batch(task, results, stats)

    def on_new_best(self, task: Any, inp: Any, res: Any, stats: Any) -> None:
        self.widget._on_new_best(task, inp, res)

    def on_model_update(self, task: Any, predicted: list, measured: list, stats: Any) -> None:
        self.widget._on_model_update(task, predicted, measured, stats)


class TuneWidget(TuneView):
    """A running (or finished) search with its live view; see ``tune_widget``."""

    def __init__(
        self,
        tasks: list,
        trials: int,
        options: Any,
        *,
        policy_params: dict | None,
        search_policy: Any,
        strategy: str,
        task_weights: list | None,
        mode: str,
        update_interval: float,
        code_interval: float,
        seed: int | None,
        plotly_widget: bool = False,
    ) -> None:
        self.tasks = list(tasks)
        self.plotly_widget = plotly_widget
        self._fig_outputs: list = []
        self.trials = int(trials)
        self.mode = mode
        self.update_interval = float(update_interval)
        self.code_interval = float(code_interval)
        self.options = options
        self.log_file = _log_file(options)
        self._policy_params = policy_params
        self._search_policy = search_policy
        self._strategy = strategy
        self._task_weights = task_weights
        self._seed = seed
        self.scheduler: Any = None
        self.results: list | None = None
        self.error: BaseException | None = None
        self.ui_error: BaseException | None = None
        self.done = False
        # the data model, guarded by _lock (written by the search thread)
        self._lock = threading.RLock()
        self._ids = {id(t): k for k, t in enumerate(self.tasks)}
        n = len(self.tasks)
        self._version = 0
        self._total = 0
        self._errors = 0
        self._points: list[list] = [[] for _ in range(n)]
        self._curves: list[list] = [[] for _ in range(n)]
        self._best_gflops = [0.0] * n
        self._best_cost = [math.inf] * n
        self._best_trace: list = [None] * n
        self._best_task: int | None = None
        self._estimated = False  # some costs are the GPU model's estimates (EmulatedRunner)
        self._code_version = 0
        self._model_rounds: list = []
        self._start = time.perf_counter()
        self._end: float | None = None
        self._finished = False
        self._stop_requested = False
        # UI state (touched by the UI thread only)
        self._dirty = threading.Event()
        self._done_event = threading.Event()
        self._shown_version = -1
        self._shown_code = 0
        self._last_code = 0.0
        self._printed_version = -1
        self._auto_shown_at: int | None = None
        self._observer = _Observer(self)
        self.options.callbacks = [*(self.options.callbacks or []), self._observer]
        self.widget: Any = None
        self.fig: Any = None
        self.model_fig: Any = None
        self.progress: Any = None
        self.status: Any = None
        self.stop_button: Any = None
        self.code_tabs: Any = None
        self.code_caption: Any = None
        if mode == "widget":
            self._build_widgets()
        self._search_thread: threading.Thread | None = None
        self._ui_thread: threading.Thread | None = None

    # -- public ---------------------------------------------------------------------
    @property
    def result(self) -> Any:
        """The TuneResult (a list of them for several tasks); None while running."""
        if self.results is None:
            return None
        return self.results[0] if len(self.tasks) == 1 else self.results

    @property
    def trials_done(self) -> int:
        """Programs measured so far (all tasks)."""
        with self._lock:
            return self._total

    @property
    def best_gflops(self) -> list[float]:
        """Best throughput found so far, per task."""
        with self._lock:
            return list(self._best_gflops)

    @property
    def stopped(self) -> bool:
        """Whether a stop was requested."""
        return self._stop_requested

    def stop(self) -> None:
        """End the search after the batch in flight (what the Stop button does)."""
        if self._finished:
            return
        with self._lock:
            self._stop_requested = True
            self._version += 1
        self._observer.request_stop()
        self._dirty.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the search ended and the view is final; True if it has.

        Raises the search's exception if it failed.
        """
        self._done_event.wait(timeout)
        if self.done and self.error is not None:
            raise RuntimeError(f"the search failed: {self.error!r}") from self.error
        return self.done

    def start(self, background: bool = True) -> TuneWidget:
        """Start the search (``tune_widget`` does this)."""
        self._start = time.perf_counter()
        self._ui_thread = threading.Thread(target=self._ui_loop, name="ansor-tune-ui", daemon=True)
        self._ui_thread.start()
        if background:
            self._search_thread = threading.Thread(
                target=self._search, name="ansor-tune", daemon=True
            )
            self._search_thread.start()
        else:
            self._search()
            self._ui_thread.join()
            if self.error is not None:
                raise self.error
        return self

    # -- the search (its own thread) ------------------------------------------------
    def _search(self) -> None:
        from ..search.policy import SketchPolicy
        from ..search.task_scheduler import TaskScheduler
        from ..search.tune import tune_task

        try:
            if len(self.tasks) == 1:
                task = self.tasks[0]
                policy = self._search_policy or SketchPolicy(
                    task, params=self._policy_params, seed=self._seed, verbose=0
                )
                self.results = [tune_task(task, self.options, policy)]
            else:
                self.scheduler = TaskScheduler(
                    self.tasks, task_weights=self._task_weights, strategy=self._strategy
                )
                self.results = self.scheduler.tune(
                    self.options, search_policy_params=self._policy_params
                )
        except Exception as err:  # noqa: BLE001 - shown in the widget, raised by wait()
            self.error = err
        finally:
            with self._lock:
                self._finished = True
                self._end = time.perf_counter()
                self._version += 1
            self._dirty.set()

    # -- events from the search thread: data only -----------------------------------
    def _task_index(self, task: Any) -> int:
        with self._lock:
            k = self._ids.get(id(task))
            if k is None:  # a task we were not given (should not happen): track it too
                k = len(self.tasks)
                self.tasks.append(task)
                self._ids[id(task)] = k
                for lst in (self._points, self._curves):
                    lst.append([])
                self._best_gflops.append(0.0)
                self._best_cost.append(math.inf)
                self._best_trace.append(None)
            return k

    def _on_batch(self, task: Any, results: list, stats: Any) -> None:
        k = self._task_index(task)
        flop = task.flop_ct
        with self._lock:
            for res in results:
                self._total += 1
                if res.error_no != 0:
                    self._errors += 1
                    continue
                cost = res.mean_cost
                self._estimated |= bool(getattr(res, "estimated", False))
                g = flop / cost / 1e9 if cost > 0 else 0.0
                self._points[k].append((self._total, g))
                if cost < self._best_cost[k]:
                    self._best_cost[k] = cost
                    self._best_gflops[k] = g
                    self._curves[k].append((self._total, g))
            if self._curves[k] and self._curves[k][-1][0] != self._total:
                self._curves[k].append((self._total, self._best_gflops[k]))  # flat to now
            self._version += 1
        self._dirty.set()

    def _on_new_best(self, task: Any, inp: Any, res: Any) -> None:
        k = self._task_index(task)
        with self._lock:
            self._best_trace[k] = inp.trace
            self._best_task = k
            self._code_version += 1

    def _on_model_update(self, task: Any, predicted: list, measured: list, stats: Any) -> None:
        k = self._task_index(task)
        flop = task.flop_ct
        with self._lock:
            self._model_rounds.append(
                (k, list(predicted), [flop * m / 1e9 for m in measured], stats.rank_correlation)
            )
            self._version += 1

    def _snapshot(self) -> _Snapshot:
        with self._lock:
            end = self._end if self._end is not None else time.perf_counter()
            k = self._best_task
            return _Snapshot(
                self._version,
                self._total,
                self._errors,
                [list(p) for p in self._points],
                [list(c) for c in self._curves],
                list(self._best_gflops),
                list(self._best_cost),
                list(self._model_rounds),
                self._code_version,
                k,
                self._best_trace[k] if k is not None else None,
                end - self._start,
                self._finished,
                self._stop_requested,
                self._estimated,
            )

    # -- the view (the UI thread) ---------------------------------------------------
    def _ui_loop(self) -> None:
        last = 0.0
        while True:
            self._dirty.wait(timeout=self.update_interval)
            wait = self.update_interval - (time.perf_counter() - last)
            if wait > 0 and not self._finished:
                time.sleep(wait)  # throttle: at most one redraw per interval
            self._dirty.clear()
            finished = self._finished
            try:
                self._refresh(final=finished)
            except Exception as err:  # noqa: BLE001 - a drawing bug must not stop the search
                self.ui_error = err
            last = time.perf_counter()
            if finished:
                break
        self.done = True
        self._done_event.set()

    def __repr__(self) -> str:
        state = "done" if self.done else "stopping" if self._stop_requested else "running"
        best = ", ".join(f"{g:.3g}" for g in self.best_gflops)
        names = ", ".join(task_name(t)[:40] for t in self.tasks[:2])
        return (
            f"TuneWidget({names}; {self.trials_done}/{self.trials} trials, "
            f"best {best} GFLOPS, {state})"
        )


def _log_file(options: Any) -> str | None:
    for cb in options.measure_callbacks or []:
        name = getattr(cb, "filename", None)
        if name:
            return name
    return None


def tune_widget(
    task: Any,
    trials: int = 200,
    *,
    log_file: str | None = None,
    policy_params: dict | None = None,
    search_policy: Any = None,
    seed: int | None = None,
    strategy: str = "gradient",
    task_weights: list | None = None,
    mode: str = "auto",
    background: bool | None = None,
    display: bool | None = None,
    update_interval: float = 0.5,
    code_interval: float = 2.0,
    plotly_widget: bool = False,
    tuning_options: Any = None,
    **tuning_kwargs: Any,
) -> TuneWidget:
    """Tune ``task`` (or a list of tasks, with a TaskScheduler) and watch it live.

    ``trials`` is the total measurement budget; other keyword arguments are TuningOptions
    fields (``num_measures_per_round``, ``runner``, ``builder``, ``early_stopping``,
    ``measure_callbacks``, ``check_correctness``, ``num_threads``), or pass a whole
    ``tuning_options``. ``log_file`` records every measurement (default: a new temporary
    file, see ``w.log_file``). ``policy_params`` go to SketchPolicy (and
    ``search_policy`` replaces it for one task). ``mode`` is "widget", "text" or "auto"
    (widget inside a Jupyter kernel); the search runs in the background in widget mode
    and in the foreground in text mode unless ``background`` says otherwise.

    The charts are plotly figures (``w.fig``, ``w.model_fig``) redrawn into Output widgets
    by JupyterLab's plotly renderer; ``plotly_widget=True`` uses ``go.FigureWidget``
    instead (with plotly 7.1 / anywidget 0.11 / JupyterLab 4.6 its front end drew empty
    axes: the figure's data never reached plotly.js).

    Returns the TuneWidget ``w``: ``w.wait()``, ``w.stop()``, ``w.done``, ``w.result``
    (the TuneResult; ``w.result.apply_best()`` gives ``(sch, args)``).
    """
    from ..measure.records import RecordToFile
    from ..search.task import TuningOptions

    tasks = list(task) if isinstance(task, (list, tuple)) else [task]
    if not tasks:
        raise ValueError("tune_widget needs a task (or a non-empty list of tasks)")
    if mode not in ("auto", "widget", "text"):
        raise ValueError(f"mode must be 'auto', 'widget' or 'text', not {mode!r}")
    if mode == "auto":
        mode = "widget" if in_kernel() and _have_widgets() else "text"
    elif mode == "widget" and not _have_widgets():
        raise ImportError(
            "the tuning widget needs ipywidgets and plotly: "
            "pip install 'ansor_lab[jupyter]' (or use mode='text')"
        )
    if tuning_options is not None:
        options = dataclasses.replace(tuning_options, **tuning_kwargs)
    else:
        tuning_kwargs.setdefault("num_measures_per_round", min(64, max(8, trials // 10)))
        fields = {f.name for f in dataclasses.fields(TuningOptions)}
        unknown = sorted(set(tuning_kwargs) - fields)
        if unknown:
            raise TypeError(
                f"tune_widget got unknown argument(s) {unknown}; tuning options "
                f"are {sorted(fields - {'num_measure_trials', 'verbose'})}"
            )
        options = TuningOptions(**tuning_kwargs)
    options.num_measure_trials = int(trials)
    options.verbose = 0  # the widget (or its text lines) is the progress display
    options.measure_callbacks = list(options.measure_callbacks or [])
    options.callbacks = list(options.callbacks or [])
    if log_file is not None and _log_file(options) != str(log_file):
        options.measure_callbacks.append(RecordToFile(str(log_file)))
    if _log_file(options) is None:
        fd, path = tempfile.mkstemp(prefix="ansor_tune_", suffix=".json")
        os.close(fd)
        options.measure_callbacks.append(RecordToFile(path))
    w = TuneWidget(
        tasks,
        trials,
        options,
        policy_params=policy_params,
        search_policy=search_policy,
        strategy=strategy,
        task_weights=task_weights,
        mode=mode,
        update_interval=update_interval,
        code_interval=code_interval,
        seed=seed,
        plotly_widget=plotly_widget,
    )
    if display is None:
        display = mode == "widget" and in_kernel()
    if display and mode == "widget":
        w._show()
    if background is None:
        background = mode == "widget"
    if mode == "text":
        print(f"[tune] {len(tasks)} task(s), {trials} trials, log {w.log_file}", flush=True)
    return w.start(background=background)


def _have_widgets() -> bool:
    try:
        import ipywidgets  # noqa: F401
        import plotly  # noqa: F401
    except ImportError:
        return False
    return True
