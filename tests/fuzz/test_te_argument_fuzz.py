"""Differential fuzzing of TE stages computed at a loop while also function arguments.

Hypothesis draws a producer B (elementwise or a reduction, 1-d or 2-d) and a consumer C
reading it with one of several patterns (same index, stencil, strided, transposed,
partial, broadcast), tiles C's loops randomly (dividing and non-dividing splits, a fuse,
a parallel outer loop), computes B at a random loop of C and lowers with B in the
argument list. Each program must either

- build and compute C *and all of B* like numpy (B starts as NaN, so an unwritten element
  shows), or
- be refused with a LoweringError. A "never be written" refusal is then checked against
  the program lowered with the check switched off: B must really come out with an
  unwritten (NaN) element. A race refusal must concern a reduction in a parallel loop.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings, strategies as st

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import LoweringError
from ansor_lab.schedule import lower as lower_mod

COMMON = dict(
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# C's index pattern into B: (C's shape from B's n, the read as a function of C's axes)
PATTERNS_1D = {
    "same": (lambda n: (n,), lambda B, i: B[i]),
    "stencil": (lambda n: (n - 2,), lambda B, i: B[i] + B[i + 1] * B[i + 2]),
    "strided": (lambda n: ((n + 1) // 2,), lambda B, i: B[i * 2]),
    "partial": (lambda n: (n - 3,), lambda B, i: B[i + 1]),
    "repeat": (lambda n: (2 * n,), lambda B, i: B[i // 2]),
}
PATTERNS_2D = {
    "same": (lambda n: (n, n - 1), lambda B, i, j: B[i, j]),
    "transpose": (lambda n: (n - 1, n), lambda B, i, j: B[j, i]),
    "stencil": (lambda n: (n - 1, n - 2), lambda B, i, j: B[i, j] - B[i + 1, j + 1]),
    "row": (lambda n: (n, n - 1), lambda B, i, j: B[i, 0] + B[i, j]),
}


def _workload(data):
    two_d = data.draw(st.booleans(), label="2d")
    n = data.draw(st.integers(5, 13), label="n")
    reduce = data.draw(st.booleans(), label="reduction")
    patterns = PATTERNS_2D if two_d else PATTERNS_1D
    pattern = data.draw(st.sampled_from(sorted(patterns)), label="pattern")
    c_shape, read = patterns[pattern]
    b_shape = (n, n - 1) if two_d else (n,)
    A = te.placeholder(b_shape + (3,), name="A")
    if reduce:
        r = te.reduce_axis((0, 3), name="r")
        B = te.compute(b_shape, lambda *ix: te.sum(A[ix + (r,)] * 0.5, axis=r), name="B")
    else:
        B = te.compute(b_shape, lambda *ix: A[ix + (1,)] * 2.0 - A[ix + (2,)], name="B")
    shape = c_shape(n)
    if two_d and pattern == "transpose":
        shape = (n - 1, n)
    C = te.compute(shape, lambda *ix: read(B, *ix) + 1.0, name="C")
    return A, B, C, reduce


def _tile(data, s, C, parallel_ok: bool):
    """Random splits / reorder / fuse of C's loops; returns (loops, parallel)."""
    loops = []
    for ax in C.op.axis:
        ext = int(ax.dom.extent)
        if data.draw(st.booleans(), label="split"):
            f = data.draw(st.integers(1, ext), label="factor")
            loops.append(list(s[C].split(ax, factor=f)))
        else:
            loops.append([ax])
    if len(loops) == 2 and data.draw(st.booleans(), label="tile order"):
        order = [loops[0][0], loops[1][0]] + loops[0][1:] + loops[1][1:]
        s[C].reorder(*order)
    else:
        order = [lp for group in loops for lp in group]
    if len(order) >= 2 and data.draw(st.booleans(), label="fuse"):
        f = s[C].fuse(order[0], order[1])
        order = [f] + order[2:]
    parallel = parallel_ok and data.draw(st.booleans(), label="parallel")
    if parallel:
        s[C].parallel(order[0])
    return order, parallel


def _run(func, tensors, a):
    outs = [np.full(tuple(t.shape), np.nan, dtype="float32") for t in tensors[1:]]
    func(a, *outs)
    return outs


def fuzz_one(data) -> None:
    A, B, C, reduce = _workload(data)
    nested = data.draw(st.booleans(), label="C computed at a consumer D")
    if nested:
        D = te.compute(tuple(C.shape), lambda *ix: C[ix] * 0.5, name="D")
        s = te.create_schedule(D.op)
        # D's outer loop may be parallel; C's loops then run inside it, serial
        d_loops, parallel = _tile(data, s, D, True)
        c_loops, _ = _tile(data, s, C, False)
        s[C].compute_at(s[D], data.draw(st.sampled_from(d_loops), label="C at"))
        last = D
    else:
        s = te.create_schedule(C.op)
        c_loops, parallel = _tile(data, s, C, True)
        last = C
    s[B].compute_at(s[C], data.draw(st.sampled_from(c_loops), label="B at"))
    args = [A, B] + ([C] if last is C or data.draw(st.booleans(), label="C arg") else [])
    args += [last] if last is not C else []
    a = np.random.default_rng(0).uniform(-1, 1, tuple(A.shape)).astype("float32")
    from ansor_lab.dsl.reference import evaluate

    ref = evaluate(args[1:], {A: a})
    note(tvm.lower(s, [A, last]).script())
    try:
        func = tvm.build(s, args, num_threads=2)
    except LoweringError as err:
        msg = str(err)
        note(msg)
        if "would never be written" in msg:
            original = lower_mod._Lowerer.check_argument_written
            try:
                lower_mod._Lowerer.check_argument_written = lambda self, stage: None
                outs = _run(tvm.build(s, args), args, a)
            finally:
                lower_mod._Lowerer.check_argument_written = original
            assert any(np.isnan(o).any() for o in outs), "refused, but all is written"
            event("refused: part of an argument unwritten")
        elif "add into the same element" in msg:
            assert reduce and parallel
            event("refused: reduction race")
        else:
            raise
        return
    event("accepted" + (" (nested)" if nested else ""))
    for _ in range(2 if parallel else 1):
        for t, out in zip(args[1:], _run(func, args, a)):
            np.testing.assert_allclose(out, ref[t], rtol=1e-5, atol=1e-5, err_msg=t.name)


@settings(max_examples=40, **COMMON)
@given(data=st.data())
def test_te_argument_compute_at_fuzz_quick(data):
    """A few dozen random programs."""
    fuzz_one(data)


@pytest.mark.slow
@settings(max_examples=300, **COMMON)
@given(data=st.data())
def test_te_argument_compute_at_fuzz(data):
    """A few hundred random programs (the CI run)."""
    fuzz_one(data)
