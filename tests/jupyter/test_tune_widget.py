"""The live tuning widget, driven by real (tiny) searches."""

from __future__ import annotations

import json
import math
import threading
import time

import numpy as np
import pytest

from ansor_lab import auto_scheduler, te
from ansor_lab.jupyter.tune_widget import TuneWidget
from ansor_lab.measure.records import MeasureResult, load_records

POLICY = {"population": 16, "generations": 1, "sample_init_min_population": 8}


def _task(n: int = 16, name: str = "C"):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name=name)
    return auto_scheduler.SearchTask(
        compute_dag=te.ComputeDAG([A, B, C]), target="llvm", desc=f"matmul{n}"
    )


def _runner():
    return auto_scheduler.LocalRunner(min_repeat_ms=5, number=1)


def _log_lines(path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f]  # every line must be valid JSON


def _wait_for(cond, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("condition not reached")
        time.sleep(0.1)


def test_widget_shows_what_the_records_hold(tmp_path):
    log = tmp_path / "tune.json"
    task = _task()
    w = auto_scheduler.tune_widget(
        task,
        trials=8,
        mode="widget",
        log_file=str(log),
        num_measures_per_round=4,
        runner=_runner(),
        policy_params=POLICY,
        seed=3,
    )
    assert isinstance(w, TuneWidget)
    assert w.wait(240) and w.done
    assert w.result.stats.trials == 8 and w.trials_done == 8
    assert w.progress.value == w.progress.max == 8
    assert w.progress.bar_style == "success"
    assert w.stop_button.disabled

    records = list(load_records(str(log)))
    assert len(_log_lines(log)) == 8
    ok = [
        (k + 1, task.flop_ct / res.mean_cost / 1e9)
        for k, (_, res) in enumerate(records)
        if res.error_no == 0
    ]
    assert ok, "no program measured successfully"
    best_curve, points = w.fig.data[0], w.fig.data[1]
    assert list(points.x) == [x for x, _ in ok]
    np.testing.assert_allclose(points.y, [g for _, g in ok], rtol=1e-12)
    assert best_curve.y[-1] == pytest.approx(max(g for _, g in ok))
    assert list(best_curve.y) == sorted(best_curve.y)  # best so far never drops
    assert best_curve.x[0] == ok[0][0] and best_curve.x[-1] == 8
    assert w.best_gflops[0] == pytest.approx(max(g for _, g in ok))

    # the cost model's view: one point per prediction, titled with the rank correlation
    model = w.model_fig.data[0]
    assert len(model.x) == len(model.y) > 0
    assert "Spearman ρ" in w.model_fig.layout.title.text
    assert set(np.round(model.y, 9)) <= {round(g, 9) for _, g in ok} | {0.0}

    assert "finished: 8 trials" in w.status.value
    trace_html, ir_html, llvm_html = (c.value for c in w.code_tabs.children)
    assert "apply_trace" in trace_html and "sample_perfect_tile" in trace_html
    assert "T.prim_func" in ir_html or "prim_func" in ir_html
    assert "define" in llvm_html
    assert w.code_tabs.titles == ("Trace", "Lowered IR", "LLVM IR")

    sch, args = w.result.apply_best()
    assert len(args) == 3 and sch.trace.insts
    assert w.result.best_cost == pytest.approx(min(r.mean_cost for _, r in records))
    assert "8/8 trials" in repr(w) and "done" in repr(w)
    assert w._repr_mimebundle_()["application/vnd.jupyter.widget-view+json"]["model_id"]


def test_stop_button_ends_the_search_with_the_log_intact(tmp_path):
    log = tmp_path / "stopped.json"
    w = auto_scheduler.tune_widget(
        _task(),
        trials=64,
        mode="widget",
        log_file=str(log),
        num_measures_per_round=4,
        runner=_runner(),
        policy_params=POLICY,
        seed=5,
    )
    _wait_for(lambda: w.trials_done >= 4, 240)
    assert not w.done
    w.stop_button.click()  # what a click in the notebook does
    assert w.wait(240) and w.done
    assert w.stopped and w.result.stopped_early
    assert w.trials_done < 64 and w.trials_done % 4 == 0  # whole batches only
    lines = _log_lines(log)
    assert len(lines) == w.trials_done == w.result.stats.trials
    assert all(line["v"] == 1 and "trace" in line for line in lines)
    assert w.progress.bar_style == "warning" and "stopped" in w.status.value
    w.stop()  # stopping a finished search is harmless


def test_several_tasks_share_the_budget(tmp_path):
    log = tmp_path / "two.json"
    tasks = [_task(16, "C"), _task(8, "D")]
    w = auto_scheduler.tune_widget(
        tasks,
        trials=8,
        mode="widget",
        log_file=str(log),
        num_measures_per_round=4,
        runner=_runner(),
        policy_params=POLICY,
        strategy="round-robin",
    )
    assert w.wait(240)
    assert isinstance(w.result, list) and len(w.result) == 2
    assert [r.stats.trials for r in w.result] == [4, 4]
    assert [d.name for d in w.fig.data] == [
        "best · matmul16",
        "measured · matmul16",
        "best · matmul8",
        "measured · matmul8",
    ]
    by_key: dict = {}
    for inp, res in load_records(str(log)):
        if res.error_no == 0:
            by_key.setdefault(inp.workload_key, []).append(inp.flop_ct / res.mean_cost / 1e9)
    for k, t in enumerate(tasks):
        np.testing.assert_allclose(w.fig.data[2 * k + 1].y, by_key[t.workload_key])
    assert w.progress.value == 8


def test_text_mode_prints_progress(tmp_path, capsys):
    log = tmp_path / "text.json"
    w = auto_scheduler.tune_widget(
        _task(8),
        trials=4,
        mode="text",
        log_file=str(log),
        num_measures_per_round=4,
        runner=_runner(),
        policy_params=POLICY,
    )
    assert w.done and w.widget is None and w.fig is None  # ran in the foreground
    out = capsys.readouterr().out
    assert "[tune] 1 task(s), 4 trials" in out
    assert "[tune] finished: 4 trials" in out
    assert len(_log_lines(log)) == 4
    assert w._repr_mimebundle_() == {"text/plain": repr(w)}


class _CountingWidget(TuneWidget):
    refreshes = 0

    def _refresh(self, final: bool = False) -> None:
        type(self).refreshes += 1
        super()._refresh(final)


def test_updates_are_throttled():
    task = _task()
    options = auto_scheduler.TuningOptions(num_measure_trials=200, verbose=0)
    w = _CountingWidget(
        [task],
        200,
        options,
        policy_params=None,
        search_policy=None,
        strategy="gradient",
        task_weights=None,
        mode="widget",
        update_interval=0.5,
        code_interval=2.0,
        seed=None,
    )
    ui = threading.Thread(target=w._ui_loop, daemon=True)
    ui.start()
    start = time.perf_counter()
    for k in range(200):  # 200 batches in about a second, as a fast search would send
        w._on_batch(task, [MeasureResult([1e-5 * (1 + k % 7)])], None)
        time.sleep(0.005)
    elapsed = time.perf_counter() - start
    with w._lock:
        w._finished = True
    w._dirty.set()
    ui.join(10)
    assert w.done
    assert _CountingWidget.refreshes <= math.ceil(elapsed / 0.5) + 3
    assert len(w.fig.data[1].y) == 200 and w.progress.value == 200
    assert w.fig.data[0].y[-1] == pytest.approx(task.flop_ct / 1e-5 / 1e9)


def test_estimated_costs_are_labelled_as_such():
    task = _task()
    options = auto_scheduler.TuningOptions(num_measure_trials=4, verbose=0)
    w = TuneWidget(
        [task], 4, options, policy_params=None, search_policy=None, strategy="gradient",
        task_weights=None, mode="text", update_interval=0.5, code_interval=2.0, seed=None,
    )  # fmt: skip
    w._on_batch(task, [MeasureResult([1e-5])], None)
    assert "estimated" not in w._status_text(w._snapshot())
    w._on_batch(task, [MeasureResult([2e-5], estimated=True)], None)
    text = w._status_text(w._snapshot())
    assert "GFLOPS" in text and "estimated (GPU model, checked on the emulator)" in text
