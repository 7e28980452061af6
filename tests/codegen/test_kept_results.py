"""Work whose results are not arguments is still done, and the user is warned once."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.kept_results import unread_temporaries
from ansor_lab.errors import DiscardedResultWarning


def _chain(n: int):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    E = te.placeholder((n, n), name="E")
    k = te.reduce_axis((0, n), name="rk")
    C = te.compute((n, n), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    D = te.compute((n, n), lambda m, n: te.exp(C[m, n]), name="D")
    r = te.reduce_axis((0, n), name="rl")
    F = te.compute((n, n), lambda m, j: te.sum(D[m, r] * E[r, j], axis=r), name="F")
    return A, B, E, C, D, F


def test_unread_result_found_but_not_its_inputs():
    A, B, E, C, D, F = _chain(16)
    s = te.create_schedule([C.op, D.op, F.op])
    func = tvm.lower(s, [A, B, E])["main"]
    assert [b.name for b in unread_temporaries(func)] == ["F"]
    assert unread_temporaries(tvm.lower(s, [A, B, E, F])["main"]) == []


def test_the_mlc_article_program_is_not_optimized_away():
    # the MLC-style article builds create_schedule([C.op, D.op, F.op]) with [A, B, E]
    A, B, E, C, D, F = _chain(96)
    s = te.create_schedule([C.op, D.op, F.op])
    with pytest.warns(DiscardedResultWarning, match="F is computed but not among"):
        lost = tvm.build(s, [A, B, E])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiscardedResultWarning)  # no warning when F is an arg
        kept = tvm.build(te.create_schedule([C.op, D.op, F.op]), [A, B, E, F])
    rng = np.random.default_rng(0)
    a, b, e = (rng.random((96, 96), dtype="float32") for _ in range(3))
    f = np.empty((96, 96), "float32")
    t_lost = lost.time_evaluator(lost.entry_name, tvm.cpu(), number=3, repeat=3)(a, b, e).median
    t_kept = kept.time_evaluator(kept.entry_name, tvm.cpu(), number=3, repeat=3)(a, b, e, f)
    # two 96^3 matmuls: milliseconds, not the microsecond of deleted work
    assert t_lost > 0.3 * t_kept.median
    assert t_lost > 1e-4
    assert "call void asm" in lost.get_source("ll")
