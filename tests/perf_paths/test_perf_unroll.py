"""``unroll`` replicates a loop body (no loop is left for that variable), and the
``pragma_auto_unroll_max_step`` annotation unrolls the inner nests that fit its budget."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir


def _headers(f) -> set[str]:
    """Loop variables that are still loops in the generated (unoptimized) LLVM IR: the
    backend names each loop's header block ``for.<var>`` (``for.<var>.<n>`` for copies)."""
    return set(re.findall(r"^for\.(\w+)(?:\.\d+)?:", f.get_source("ll-unopt"), re.M))


EXTENTS = {"i": 16, "j": 8, "k": 4}


def _nest():
    shape = tuple(EXTENTS.values())
    A = te.placeholder(shape, name="A")
    B = te.compute(shape, lambda i, j, k: A[i, j, k] * 2.0 + 1.0, name="B")
    return A, B, tir.Schedule(te.create_prim_func([A, B]))


def _check(f, rand, shape=(16, 8, 4)):
    a = rand(shape)
    b = np.empty_like(a)
    f(a, b)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6, atol=1e-6)


def test_unroll_leaves_no_loop_for_the_variable(rand):
    _, _, sch = _nest()
    i, j, k = sch.get_loops(sch.get_block("B"))
    sch.unroll(j)
    f = tvm.build(sch.mod, target="llvm")
    heads = _headers(f)
    assert "i" in heads and "k" in heads and "j" not in heads, heads
    # the k loop now appears once per unrolled copy of j's body
    assert len(re.findall(r"^for\.k(?:\.\d+)?:", f.get_source("ll-unopt"), re.M)) == 8
    assert "j (extent 8): unrolled -> unrolled" in f.loop_report()
    _check(f, rand)


def test_unrolled_body_is_reported_once():
    _, _, sch = _nest()
    _, j, k = sch.get_loops(sch.get_block("B"))
    sch.unroll(j)
    sch.unroll(k)
    report = tvm.build(sch.mod, target="llvm").loop_report().splitlines()
    assert report == ["j (extent 8): unrolled -> unrolled", "k (extent 4): unrolled -> unrolled"]


@pytest.mark.parametrize(
    ("budget", "unrolled", "kept"),
    [
        (0, set(), {"i", "j", "k"}),
        (3, set(), {"i", "j", "k"}),  # k's nest (4 steps) is over the budget
        (4, {"k"}, {"i", "j"}),  # k: 4 <= 4; j's nest: 8 * 4 = 32 > 4
        (31, {"k"}, {"i", "j"}),
        (32, {"j", "k"}, {"i"}),  # j's nest: 32 <= 32
        (1000, {"i", "j", "k"}, set()),  # the annotated loop too: 16 * 32 = 512
    ],
)
def test_auto_unroll_pragma_respects_the_budget(rand, budget, unrolled, kept):
    _, _, sch = _nest()
    i, _, _ = sch.get_loops(sch.get_block("B"))
    sch.annotate(i, "pragma_auto_unroll_max_step", budget)
    f = tvm.build(sch.mod, target="llvm")
    heads = _headers(f)
    assert heads == kept, (budget, heads)
    report = f.loop_report()
    for name in unrolled:
        assert f"{name} (extent {EXTENTS[name]}): unrolled -> unrolled" in report, report
    _check(f, rand)


