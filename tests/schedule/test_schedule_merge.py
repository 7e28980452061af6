"""``tir.Schedule.merge``: loops of different blocks merged into one, as TVM does."""

from __future__ import annotations

import pytest
from schedule_helpers import assert_step_fails, check, schedule

from ansor_lab import te


def _two(n: int = 64, m: int = 48, read_b=None):
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    if read_b is None:
        C = te.compute((n, m), lambda i, j: A[i, j] * 3.0 + 1.0, name="C")
    else:
        C = te.compute((n, m), lambda i, j: read_b(B, i, j), name="C")
    return A, B, C


def _loops(sch, name):
    return sch.get_loops(sch.get_block(name))


def test_tvm_docstring_example_outer_then_inner():
    args = _two()
    sch = schedule(args)
    i1, _ = _loops(sch, "B")
    i2, _ = _loops(sch, "C")
    merged = sch.merge(i1, i2)
    assert sch.get(merged).name == "i"
    text = check(sch, args)
    # one i loop; C's j loop under it, after B's
    assert text.count("for i") == 1 and "for j_1 in range(48)" in text
    assert "C[i, j_1] = A[i, j_1] * T.float32(3.0) + T.float32(1.0)" in text
    # as in TVM, C's loops are the merged loop and its own j
    assert len(_loops(sch, "C")) == 2
    _, j1 = _loops(sch, "B")
    _, j2 = _loops(sch, "C")
    sch.merge(j2, j1)  # either order: B's nest runs first, so it is the host
    text = check(sch, args)
    assert text.count("for ") == 2
    assert "sch.merge(" in str(sch.trace)


def test_merge_three_blocks_and_a_consumer_of_the_first():
    A = te.placeholder((32, 16), name="A")
    B = te.compute((32, 16), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((32, 16), lambda i, j: B[i, j] * B[i, j], name="C")
    D = te.compute((32, 16), lambda i, j: A[i, j] - 1.0, name="D")
    args = [A, B, C, D]
    sch = schedule(args)
    loops = [_loops(sch, b)[0] for b in ("D", "C", "B")]  # any order: B's nest comes first
    sch.merge(*loops)
    text = check(sch, args)
    assert text.count("for i") == 1 and text.index('stage "C"') < text.index('stage "D"')


def test_reader_of_the_same_iteration_is_accepted_others_refused():
    # C reads B's row i: written by the same iteration of the merged loop
    args = _two(read_b=lambda B, i, j: B[i, j] + 1.0)
    sch = schedule(args)
    sch.merge(_loops(sch, "B")[0], _loops(sch, "C")[0])
    check(sch, args)
    # C reads row n-1-i: not written yet when iteration i runs C
    args = _two(read_b=lambda B, i, j: B[63 - i, j] + 1.0)
    sch = schedule(args)
    i1, i2 = _loops(sch, "B")[0], _loops(sch, "C")[0]
    assert_step_fails(
        sch,
        lambda: sch.merge(i1, i2),
        "merge: .*reads 'B' beyond what that loop's iteration has written",
    )


@pytest.mark.parametrize(
    ("setup", "match"),
    [
        (lambda sch: (_loops(sch, "B")[0], _loops(sch, "B")[1]), "two loops of block 'B'"),
        (lambda sch: (_loops(sch, "B")[0], _loops(sch, "C")[1]), "extent 48, the other loops 64"),
        (lambda sch: (_loops(sch, "B")[1], _loops(sch, "C")[1]), "merge the outer loops first"),
        (lambda sch: (_loops(sch, "B")[0],), "at least two loops"),
    ],
)
def test_refused_as_tvm_refuses(setup, match):
    sch = schedule(_two())
    loops = setup(sch)
    assert_step_fails(sch, lambda: sch.merge(*loops), match)


def test_annotated_and_split_loops_are_refused():
    sch = schedule(_two())
    i1, _ = _loops(sch, "B")
    sch.parallel(i1)
    i2, _ = _loops(sch, "C")
    assert_step_fails(sch, lambda: sch.merge(i1, i2), "is annotated")
    sch = schedule(_two())
    i2, _ = _loops(sch, "C")
    a, b = sch.split(i2, factors=[None, 8])
    i1, _ = _loops(sch, "B")
    i1a, _ = sch.split(i1, factors=[None, 8])
    assert_step_fails(sch, lambda: sch.merge(i1a, a), "is split, fused or a reduction loop")
