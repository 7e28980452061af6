"""The ipywidgets face of ``ScheduleExplorer`` (imported only when the widget is shown).

Every control calls the explorer's own methods (``apply``, ``undo``, ``measure``...), so
what a click does is exactly what a script or a test does.
"""

from __future__ import annotations

import html
from typing import Any

from .explorer import _PARAMS, OPS, _default_factor, divisors

CSS_CLASS = "ansor-explorer"


def _loop_label(info: Any, block: str) -> str:
    name = info.name if info.block == block else f"{info.block}.{info.name}"
    extra = "" if info.kind in ("spatial", "serial") else f", {info.kind}"
    ann = f", {info.annotation}" if info.annotation else ""
    return f"{name} ({info.extent}{extra}{ann})"


class ExplorerUI:
    """Widgets bound to one explorer."""

    def __init__(self, ex: Any) -> None:
        import ipywidgets as W

        self.ex = ex
        self._busy = False
        box = W.Layout
        self.block = W.Dropdown(description="block", layout=box(width="190px"))
        self.op = W.Dropdown(
            options=list(OPS), value="split", description="step", layout=box(width="250px")
        )
        self.loop = W.Dropdown(description="loop", layout=box(width="230px"))
        self.factor = W.Dropdown(description="factor", layout=box(width="160px"))
        self.loop2 = W.Dropdown(description="loop y", layout=box(width="230px"))
        self.factor2 = W.Dropdown(description="factor y", layout=box(width="160px"))
        self.order = W.TagsInput(allowed_tags=[], allow_duplicates=False, layout=box(width="360px"))
        self.fuse = W.SelectMultiple(description="loops", rows=4, layout=box(width="260px"))
        self.target = W.Dropdown(description="at", layout=box(width="260px"))
        self.scope = W.Dropdown(
            options=["local", "global"], description="scope", layout=box(width="180px")
        )
        self.params = {
            "loop": self.loop,
            "factor": self.factor,
            "loop2": self.loop2,
            "factor2": self.factor2,
            "order": self.order,
            "fuse": self.fuse,
            "target": self.target,
            "scope": self.scope,
        }
        self.apply_btn = W.Button(description="Apply", button_style="primary", icon="check")
        self.undo_btn = W.Button(description="Undo", icon="undo")
        self.redo_btn = W.Button(description="Redo", icon="redo")
        self.measure_btn = W.Button(description="Measure", button_style="success", icon="stopwatch")
        self.export_py_btn = W.Button(description="Export Python", icon="file-code")
        self.export_json_btn = W.Button(description="Export JSON", icon="file")
        for b, cls in (
            (self.apply_btn, "ansor-apply"),
            (self.undo_btn, "ansor-undo"),
            (self.redo_btn, "ansor-redo"),
            (self.measure_btn, "ansor-measure"),
            (self.export_py_btn, "ansor-export-py"),
            (self.export_json_btn, "ansor-export-json"),
        ):
            b.add_class(cls)
        self.error = W.HTML()
        self.error.add_class("ansor-error")
        self.status = W.HTML()
        self.status.add_class("ansor-status")
        self.ir = W.HTML(layout=box(width="58%"))
        self.ir.add_class("ansor-ir-pane")
        self.history = W.HTML()
        self.history.add_class("ansor-history")
        self.metric = W.ToggleButtons(options=["GFLOPS", "time (ms)"], value="GFLOPS")
        self.fig = self._figure()
        self.export = W.Textarea(layout=box(width="100%", height="180px", display="none"))
        self.export.add_class("ansor-export")

        self.block.observe(self._guard(self._on_block), names="value")
        self.op.observe(self._guard(self._on_op), names="value")
        self.loop.observe(
            self._guard(lambda _: self._factors(self.loop, self.factor)), names="value"
        )
        self.loop2.observe(
            self._guard(lambda _: self._factors(self.loop2, self.factor2)), names="value"
        )
        self.metric.observe(self._guard(lambda _: self._chart()), names="value")
        self.apply_btn.on_click(self._guard(lambda _: self._apply()))
        self.undo_btn.on_click(self._guard(lambda _: ex.undo()))
        self.redo_btn.on_click(self._guard(lambda _: ex.redo()))
        self.measure_btn.on_click(self._guard(lambda _: ex.measure()))
        self.export_py_btn.on_click(self._guard(lambda _: ex.export_python()))
        self.export_json_btn.on_click(self._guard(lambda _: ex.export_json(indent=1)))

        controls = W.HBox(
            [self.block, self.op, self.apply_btn, self.undo_btn, self.redo_btn, self.measure_btn],
            layout=box(flex_flow="row wrap"),
        )
        params = W.HBox(list(self.params.values()), layout=box(flex_flow="row wrap"))
        chart = [self.metric] + ([self.fig] if self.fig is not None else [])
        right = W.VBox(
            [W.HTML("<b>steps</b>"), self.history, self.status, *chart], layout=box(width="42%")
        )
        self.root = W.VBox(
            [
                W.HTML(
                    "<b>Schedule explorer</b>: pick a block and a step, set its loops, "
                    "<i>Apply</i>; every step is recorded in the trace."
                ),
                controls,
                params,
                self.error,
                W.HBox([self.ir, right]),
                W.HBox([self.export_py_btn, self.export_json_btn]),
                self.export,
            ]
        )
        self.root.add_class(CSS_CLASS)

    # -- plumbing ---------------------------------------------------------------------
    def _guard(self, fn: Any) -> Any:
        def run(change: Any) -> None:
            if self._busy:
                return
            try:
                fn(change)
            except Exception as err:  # noqa: BLE001 - a widget callback must not go silent
                self.show_error(f"{type(err).__name__}: {err}")

        return run

    def _figure(self) -> Any:
        try:
            import plotly.graph_objects as go

            from ._plotly import figure_widget
        except Exception:  # noqa: BLE001 - no plotly/anywidget: the explorer works without
            return None
        # the trace and layout go in the constructor: see _plotly on why
        return figure_widget(
            data=[
                go.Scatter(
                    x=[],
                    y=[],
                    mode="lines+markers",
                    name="measured",
                    text=[],
                    hovertemplate="step %{x}: %{y:.4g}<br>%{text}<extra></extra>",
                )
            ],
            layout={
                "height": 260,
                "width": 420,
                "title": "measured",
                "margin": {"l": 50, "r": 10, "t": 30, "b": 40},
                "xaxis": {"title": "steps applied", "dtick": 1},
                "yaxis": {"title": "GFLOPS", "rangemode": "tozero"},
            },
        )

    def show_error(self, text: str) -> None:
        """Show an error inline (red), or clear it."""
        self.error.value = (
            f'<div style="color:#b00020;background:#fdecea;padding:4px 8px;'
            f'border-radius:3px;white-space:pre-wrap">{html.escape(text)}</div>'
            if text
            else ""
        )

    def show_export(self, text: str) -> None:
        """Put exported text into the copyable text area and show it."""
        self.export.value = text
        self.export.layout.display = ""

    # -- events -----------------------------------------------------------------------
    def _on_block(self, change: Any) -> None:
        if change["new"] and change["new"] != self.ex.block:
            self.ex.select(change["new"])

    def _on_op(self, change: Any) -> None:
        self._busy = True
        try:
            self._params()
        finally:
            self._busy = False

    def _apply(self) -> None:
        op = self.op.value
        if op == "split":
            params = {"loop": self.loop.value, "factor": self.factor.value}
        elif op == "tile":
            params = {
                "x": self.loop.value,
                "y": self.loop2.value,
                "x_factor": self.factor.value,
                "y_factor": self.factor2.value,
            }
        elif op == "reorder":
            params = {"loops": list(self.order.value)}
        elif op == "fuse":
            params = {"loops": list(self.fuse.value)}
        elif op in ("vectorize", "parallel", "unroll"):
            params = {"loop": self.loop.value}
        elif op in ("compute_at", "reverse_compute_at"):
            params = {"target": self.target.value}
        elif op == "cache_write":
            params = {"scope": self.scope.value}
        else:
            params = {}
        self.ex.apply(op, block=self.ex.block, **params)

    # -- redrawing --------------------------------------------------------------------
    def refresh(self) -> None:
        """Redraw everything from the explorer's state."""
        ex = self.ex
        self._busy = True
        try:
            self.block.options = ex.blocks
            self.block.value = ex.block
            self._params()
            self.ir.value = ex.ir_html()
            self.history.value = self._history_html()
            self.status.value = f"<span>{html.escape(ex.message)}</span>" if ex.message else ""
            self.show_error(ex.error)
            self.undo_btn.disabled = not ex.can_undo
            self.redo_btn.disabled = not ex.can_redo
            self._chart()
        finally:
            self._busy = False

    def _params(self) -> None:
        ex, op = self.ex, self.op.value
        infos = ex.loops(ex.block)
        opts = [(_loop_label(i, ex.block), (i.block, i.name)) for i in infos]
        values = [v for _, v in opts]
        own = [i.name for i in infos if i.block == ex.block]
        # default to the block's own loops that can be split (extent > 1)
        pool = (
            [(i.block, i.name) for i in infos if i.block == ex.block and i.extent > 1]
            or [v for v in values if v[0] == ex.block]
            or values
        )
        for dd, fallback in ((self.loop, 0), (self.loop2, 1)):
            old = dd.value
            dd.options = opts
            if old in values:
                dd.value = old
            elif pool:
                dd.value = pool[min(fallback, len(pool) - 1)]
        self._factors(self.loop, self.factor)
        self._factors(self.loop2, self.factor2)
        self.order.allowed_tags = own
        self.order.value = own
        self.fuse.options = own
        if op in ("compute_at", "reverse_compute_at"):
            targets = ex.legal_targets(op, ex.block)
            self.target.options = [(f"{b}.{lp}", (b, lp)) for b, lp in targets]
            if not targets:
                self.show_error(f"{op}: no legal target for block {ex.block!r} now")
        wanted = _PARAMS.get(op, ())
        for name, w in self.params.items():
            w.layout.display = "" if name in wanted else "none"

    def _factors(self, loop: Any, factor: Any) -> None:
        info = next(
            (i for i in self.ex.loops(self.ex.block) if (i.block, i.name) == loop.value), None
        )
        if info is None:
            factor.options = []
            return
        options = divisors(info.extent)
        old = factor.value
        factor.options = options
        factor.value = (
            old if old in options and old not in (1, info.extent) else _default_factor(info.extent)
        )

    def _history_html(self) -> str:
        ex = self.ex
        rows = []
        for k, step in enumerate(ex._history):
            undone = k >= ex._pos
            style = "color:#999;text-decoration:line-through" if undone else ""
            rows.append(f'<li style="{style}"><code>{html.escape(str(step))}</code></li>')
        if not rows:
            return "<i>no steps yet</i>"
        return f'<ol style="margin:0;padding-left:22px">{"".join(rows)}</ol>'

    def _chart(self) -> None:
        if self.fig is None:
            return
        ms = self.ex.measurements
        gflops = self.metric.value == "GFLOPS"
        with self.fig.batch_update():
            tr = self.fig.data[0]
            tr.x = [m.step for m in ms]
            tr.y = [m.gflops if gflops else m.seconds * 1e3 for m in ms]
            tr.text = [m.label + ("" if m.correct else " (WRONG)") for m in ms]
            tr.marker.color = ["#2ca02c" if m.correct else "#d62728" for m in ms]
            self.fig.layout.yaxis.title = "GFLOPS" if gflops else "time (ms)"
