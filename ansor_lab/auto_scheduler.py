"""The auto-scheduler under TVM's names (``from ansor_lab import auto_scheduler``).

A face: it only re-exports. The tutorial flow works as written::

    @auto_scheduler.register_workload
    def matmul(N, L, M, dtype): ...
    task = auto_scheduler.SearchTask(func=matmul, args=(N, L, M, "float32"), target="llvm")
    tune_option = auto_scheduler.TuningOptions(
        num_measure_trials=64, measure_callbacks=[auto_scheduler.RecordToFile(log_file)])
    task.tune(tune_option)
    sch, args = task.apply_best(log_file)
"""

from .dsl.dag import ComputeDAG
from .measure.dask_measure import DaskBuilder, DaskMeasureContext, DaskRunner
from .measure.measure import (
    LocalBuilder,
    LocalRPCMeasureContext,
    LocalRunner,
    ProgramBuilder,
    ProgramRunner,
)
from .measure.records import (
    ErrorNo,
    MeasureInput,
    MeasureResult,
    RecordMismatch,
    RecordToFile,
    best_records,
    filter_records,
    load_best_record,
    load_records,
    merge_records,
    save_records,
)
from .missing_names import AUTO_SCHEDULER, module_getattr
from .search.cost_model import RandomForestModel, RandomModel, XGBModel, pairwise_accuracy
from .search.emulated_runner import EmulatedRunner
from .search.features import FEATURE_NAMES, program_features, store_features
from .search.policy import PreloadMeasuredStates, SketchPolicy
from .search.sketch import RULES, Sketch, generate_sketches
from .search.task import (
    WORKLOAD_FUNC_REGISTRY,
    HardwareParams,
    SearchTask,
    TuningOptions,
    register_workload,
)
from .search.task_scheduler import TaskScheduler
from .search.tune import SearchCallback, TuneResult, TuneSession, TuneStats, tune_task
from .search.tvm_log import TVMLogError

__all__ = [
    "TVMLogError",
    "ComputeDAG",
    "LocalBuilder",
    "LocalRPCMeasureContext",
    "LocalRunner",
    "EmulatedRunner",
    "ProgramBuilder",
    "ProgramRunner",
    "DaskBuilder",
    "DaskRunner",
    "DaskMeasureContext",
    "ErrorNo",
    "MeasureInput",
    "MeasureResult",
    "RecordMismatch",
    "RecordToFile",
    "best_records",
    "filter_records",
    "load_best_record",
    "load_records",
    "merge_records",
    "save_records",
    "RandomForestModel",
    "RandomModel",
    "XGBModel",
    "pairwise_accuracy",
    "FEATURE_NAMES",
    "program_features",
    "store_features",
    "PreloadMeasuredStates",
    "SketchPolicy",
    "RULES",
    "Sketch",
    "generate_sketches",
    "HardwareParams",
    "SearchTask",
    "TuningOptions",
    "WORKLOAD_FUNC_REGISTRY",
    "register_workload",
    "SearchCallback",
    "TuneResult",
    "TuneStats",
    "tune_task",
    "TaskScheduler",
    "TuneSession",
    "tune_widget",
]


def tune_widget(task, trials: int = 200, **tuning_kwargs):
    """Tune ``task`` (or a list of tasks) watching it live in a notebook widget.

    Returns the widget ``w`` (``w.wait()``, ``w.stop()``, ``w.done``, ``w.result``); the
    keyword arguments are described in ``ansor_lab.jupyter.tune_widget.tune_widget``.
    """
    from .jupyter.tune_widget import tune_widget as _tune_widget  # noqa: PLC0415 - ipywidgets

    return _tune_widget(task, trials, **tuning_kwargs)


__getattr__ = module_getattr(__name__, AUTO_SCHEDULER)  # TVM names not provided: say why
