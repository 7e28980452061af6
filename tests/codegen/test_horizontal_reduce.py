"""Float liberties a schedule states on a loop, and what the LLVM backend does with them:
``pragma_horizontal_reduce`` (partial results combined as a shuffle tree),
``pragma_fp_reassociate`` (nsz inside), ``pragma_fp_reciprocal`` (arcp divisions).
Without the annotations the same loops keep the serial order."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.codegen.horizontal_reduce import HORIZONTAL, REASSOCIATE, RECIPROCAL


def row_reduce(kind: str, rows: int, cols: int, lanes: int, annotate: bool):
    """S[i] = reduce_k A[i, k], rfactored onto ``lanes`` vector lanes."""
    A = te.placeholder((rows, cols), name="A")
    k = te.reduce_axis((0, cols), name="k")
    body = {"sum": te.sum, "max": te.max, "min": te.min}[kind]
    S = te.compute((rows,), lambda i: body(A[i, k], axis=k), name="S")
    sch = tir.Schedule(te.create_prim_func([A, S]))
    b = sch.get_block("S")
    _, kk = sch.get_loops(b)
    ko, ki = sch.split(kk, [None, lanes])
    rf = sch.rfactor(ki, 1)
    i, ki2, ko2 = sch.get_loops(rf)  # the partial-result axis right after the spatial one
    sch.reorder(i, ko2, ki2)
    sch.vectorize(ki2)
    if annotate:
        sch.annotate(ko2, REASSOCIATE, 1)
        sch.annotate(sch.get_loops(b)[-1], HORIZONTAL, "tree")
    return sch


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("lanes", [8, 32])
def test_the_horizontal_step_is_a_tree_and_computes_the_reduction(kind, lanes):
    sch = row_reduce(kind, 5, 256, lanes, annotate=True)
    f = tvm.build(sch.mod, target="llvm")
    assert "horizontal tree" in f.loop_report()
    ll = f.get_source("ll-unopt")
    assert "shufflevector" in ll
    a = np.random.default_rng(1).uniform(-1, 1, (5, 256)).astype("float32")
    a[2, 17] = np.nan  # a NaN propagates through the max / min tree
    out = np.zeros(5, "float32")
    f(a, out)
    want = {"sum": np.sum, "max": np.max, "min": np.min}[kind](a.astype("float64"), axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert np.isnan(out[2])


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("lanes", [8, 16, 64])
def test_a_nan_in_any_lane_makes_the_max_or_min_tree_nan(kind, lanes):
    # x86's max returns its second operand when either is NaN: each round of the tree
    # must keep a NaN from either half, in whichever lane it sits
    cols = 4 * lanes
    sch = row_reduce(kind, lanes + 2, cols, lanes, annotate=True)
    f = tvm.build(sch.mod, target="llvm")
    assert "horizontal tree" in f.loop_report()
    a = np.random.default_rng(2).uniform(-1, 1, (lanes + 2, cols)).astype("float32")
    for lane in range(lanes):  # row r holds one NaN, in lane r (two rounds apart)
        a[lane, 2 * lanes + lane] = np.nan
    a[lanes, :] = -np.inf if kind == "max" else np.inf  # all extreme: no NaN made up
    a[lanes, 3] = 0.5
    out = np.zeros(lanes + 2, "float32")
    f(a, out)
    assert np.isnan(out[:lanes]).all(), np.flatnonzero(~np.isnan(out[:lanes]))
    want = {"max": np.max, "min": np.min}[kind](a[lanes:], axis=1)
    np.testing.assert_array_equal(out[lanes:], want)


def test_without_the_annotation_the_horizontal_step_stays_serial():
    sch = row_reduce("sum", 5, 256, 32, annotate=False)
    f = tvm.build(sch.mod, target="llvm")
    assert "horizontal tree" not in f.loop_report()
    assert "reassoc" not in f.get_source("ll-unopt")


def test_reassociate_sets_nsz_only_inside_the_annotated_loop():
    sch = row_reduce("sum", 4, 128, 16, annotate=True)
    ll = tvm.build(sch.mod, target="llvm").get_source("ll-unopt")
    # the partial sums: the sign of a zero sum left open
    assert "fadd contract nsz <16 x float>" in ll
    assert "reassoc" not in ll  # the source expression keeps its order
    plain = tvm.build(row_reduce("sum", 4, 128, 16, annotate=False).mod, target="llvm")
    assert "nsz" not in plain.get_source("ll-unopt")


@pytest.mark.parametrize("annotate", [True, False])
def test_a_float_max_leaves_the_sign_of_a_zero_open_and_propagates_nan(annotate):
    # llvm.maximum with nsz everywhere: the -0 < +0 fix-up tripled a max pool on x86;
    # numpy's own np.maximum(-0.0, 0.0) is -0.0 (its first argument), so no caller can
    # rely on the sign there; NaN still wins, as in numpy
    sch = row_reduce("max", 4, 128, 16, annotate=annotate)
    f = tvm.build(sch.mod, target="llvm")
    # the lanes' max is a select with its NaN test in a flag (``nan_flag_reduce``), and so
    # is the serial horizontal step; the tree's maxima are llvm.maximum, each with nsz
    assert "k_0 (extent 8): serial -> max reduction, NaN test in a flag" in f.loop_report()
    calls = re.findall(r"call (.*) @\"llvm\.maximum\.", f.get_source("ll-unopt"))
    assert bool(calls) == annotate and all(c.startswith("nsz ") for c in calls), calls
    a = np.random.default_rng(3).uniform(-1, 1, (4, 128)).astype("float32")
    a[1, 100] = np.nan
    a[2] = -0.0
    a[2, 5] = 0.0
    out = np.empty(4, "float32")
    f(a, out)
    np.testing.assert_array_equal(out[[0, 3]], a[[0, 3]].max(axis=1))
    assert np.isnan(out[1]) and out[2] == 0.0


def test_reciprocal_divides_once_per_loop_invariant_divisor():
    A = te.placeholder((4, 64), name="A")
    s = te.placeholder((4,), name="s")
    B = te.compute((4, 64), lambda i, j: A[i, j] / s[i], name="B")
    sch = tir.Schedule(te.create_prim_func([A, s, B]))
    i, j = sch.get_loops(sch.get_block("B"))
    _, jj = sch.split(j, [None, 16])
    sch.vectorize(jj)
    plain = tvm.build(sch.mod, target="llvm")
    assert "arcp" not in plain.get_source("ll-unopt")
    sch.annotate(i, RECIPROCAL, 1)
    f = tvm.build(sch.mod, target="llvm")
    assert "fdiv contract arcp" in f.get_source("ll-unopt")
    a = np.random.default_rng(2).uniform(-1, 1, (4, 64)).astype("float32")
    d = np.array([3.0, -7.0, 0.1, 1e3], "float32")
    out = np.zeros((4, 64), "float32")
    f(a, d, out)
    np.testing.assert_allclose(out, a / d[:, None], rtol=2e-7)  # within an ulp or so
