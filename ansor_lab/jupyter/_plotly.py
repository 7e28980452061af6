"""A plotly FigureWidget whose front-end model is created with the figure already in it.

plotly 7's ``FigureWidget`` opens its comm (sending the widget's state) *before* it sets
the figure's data and layout, which then follow as separate update messages. JupyterLab
creates the model asynchronously (it first evaluates the ~5 MB anywidget bundle); an update
arriving in that window can be lost, and the view then draws empty default axes forever,
later restyles included (seen in headless Chromium on a loaded machine). Deferring
``open()`` until the constructor is done makes the comm-open message carry the whole
figure, so there is nothing to lose.
"""

from __future__ import annotations

from typing import Any

_CLASS: Any = None


def _widget_class() -> Any:
    global _CLASS
    if _CLASS is None:
        import plotly.graph_objects as go

        class FullStateFigureWidget(go.FigureWidget):
            """A FigureWidget that opens its comm once its figure is set."""

            _defer_open = True

            def open(self) -> None:
                if not self._defer_open:
                    super().open()

        _CLASS = FullStateFigureWidget
    return _CLASS


def figure_widget(data: Any = None, layout: Any = None, **kwargs: Any) -> Any:
    """``go.FigureWidget(data, layout)``, its comm opened with the full figure."""
    fig = _widget_class()(data=data, layout=layout, **kwargs)
    fig._defer_open = False
    fig.open()
    return fig
