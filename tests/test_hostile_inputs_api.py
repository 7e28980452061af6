"""Hostile inputs to the public API: each is refused with our error saying what to write,
or does what TVM does, never a foreign exception or a silent wrong result."""

from __future__ import annotations

import json

import numpy as np
import pytest
from workloads import TARGET, fast_options, fast_policy, matmul

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, tir
from ansor_lab.errors import (
    AnsorLabError,
    CodegenError,
    DSLError,
    MissingNameError,
    RuntimeArgumentError,
    ScheduleError,
    TargetError,
    TaskError,
)


@auto_scheduler.register_workload
def hostile_mm(n):
    """A small matmul, registered under its name."""
    return matmul(n)


@auto_scheduler.register_workload
def hostile_returns_none(n):
    """A workload that forgot its return."""
    te.placeholder((n,), name="A")


def _add_one():
    A = te.placeholder((8,), name="A")
    C = te.compute((8,), lambda i: A[i] + 1.0, name="C")
    return A, C


# -- 1. early stopping: None or negative is off, as in TVM ------------------------------


@pytest.mark.parametrize("early_stopping", [-1, -5, None])
def test_negative_early_stopping_is_off_and_trials_run(tmp_path, early_stopping):
    task = auto_scheduler.SearchTask(func=hostile_mm, args=(8,), target=TARGET)
    options = fast_options(None, trials=3, per_round=3, early_stopping=early_stopping)
    assert options.early_stopping is None
    result = task.tune(options, search_policy=fast_policy(task))
    assert result.stats.trials == 3
    assert np.isfinite(result.stats.best_cost)


def test_zero_early_stopping_measures_one_round_first():
    # TVM checks after a round is measured: 0 stops after the first round, never before
    task = auto_scheduler.SearchTask(func=hostile_mm, args=(8,), target=TARGET)
    options = fast_options(None, trials=4, per_round=2, early_stopping=0)
    result = task.tune(options, search_policy=fast_policy(task))
    assert result.stats.trials == 2
    assert result.stopped_early


def test_early_stopping_must_be_an_int():
    with pytest.raises(TaskError, match="early_stopping"):
        auto_scheduler.TuningOptions(early_stopping="10")


# -- 2. numpy scalars in args ------------------------------------------------------------


def test_numpy_int_args_make_a_replayable_key():
    task = auto_scheduler.SearchTask(func=hostile_mm, args=(np.int64(8),), target=TARGET)
    assert json.loads(task.workload_key) == ["hostile_mm", 8]
    again = auto_scheduler.SearchTask(workload_key=task.workload_key, target=TARGET)
    assert again.workload_key == task.workload_key
    assert again.flop_ct == task.flop_ct == 2 * 8**3


def test_numpy_float_arg_becomes_a_python_float():
    @auto_scheduler.register_workload
    def hostile_scale(n, alpha):
        A = te.placeholder((n,), name="A")
        return [A, te.compute((n,), lambda i: A[i] * alpha, name="C")]

    task = auto_scheduler.SearchTask(
        func=hostile_scale, args=(np.int32(4), np.float32(0.5)), target=TARGET
    )
    assert json.loads(task.workload_key) == ["hostile_scale", 4, 0.5]


# -- 3. foreign exceptions turned into ours ----------------------------------------------


def test_workload_returning_none():
    with pytest.raises(TaskError, match="must return the list of its input and output tensors"):
        auto_scheduler.SearchTask(func=hostile_returns_none, args=(4,), target=TARGET)


def test_args_not_a_tuple():
    with pytest.raises(TaskError, match=r"args=\(8,\)"):
        auto_scheduler.SearchTask(func=hostile_mm, args=8, target=TARGET)


def test_single_measure_callback_is_wrapped(tmp_path):
    cb = auto_scheduler.RecordToFile(str(tmp_path / "log.json"))
    options = auto_scheduler.TuningOptions(measure_callbacks=cb)
    assert options.measure_callbacks == [cb]


def test_task_scheduler_checks_tasks_and_weights():
    with pytest.raises(TaskError, match="SearchTask"):
        auto_scheduler.TaskScheduler(["x"])
    task = auto_scheduler.SearchTask(func=hostile_mm, args=(8,), target=TARGET)
    with pytest.raises(TaskError, match="task_weights has 2 weights for 1 task"):
        auto_scheduler.TaskScheduler([task], task_weights=[1, 2])


def test_get_block_name_must_be_a_str():
    A, C = _add_one()
    sch = tir.Schedule(te.create_prim_func([A, C]))
    with pytest.raises(ScheduleError, match="block's name as a str"):
        sch.get_block(3)
    assert len(sch.trace.insts) == 0  # nothing recorded


def test_build_name_must_be_a_str():
    A, C = _add_one()
    s = te.create_schedule(C.op)
    with pytest.raises(CodegenError, match="name="):
        tvm.build(s, [A, C], name=3)
    with pytest.raises(CodegenError, match="name="):
        tvm.build(s, [A, C], name="")
    f = tvm.build(s, [A, C], name="add_one")
    a = np.arange(8, dtype="float32")
    c = np.zeros(8, dtype="float32")
    f(a, c)
    np.testing.assert_array_equal(c, a + 1)


def test_const_of_a_string():
    with pytest.raises(DSLError, match="number"):
        tvm.tir.const("x", "float32")
    with pytest.raises(DSLError, match="number"):
        tvm.tir.const(None, "int32")


@pytest.mark.parametrize("content", [b"garbage", b""])
def test_load_module_of_a_file_that_is_no_library(tmp_path, content):
    path = tmp_path / "lib.so"
    path.write_bytes(content)
    with pytest.raises(RuntimeArgumentError, match="export_library"):
        tvm.runtime.load_module(str(path))


