"""The course's exercise checker: right answers pass, wrong and blank ones say "not yet"."""

from __future__ import annotations

import numpy as np
import pytest

from ansor_lab import te, tir
from ansor_lab.jupyter import ExerciseResult, check_schedule, check_value
from ansor_lab.jupyter.exercises import ExerciseError

N = 32


@pytest.fixture(scope="module")
def matmul():
    A = te.placeholder((N, N), name="A")
    B = te.placeholder((N, N), name="B")
    k = te.reduce_axis((0, N), name="k")
    C = te.compute((N, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (N, N)).astype("float32") for _ in "ab")
    return A, B, C, a, b


def test_blank_answer_is_not_yet(matmul) -> None:
    A, B, C, a, b = matmul
    res = check_schedule(None, [a, b], a @ b, title="ex 1")
    assert isinstance(res, ExerciseResult) and not res.passed and not res
    assert str(res) == "ex 1: not yet: no answer yet: replace the None in the answer cell"
    assert "not yet" in res._repr_html_()


def test_right_schedule_passes_with_its_time(matmul) -> None:
    A, B, C, a, b = matmul
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(i, k, j)
    sch.vectorize(sch.split(j, [None, 8])[1])
    res = check_schedule(sch, [a, b], a @ b, title="reorder")
    assert res.passed, str(res)
    assert res.seconds > 0 and res.max_error < 1e-4
    assert str(res).startswith("reorder: correct: matches numpy")


def test_te_schedule_with_args_and_tuple(matmul) -> None:
    A, B, C, a, b = matmul
    s = te.create_schedule(C.op)
    assert check_schedule((s, [A, B, C]), [a, b], a @ b).passed
    assert check_schedule(s, [a, b], a @ b, args=[A, B, C]).passed
    with pytest.raises(ExerciseError, match="needs its tensors"):
        check_schedule(s, [a, b], a @ b)


def test_wrong_result_is_rejected_with_the_error(matmul) -> None:
    A, B, C, a, b = matmul
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    res = check_schedule(sch, [a, b], a @ b.T)  # the reference of another program
    assert not res.passed and "wrong result: max abs error" in res.message
    assert res.max_error > 0.1


def test_too_slow_is_rejected(matmul) -> None:
    A, B, C, a, b = matmul
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    res = check_schedule(sch, [a, b], a @ b, faster_than=1e-9)
    assert not res.passed and "is not faster than" in res.message and res.seconds > 0
    res = check_schedule(sch, [a, b], a @ b, faster_than=10.0)
    assert res.passed and "faster than the" in res.message


def _matmul_256():
    n = 256
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    rng = np.random.default_rng(5)
    a, b = (rng.uniform(-1, 1, (n, n)).astype("float32") for _ in "ab")
    return te.create_prim_func([A, B, C]), a, b


def test_a_baseline_is_timed_side_by_side_with_the_answer() -> None:
    func, a, b = _matmul_256()
    naive = tir.Schedule(func)  # i, j, k: B read down its columns
    stream = tir.Schedule(func)
    i, j, k = stream.get_loops(stream.get_block("C"))
    stream.reorder(i, k, j)
    stream.vectorize(stream.split(j, [None, 8])[1])
    res = check_schedule(stream, [a, b], a @ b, baseline=naive, speedup=2, rtol=1e-3, atol=1e-3)
    assert res.passed, str(res)
    ratio = float(res.message.split("x faster than the baseline")[0].rsplit(" ", 1)[1])
    assert ratio >= 2 and "2x wanted" in res.message and res.seconds > 0
    # the same program against itself is about 1x, whatever the machine's load
    same = check_schedule(naive, [a, b], a @ b, baseline=naive, speedup=1.5, rtol=1e-3, atol=1e-3)
    assert not same.passed and "timed side by side); 1.5x wanted" in same.message
    ratio = float(same.message.split("right result, but ")[1].split("x")[0])
    assert 0.6 < ratio < 1.5, same.message


def test_baseline_misuse_is_our_error(matmul) -> None:
    A, B, C, a, b = matmul
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    with pytest.raises(ExerciseError, match="not both"):
        check_schedule(sch, [a, b], a @ b, faster_than=1.0, baseline=sch)
    with pytest.raises(ExerciseError, match="positive factor"):
        check_schedule(sch, [a, b], a @ b, baseline=sch, speedup=0)
    with pytest.raises(ExerciseError, match="baseline does not build and run"):
        check_schedule(sch, [a, b], a @ b, baseline=object())


def test_build_and_run_errors_are_feedback(matmul) -> None:
    A, B, C, a, b = matmul
    res = check_schedule(object(), [a, b], a @ b)
    assert not res.passed and res.message.startswith("it does not build:")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    res = check_schedule(sch, [a], a @ b)  # one input short: the call fails
    assert not res.passed and res.message.startswith("it does not run:")


def test_misuse_is_our_error(matmul) -> None:
    A, B, C, a, b = matmul
    with pytest.raises(ExerciseError, match="input arrays"):
        check_schedule(None, [], a @ b)
    with pytest.raises(ExerciseError, match="numpy array"):
        check_schedule(None, [a, b], [1, 2])


def test_check_value() -> None:
    assert not check_value(None, 3.0)
    assert check_value(3.1, 3.0, rtol=0.05).passed
    assert not check_value(4.0, 3.0).passed
    assert check_value("k", "k").passed and not check_value("j", "k").passed
    assert "expected a number" in check_value("x", 2.0).message
