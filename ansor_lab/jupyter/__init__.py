"""Jupyter integration: rich displays, the IPython extension, the live tuning widget, the
schedule explorer, search explanations and pictures.

Nothing here is imported by the rest of ansor_lab; ipywidgets and plotly are imported
only when a widget or figure is made. Names are loaded lazily from their modules (add an
entry to ``_LAZY`` to export a new one).
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> submodule that defines it
_LAZY = {
    # the schedule explorer
    "ScheduleExplorer": "explorer",
    "ExplorerStep": "explorer",
    "Measurement": "explorer",
    # explaining a search log
    "RecordExplanation": "explain",
    "explain_record": "explain",
    "top_records": "explain",
    "sketch_summary": "explain",
    "trace_diff": "explain",
    "predicted_vs_measured": "explain",
    "top_k_browser": "explain",
    # iteration order
    "IterationOrder": "iteration",
    "visit_order": "iteration",
    "iteration_order": "iteration",
    "iteration_order_svg": "iteration",
    # checked exercises of the course
    "ExerciseResult": "exercises",
    "check_schedule": "exercises",
    "check_value": "exercises",
    # the memory hierarchy, measured live
    "BandwidthPoint": "hierarchy",
    "CacheLevel": "hierarchy",
    "cache_levels": "hierarchy",
    "stream_bandwidth": "hierarchy",
    "level_bandwidths": "hierarchy",
    "hierarchy_figure": "hierarchy",
    "hierarchical_roofline_figure": "hierarchy",
    # rich displays and helpers (display.py); the IPython extension (extension.py)
    "show": "display",
    "mimebundle": "display",
    "measure": "display",
    "ScheduleTiming": "display",
    "records_table": "display",
    "RecordsTable": "display",
    "load_ipython_extension": "extension",
    # the JupyterLab extension's MIME types (mime.py)
    "RecordDisplay": "mime",
    "TRACE_MIME": "mime",
    "LOWERED_MIME": "mime",
    "SOURCE_MIME": "mime",
    "RECORD_MIME": "mime",
    "unload_ipython_extension": "extension",
    # the live tuning widget (start it with auto_scheduler.tune_widget; the submodule
    # ansor_lab.jupyter.tune_widget shadows a same-named function here)
    "TuneWidget": "tune_widget",
    # roofline
    "MachinePeaks": "roofline",
    "RooflinePoint": "roofline",
    "measure_peaks": "roofline",
    "multiply_add_peak_gflops": "roofline",
    "arithmetic_intensity": "roofline",
    "kernel_point": "roofline",
    "log_points": "roofline",
    "roofline_figure": "roofline",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ansor_lab.jupyter' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