def test_nd_empty_too_large_and_negative():
    with pytest.raises(RuntimeArgumentError, match="GiB"):
        tvm.nd.empty((2**40,), "float32")
    with pytest.raises(RuntimeArgumentError, match="negative"):
        tvm.nd.empty((-1,), "float32")
    with pytest.raises(RuntimeArgumentError, match="negative"):
        tvm.nd.empty((4, -2), "float32")
    assert tvm.nd.empty((0, 3), "float32").shape == (0, 3)


def test_abs_and_pow_of_expressions_point_to_intrinsics():
    A = te.placeholder((8,), name="A")
    i = te.var("i")
    with pytest.raises(DSLError, match=r"te\.abs"):
        abs(A[i])
    with pytest.raises(DSLError, match=r"te\.power\(x, 2\)"):
        A[i] ** 2
    with pytest.raises(DSLError, match=r"te\.power"):
        2 ** A[i]
    # what the messages say to write works
    assert te.abs(A[i]) is not None
    assert te.power(A[i], 2.0) is not None


@pytest.mark.parametrize(
    ("name", "advice"),
    [("ApplyHistoryBest", "apply_best"), ("extract_tasks", "SearchTask")],
)
def test_auto_scheduler_missing_names(name, advice):
    assert not hasattr(auto_scheduler, name)
    with pytest.raises(MissingNameError) as info:
        getattr(auto_scheduler, name)
    assert advice in str(info.value)
    with pytest.raises(AttributeError) as info:
        auto_scheduler.no_such_name  # noqa: B018 - the access itself must raise
    assert type(info.value) is AttributeError


def test_big_endian_argument_says_so():
    A, C = _add_one()
    f = tvm.build(te.create_schedule(C.op), [A, C])
    with pytest.raises(RuntimeArgumentError, match="big-endian") as info:
        f(np.zeros(8, dtype=">f4"), np.zeros(8, dtype="float32"))
    assert "astype" in str(info.value)
    assert "expected float32" not in str(info.value)


# -- 4. bad values accepted silently -----------------------------------------------------


@pytest.mark.parametrize(
    "kw", [{"num_cores": -1}, {"vector_unit_bytes": 0}, {"cache_line_bytes": 0}, {"warp_size": 2.5}]
)
def test_hardware_params_refuse_non_positive(kw):
    with pytest.raises(TaskError, match=next(iter(kw))):
        auto_scheduler.HardwareParams(**kw)


def test_hardware_params_none_means_default():
    hp = auto_scheduler.HardwareParams(num_cores=None, vector_unit_bytes=32)
    assert hp.num_cores == 1 and hp.vector_unit_bytes == 32


@pytest.mark.parametrize("timeout", [0, -3, "10"])
def test_local_runner_timeout_must_be_positive(timeout):
    with pytest.raises(AnsorLabError, match="timeout"):
        auto_scheduler.LocalRunner(timeout=timeout)


def test_target_opt_level_range():
    with pytest.raises(TargetError, match="opt-level"):
        tvm.target.Target("llvm -opt-level=9")
    assert tvm.target.Target("llvm -opt-level=3").kind.name == "llvm"


def test_tuning_options_verbose_must_be_an_int():
    with pytest.raises(TaskError, match="verbose"):
        auto_scheduler.TuningOptions(verbose="yes")
    assert auto_scheduler.TuningOptions(verbose=True).verbose


# -- 5. the TE schedule refuses another stage's axis -------------------------------------


def _two_stages():
    B = te.placeholder((8, 8), name="B")
    D = te.compute((8, 8), lambda i, j: B[i, j] * 2.0, name="D")
    E = te.compute((8, 8), lambda i, j: D[i, j] + 1.0, name="E")
    return B, D, E


def test_te_split_refuses_another_stages_axis():
    B, D, E = _two_stages()
    s = te.create_schedule(E.op)
    with pytest.raises(ScheduleError, match=r"stage 'E'.*'i'.*stage 'D'"):
        s[E].split(D.op.axis[0], factor=4)
    assert len(s.trace.insts) == 0


def test_te_reorder_refuses_another_stages_axes():
    B, D, E = _two_stages()
    s = te.create_schedule(E.op)
    with pytest.raises(ScheduleError, match=r"stage 'E'.*stage 'D'"):
        s[E].reorder(D.op.axis[1], D.op.axis[0])


def test_te_compute_at_needs_a_loop_of_the_target_stage():
    B, D, E = _two_stages()
    s = te.create_schedule(E.op)
    with pytest.raises(ScheduleError, match=r"compute_at.*s\[E\]"):
        s[D].compute_at(s[E], D.op.axis[0])
    s[D].compute_at(s[E], E.op.axis[0])  # the valid spelling
    f = tvm.build(s, [B, E])
    b = np.arange(64, dtype="float32").reshape(8, 8)
    e = np.zeros((8, 8), dtype="float32")
    f(b, e)
    np.testing.assert_allclose(e, b * 2 + 1)


def test_te_own_axes_still_work_after_cache_write():
    # TVM's CPU GEMM tutorial: s[C] keeps C.op.axis after cache_write; CC has its own
    A, B, C = hostile_mm(16)
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "global")
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 4)
    s[CC].compute_at(s[C], yo)
    (k,) = s[CC].op.reduce_axis
    ko, ki = s[CC].split(k, factor=4)
    s[CC].reorder(ko, *s[CC].op.axis, ki)
    with pytest.raises(ScheduleError, match="stage 'C_global'"):
        s[CC].split(C.op.axis[0], factor=2)
    f = tvm.build(s, [A, B, C])
    a = np.random.default_rng(0).random((16, 16), dtype="float32")
    b = np.random.default_rng(1).random((16, 16), dtype="float32")
    c = np.zeros((16, 16), dtype="float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
