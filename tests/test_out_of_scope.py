"""Out-of-scope TVM names import, then stop with our error saying what to write instead."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab.errors import OutOfScopeError


@pytest.mark.parametrize(
    ("module", "attr", "advice"),
    [
        ("ansor_lab.relax", "build", "te.compute"),
        ("ansor_lab.relay", "build", "topi"),
        ("ansor_lab.autotvm", "template", "auto_scheduler"),
        ("ansor_lab.relay.testing", "resnet", "TaskScheduler"),
        ("ansor_lab.relax.frontend.nn", "Module", "tir.Schedule"),
        # the MLC course's first cell: from tvm.script import relax as R
        ("ansor_lab.script.relax", "function", "te.compute"),
    ],
)
def test_out_of_scope_modules_import_and_explain(module: str, attr: str, advice: str):
    mod = importlib.import_module(module)
    with pytest.raises(OutOfScopeError, match=advice):
        getattr(mod, attr)
    assert not hasattr(mod, "__wrapped__")  # dunder probes stay ordinary AttributeErrors


def test_top_level_attribute_access_reaches_them():
    with pytest.raises(OutOfScopeError, match="relay"):
        tvm.relay.transform  # noqa: B018 - the access itself must raise


def test_tensorize_and_other_devices_explain():
    with pytest.raises(OutOfScopeError, match="vectorize"):
        tvm.tir.TensorIntrin.register("dot", None, None)
    from ansor_lab import te

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1, name="B")
    sch = tvm.tir.Schedule(te.create_prim_func([A, B]))
    with pytest.raises(OutOfScopeError, match="tensor intrinsics"):
        sch.tensorize(sch.get_loops(sch.get_block("B"))[0], "dot")
    with pytest.raises(OutOfScopeError, match="tvm.cpu"):
        tvm.opencl(0)
    # the schedule is unharmed
    b = np.empty(4, "float32")
    tvm.build(sch.mod)(np.arange(4, dtype="float32"), b)
    assert b.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_merge_and_store_predicate_explain():
    from ansor_lab import te
    from ansor_lab.errors import ScheduleError

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1, name="B")
    sch = tvm.tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="two loops of block 'B'"):
        sch.merge(i, i)  # merge exists (tests/schedule/test_schedule_merge.py); one block's loops
    s = te.create_schedule(B.op)
    with pytest.raises(ScheduleError, match="te.if_then_else"):
        s[B].set_store_predicate(B.op.axis[0] < 2)


def test_topi_per_target_schedules_explain():
    """``topi.cuda`` / ``x86`` / ``generic`` hold TVM's classic schedules (the introduction
    to TOPI's ``topi.cuda.schedule_reduce(g)``: tests/topi/test_topi_per_target.py); a
    name they lack, and every name of the other per-target namespaces, says what to write."""
    from ansor_lab import topi

    assert callable(topi.cuda.schedule_reduce) and callable(topi.generic.schedule_injective)
    assert callable(topi.x86.schedule_dense_nopack) and callable(topi.cuda.conv2d_nchw)
    for ns, attr in [("cuda", "schedule_conv2d_nchw_winograd"), ("x86", "schedule_dense"),
                     ("generic", "schedule_lrn"), ("arm_cpu", "schedule_injective"),
                     ("rocm", "schedule_reduce")]:  # fmt: skip
        with pytest.raises(OutOfScopeError, match=rf"topi\.{ns}\.{attr}: .*te.create_schedule"):
            getattr(getattr(topi, ns), attr)
    with pytest.raises(AttributeError):  # the provided ones: hasattr stays False
        topi.x86.schedule_dense  # noqa: B018 - the access itself must raise
    assert not hasattr(topi.cuda, "__wrapped__")  # dunder probes stay ordinary
    assert not hasattr(topi.mali, "__wrapped__")
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        topi.no_such_name  # noqa: B018 - the access itself must raise


@pytest.mark.parametrize(
    "method, advice",
    [
        ("double_buffer", "leave it out"),
        ("prefetch", "leave it out"),
        ("env_threads", "bind"),
        ("rolling_buffer", "compute_at"),
        ("transform_layout", "tir.Schedule"),
        ("set_axis_separators", "flat"),
        ("tensorize", "vectorize"),
    ],
)
def test_te_stage_primitives_we_lack_say_what_to_write(method, advice):
    from ansor_lab import te  # noqa: PLC0415

    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(OutOfScopeError, match=rf"Stage\.{method} is not supported.*{advice}"):
        getattr(s[B], method)(A, B.op.axis[0], 1)


def test_te_schedule_group_and_normalize():
    """``create_group`` says to place the stages one by one; ``normalize`` (the TVM tuple
    tutorial's ``s = s.normalize()``) hands back the schedule, whose loops start at 0."""
    from ansor_lab import te  # noqa: PLC0415

    A = te.placeholder((8, 4), name="A")
    B = te.compute((8, 4), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((8, 4), lambda i, j: B[i, j] * 2.0, name="C")
    s = te.create_schedule(C.op)
    with pytest.raises(OutOfScopeError, match=r"create_group.*compute_at"):
        s.create_group(outputs=C, inputs=A)
    s[B].compute_at(s[C], C.op.axis[0])
    assert s.normalize() is s
    a = np.arange(32, dtype="float32").reshape(8, 4)
    c = tvm.nd.empty((8, 4))
    tvm.build(s.normalize(), [A, C])(tvm.nd.array(a), c)
    np.testing.assert_array_equal(c.numpy(), (a + 1) * 2)


def test_contrib_cblas_imports_and_its_calls_say_what_to_write():
    """The extern-op tutorial imports ``tvm.contrib.cblas`` first and checks the packed
    function: here it is missing (as in a TVM built without BLAS), and the wrappers say to
    write the product as a te.compute."""
    from ansor_lab import te  # noqa: PLC0415
    from ansor_lab.contrib import cblas  # noqa: PLC0415
    from ansor_lab.errors import DSLError  # noqa: PLC0415

    assert tvm.get_global_func("tvm.contrib.cblas.matmul", allow_missing=True) is None
    A = te.placeholder((8, 4), name="A")
    B = te.placeholder((4, 8), name="B")
    for call in (cblas.matmul, cblas.batch_matmul):
        with pytest.raises(DSLError, match=r"external BLAS call.*te\.compute"):
            call(A, B)


def test_testing_utils_request_hook_runs():
    """TVM's tutorials open with ``testing.utils.install_request_hook(depth=3)`` (their
    documentation build's guard against downloads): it runs, and does nothing here."""
    import ansor_lab.testing.utils  # noqa: PLC0415
    from ansor_lab import testing  # noqa: PLC0415

    assert testing.utils is ansor_lab.testing.utils
    assert testing.utils.install_request_hook(depth=3) is None
    testing.assert_allclose(np.ones(3), np.ones(3))


@pytest.mark.parametrize(
    "method, advice",
    [
        ("reindex", r"sch\.cache_read"),
        ("unannotate", r"sch\.annotate\(loop, key, value\)"),
        ("add_unit_loop", r"sch\.split\(loop, \[1, None\]\)"),
        ("pad_einsum", r"T\.where"),
        ("decompose_padding", r"compute_inline"),
        ("set_dtype", r"astype"),
        ("get_sref", r"sch\.get\(rv\)"),
    ],
)
def test_tir_schedule_primitives_we_lack_say_what_to_write(method, advice):
    from ansor_lab import te, tir  # noqa: PLC0415

    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    with pytest.raises(
        OutOfScopeError, match=rf"Schedule\.{method} is not supported here: .*{advice}"
    ):
        getattr(sch, method)(sch.get_block("B"), 0)
