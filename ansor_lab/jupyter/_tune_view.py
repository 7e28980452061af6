"""The view of the live tuning widget: the plotly figures, the ipywidgets, their redraw.

``TuneWidget`` (``tune_widget.py``) owns the data and the threads; this mixin turns a
snapshot of the data into what the notebook shows. Its ``_refresh`` is the one place
widgets change, and only the widget's UI thread calls it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from ..schedule.block_view import lowered_script
from .html import FONT, esc, fmt_duration, fmt_seconds, highlight, pre

#: plotly's default qualitative colors, one per task
COLORS = (
    "#636efa",
    "#ef553b",
    "#00cc96",
    "#ab63fa",
    "#ffa15a",
    "#19d3f3",
    "#ff6692",
    "#b6e880",
    "#ff97ff",
    "#fecb52",
)


@dataclasses.dataclass
class _Snapshot:
    version: int
    total: int
    errors: int
    points: list
    curves: list
    best_gflops: list
    best_cost: list
    model_rounds: list
    code_version: int
    best_task: int | None
    best_trace: Any
    elapsed: float
    finished: bool
    stop_requested: bool
    estimated: bool = False  # the costs are estimates (EmulatedRunner), not measurements


class TuneView:
    """Builds and redraws the widgets of a ``TuneWidget`` (a mixin over its data)."""

    def _status_text(self, s: _Snapshot) -> str:
        rate = s.total / s.elapsed if s.elapsed > 0 else 0.0
        left = (self.trials - s.total) / rate if rate > 0 else math.nan
        best = max(s.best_gflops) if s.best_gflops else 0.0
        k = max(range(len(s.best_gflops)), key=lambda i: s.best_gflops[i]) if best > 0 else None
        best_txt = (
            f"best {best:.4g} GFLOPS ({fmt_seconds(s.best_cost[k])})"
            if k is not None
            else "no valid program yet"
        )
        if len(self.tasks) > 1:
            best_txt = "best " + ", ".join(f"{g:.3g}" for g in s.best_gflops) + " GFLOPS"
        if s.estimated:  # never shown as if measured
            best_txt += " estimated (GPU model, checked on the emulator)"
        if s.finished:
            how = (
                "failed"
                if self.error is not None
                else "stopped"
                if s.stop_requested
                else "finished"
            )
            return (
                f"{how}: {s.total} trials in {fmt_duration(s.elapsed)} · {best_txt} · "
                f"{s.errors} errors"
            )
        head = (
            "stopping after the batch in flight"
            if s.stop_requested
            else f"{rate:.2f} trials/s · ~{fmt_duration(left)} left"
        )
        return f"{s.total}/{self.trials} trials · {head} · {best_txt} · {s.errors} errors"

    def _refresh(self, final: bool = False) -> None:
        """Bring the view up to date with the data: the one place widgets change."""
        s = self._snapshot()
        if self.mode != "widget":
            if final or (s.version != self._printed_version and s.total > 0):
                print(f"[tune] {self._status_text(s)}", flush=True)
                self._printed_version = s.version
            return
        if s.version != self._shown_version:
            for k in range(len(self.fig.data) // 2, len(s.points)):
                self._add_task_traces(k)
            with self.fig.batch_update():
                for k in range(len(s.points)):
                    curve, pts = self.fig.data[2 * k], self.fig.data[2 * k + 1]
                    curve.x = [x for x, _ in s.curves[k]]
                    curve.y = [y for _, y in s.curves[k]]
                    pts.x = [x for x, _ in s.points[k]]
                    pts.y = [y for _, y in s.points[k]]
            if s.model_rounds:
                pred = [p for r in s.model_rounds for p in r[1]]
                meas = [m for r in s.model_rounds for m in r[2]]
                rounds = [i for i, r in enumerate(s.model_rounds, 1) for _ in r[1]]
                rho = s.model_rounds[-1][3]
                rho_txt = f"{rho:.2f}" if rho == rho else "n/a"
                with self.model_fig.batch_update():
                    sc = self.model_fig.data[0]
                    sc.x, sc.y = pred, meas
                    sc.marker.color = rounds
                    self.model_fig.layout.title.text = (
                        f"cost model · Spearman ρ = {rho_txt} · retrain {len(s.model_rounds)}"
                    )
            if not self.plotly_widget:
                for out, fig in zip(self._fig_outputs, (self.fig, self.model_fig)):
                    out.outputs = (_figure_output(fig),)
            self._shown_version = s.version
        self.progress.value = min(s.total, self.progress.max)
        if s.finished:
            self.progress.bar_style = (
                "danger" if self.error is not None else "warning" if s.stop_requested else "success"
            )
        self.status.value = (
            f'<span style="{FONT};font-size:13px">{esc(self._status_text(s))}</span>'
        )
        if self.error is not None and s.finished:
            self.status.value += pre(f"{type(self.error).__name__}: {self.error}")
        self.stop_button.disabled = s.finished or s.stop_requested
        if s.finished:
            self.stop_button.description = "Ended"
            self.stop_button.button_style = ""
        elif s.stop_requested:
            self.stop_button.description = "Stopping…"
        now = time.perf_counter()
        if (
            s.code_version != self._shown_code
            and s.best_task is not None
            and (final or now - self._last_code >= self.code_interval)
        ):
            self._shown_code = s.code_version  # first: a program that fails to render
            self._last_code = now  # is not retried at every redraw
            self._render_code(s.best_task, s.best_trace, s.best_gflops[s.best_task])

    def _render_code(self, k: int, trace: Any, gflops: float) -> None:
        from ..runtime.build import build
        from ..schedule.trace import Trace
        from .display import _big_code

        task = self.tasks[k]
        sch = task.make_schedule()
        Trace.from_json(trace).apply_to_schedule(sch)
        trace_html = highlight(str(sch.trace))
        try:
            ir_html = highlight(lowered_script(sch.mod))
        except Exception as err:  # noqa: BLE001 - show what failed, keep the rest
            ir_html = pre(f"lowering failed: {err}")
        kind = "cuda" if task.target.kind == "cuda" else "ll"
        try:
            source = build(sch, target=task.target).get_source(kind)
            code_html = _big_code(source, "cuda" if kind == "cuda" else "llvm")
        except Exception as err:  # noqa: BLE001
            code_html = pre(
                f"{'CUDA source' if kind == 'cuda' else 'LLVM IR'} unavailable: "
                f"{type(err).__name__}: {err}"
            )
        for child, html in zip(self.code_tabs.children, (trace_html, ir_html, code_html)):
            child.value = html
        name = task_name(task) if len(self.tasks) > 1 else ""
        self.code_caption.value = (
            f'<span style="{FONT};font-size:13px"><b>best program</b>'
            f"{' of ' + esc(name[:60]) if name else ''} · "
            f"{gflops:.4g} GFLOPS</span>"
        )

    # -- building the widgets (once, in the constructor) ----------------------------
    def _build_widgets(self) -> None:
        import ipywidgets as W
        import plotly.graph_objects as go

        fig_cls = go.FigureWidget if self.plotly_widget else go.Figure
        self.fig = fig_cls(
            layout=go.Layout(
                title={"text": "best so far and every measured program"},
                xaxis={"title": {"text": "trials"}},
                yaxis={"title": {"text": "GFLOPS"}},
                height=340,
                width=500,
                margin={"l": 55, "r": 10, "t": 45, "b": 45},
                legend={"orientation": "h", "y": -0.25},
                template="plotly_white",
            )
        )
        for k in range(len(self.tasks)):
            self._add_task_traces(k)
        self.model_fig = fig_cls(
            data=[
                go.Scatter(
                    x=[],
                    y=[],
                    mode="markers",
                    name="batch",
                    marker={
                        "color": [],
                        "colorscale": "Viridis",
                        "size": 7,
                        "showscale": True,
                        "colorbar": {"title": {"text": "retrain"}},
                    },
                )
            ],
            layout=go.Layout(
                title={"text": "cost model: predicted vs measured"},
                hovermode="closest",
                xaxis={"title": {"text": "predicted score"}},
                yaxis={"title": {"text": "measured GFLOPS"}},
                height=340,
                width=400,
                margin={"l": 55, "r": 10, "t": 45, "b": 45},
                template="plotly_white",
            ),
        )
        self.progress = W.IntProgress(
            value=0, min=0, max=max(1, self.trials), description="trials", bar_style="info"
        )
        self.status = W.HTML(value="starting…")
        self.stop_button = W.Button(
            description="Stop",
            button_style="danger",
            icon="stop",
            tooltip="end the search after the batch in flight",
        )
        self.stop_button.on_click(lambda _button: self.stop())
        self.code_tabs = W.Tab(children=[W.HTML("(no valid program yet)") for _ in range(3)])
        kind = "CUDA source" if any(t.target.kind == "cuda" for t in self.tasks) else "LLVM IR"
        self.code_tabs.titles = ("Trace", "Lowered IR", kind)
        self.code_caption = W.HTML(value="")
        names = ", ".join(task_name(t)[:50] for t in self.tasks[:3])
        more = f" (+{len(self.tasks) - 3} more)" if len(self.tasks) > 3 else ""
        title = W.HTML(
            value=(
                f'<div style="{FONT};font-size:14px"><b>Tuning</b> {esc(names)}{esc(more)} on '
                f"<code>{esc(self.tasks[0].target)}</code>"
                f"{' · log <code>' + esc(self.log_file) + '</code>' if self.log_file else ''}</div>"
            )
        )
        if self.plotly_widget:
            views = [self.fig, self.model_fig]
        else:
            self._fig_outputs = [
                W.Output(
                    layout=W.Layout(
                        width=f"{f.layout.width + 10}px", min_height=f"{f.layout.height}px"
                    )
                )
                for f in (self.fig, self.model_fig)
            ]
            views = self._fig_outputs
        figs = W.Box(views, layout=W.Layout(display="flex", flex_flow="row wrap"))
        self.widget = W.VBox(
            [
                title,
                W.HBox([self.progress, self.stop_button]),
                self.status,
                figs,
                self.code_caption,
                self.code_tabs,
            ]
        )

    def _add_task_traces(self, k: int) -> None:
        import plotly.graph_objects as go

        color = COLORS[k % len(COLORS)]
        name = task_name(self.tasks[k])[:30] if len(self.tasks) > 1 else "task"
        self.fig.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="lines",
                line_shape="hv",
                name=f"best · {name}",
                line={"color": color},
            )
        )
        self.fig.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="markers",
                name=f"measured · {name}",
                marker={"color": color, "size": 5, "opacity": 0.6},
            )
        )

    # -- display ----------------------------------------------------------------------
    def _show(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        ip = get_ipython()
        self._auto_shown_at = getattr(ip, "execution_count", None)
        display(self.widget)

    def _ipython_display_(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        if self.widget is None:
            print(repr(self))
            return
        # shown already when it was created in this very cell: don't show it twice
        if (
            self._auto_shown_at is not None
            and getattr(get_ipython(), "execution_count", None) == self._auto_shown_at
        ):
            return
        display(self.widget)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        if self.widget is None:
            return {"text/plain": repr(self)}
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        bundle["text/plain"] = repr(self)
        return bundle


def task_name(task: Any) -> str:
    """A short readable name: the task's desc, else its outputs and shapes (not a hash)."""
    desc = getattr(task, "desc", "") or ""
    if desc and (desc != task.workload_key or desc.startswith("[")):
        return desc
    outs = task.compute_dag.output_ops
    return ", ".join(f"{op.name}{list(op.shape)}" for op in outs) or desc


def _figure_output(fig: Any) -> dict:
    """A plotly figure as an output for an Output widget (JupyterLab's plotly renderer)."""
    import json

    spec = json.loads(fig.to_json())
    spec["config"] = {"displaylogo": False, "responsive": False}
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {
            "application/vnd.plotly.v1+json": spec,
            "text/plain": f"<plotly figure: {fig.layout.title.text}>",
        },
    }