def test_auto_unroll_pragma_only_acts_under_its_loop(rand):
    """Loops of another block, outside the annotated loop, keep their loops."""
    A = te.placeholder((8, 4), name="A")
    B = te.compute((8, 4), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((8, 4), lambda i, j: B[i, j] * 2.0, name="C")
    sch = tir.Schedule(te.create_prim_func([A, C]))
    ci, _ = sch.get_loops(sch.get_block("C"))
    sch.annotate(ci, "pragma_auto_unroll_max_step", 16)
    f = tvm.build(sch.mod, target="llvm")
    loops = f.get_source("ll-unopt")
    assert re.search(r"^for\.i:", loops, re.M), "B's loop i was unrolled by C's pragma"
    a = rand((8, 4))
    c = np.empty_like(a)
    f(a, c)
    np.testing.assert_allclose(c, (a + 1) * 2, rtol=1e-6)


def test_unroll_of_a_reduction_keeps_results_exact(rand):
    """An unrolled reduction loop is the same sum in the same order: int32 is bit-exact."""
    A = te.placeholder((16, 12), "int32", name="A")
    k = te.reduce_axis((0, 12), name="k")
    S = te.compute((16,), lambda i: te.sum(A[i, k] * A[i, k], axis=k), name="S")
    sch = tir.Schedule(te.create_prim_func([A, S]))
    _, kk = sch.get_loops(sch.get_block("S"))
    sch.unroll(kk)
    f = tvm.build(sch.mod, target="llvm")
    assert "k" not in _headers(f)
    a = rand((16, 12), "int32")
    s = np.empty(16, np.int32)
    f(a, s)
    np.testing.assert_array_equal(s, (a * a).sum(axis=1))


def _lanes() -> int:
    """fp32 lanes of one vector register of this machine's target."""
    return tvm.Target("llvm").vector_bytes // 4


@pytest.mark.parametrize(
    ("registers", "budget", "rows_unrolled"), [(1, 16, True), (4, 63, False), (4, 64, True)]
)
def test_auto_unroll_counts_a_vectorized_loop_as_the_registers_it_fills(
    rand, registers, budget, rows_unrolled
):
    """A vectorized loop is one step per vector register (TVM counts one step: a 512-step
    budget then unrolled 512 copies of a 64-float row, thousands of instructions; counting
    lanes would keep any register tile from being unrolled). 16 rows of 4 registers are
    64 steps."""
    lanes = _lanes() * registers
    A = te.placeholder((4, 16, lanes), name="A")
    B = te.compute((4, 16, lanes), lambda i, j, k: A[i, j, k] * 2.0 + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, j, k = sch.get_loops(sch.get_block("B"))
    sch.vectorize(k)
    sch.annotate(i, "pragma_auto_unroll_max_step", budget)
    f = tvm.build(sch.mod, target="llvm")
    assert _headers(f) == ({"i"} if rows_unrolled else {"i", "j"})
    assert ("j (extent 16): unrolled -> unrolled" in f.loop_report()) is rows_unrolled
    _check(f, rand, (4, 16, lanes))


def test_unroll_budget_of_a_vanishing_unit_loop_reaches_the_loops_inside(rand):
    """Ansor annotates a stage's outermost loop; when that loop has one iteration (a batch
    of 1) it disappears from the program, and its budget must go to the loops inside."""
    A = te.placeholder((1, 8, 4), name="A")
    B = te.compute((1, 8, 4), lambda n, j, k: A[n, j, k] * 2.0 + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    n, _, _ = sch.get_loops(sch.get_block("B"))
    sch.annotate(n, "pragma_auto_unroll_max_step", 4)
    f = tvm.build(sch.mod, target="llvm")
    assert _headers(f) == {"j"}, _headers(f)  # k (4 steps) unrolled, j (32) kept
    assert "k (extent 4): unrolled -> unrolled" in f.loop_report()
    text = tvm.lower(sch.mod).script()
    assert "for n in" not in text
    assert 'for j in T.serial(8, annotations={"pragma_auto_unroll_max_step": 4})' in text, text
    a = rand((1, 8, 4))
    b = np.empty_like(a)
    f(a, b)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("budget", "unrolled"), [(8 * 9, {"j"}), (8 * 9 - 1, set())])
def test_auto_unroll_counts_an_exp_as_many_steps(rand, budget, unrolled):
    """exp expands into a polynomial of ~30 instructions: a statement calling it counts
    1 + EXPENSIVE_CALL_STEPS (8) steps, so a budget unrolls 8 exps where it unrolls 72
    multiply-adds (a loop of 256 unrolled exps was most of a chain candidate's code)."""
    from ansor_lab.ir.passes import EXPENSIVE_CALL_STEPS

    assert EXPENSIVE_CALL_STEPS == 8
    shape = (4, 8, _lanes())  # each row: one vector register
    A = te.placeholder(shape, name="A")
    B = te.compute(shape, lambda i, j, k: te.exp(A[i, j, k]), name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, j, k = sch.get_loops(sch.get_block("B"))
    sch.vectorize(k)
    sch.annotate(i, "pragma_auto_unroll_max_step", budget)
    f = tvm.build(sch.mod, target="llvm")
    assert _headers(f) == {"i"} | ({"j"} - unrolled)
    a = rand(shape)
    b = np.empty_like(a)
    f(a, b)
    np.testing.assert_allclose(b, np.exp(a), rtol=1e-5)
    # a multiply-add body of the same shape is 8 steps: unrolled under either budget
    _, _, plain = _nest()
    pi, _, pk = plain.get_loops(plain.get_block("B"))
    plain.annotate(pi, "pragma_auto_unroll_max_step", budget)
    assert "k" not in _headers(tvm.build(plain.mod, target="llvm"))
