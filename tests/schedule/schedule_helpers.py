"""Shared helpers of the schedule tests: their workload sizes, the numeric check, trace round trips.

Every test schedule goes through ``check`` (block style) or ``check_te`` (TE style):
the lowered text must contain what the test expects, the program is built with LLVM and
compared with the numpy reference evaluator, and the trace is replayed — as printed
Python and through JSON — onto a fresh schedule that must lower to the same program
(TVM's ``verify_trace_roundtrip``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np
import pytest
import workloads

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.dsl.reference import evaluate
from ansor_lab.dsl.tensor import ComputeOp, PlaceholderOp, Tensor
from ansor_lab.errors import ScheduleError
from ansor_lab.schedule.lower import lower_state
from ansor_lab.script import from_source

RTOL = ATOL = 1e-4


# -- workloads: the suite's (tests/workloads.py), at the sizes these tests print ------------


def matmul(n: int = 64, m: int = 48, k: int = 32) -> tuple[Tensor, Tensor, Tensor]:
    """C[i, j] = sum_k A[i, k] * B[k, j]."""
    return tuple(workloads.matmul(n, m, k))


def matmul_exp(n: int = 64, m: int = 48, k: int = 32) -> tuple[Tensor, ...]:
    """C = A @ B; D = exp(C / k): an elementwise epilogue on a reduction."""
    return tuple(workloads.matmul_exp(n, m, k))


def chain(n: int = 32) -> tuple[Tensor, ...]:
    """The course's chain: C = A @ B; D = exp(C); F = D @ E."""
    return tuple(workloads.chain(n))


def elementwise3(n: int = 64, m: int = 64) -> tuple[Tensor, ...]:
    """B = A * 2; C = B + 1: two elementwise stages."""
    return tuple(workloads.elementwise3(n, m))


def row_sum(n: int = 16, k: int = 64) -> tuple[Tensor, Tensor]:
    """C[i] = sum_k A[i, k]."""
    return tuple(workloads.row_sum(n, k, name="C"))


def schedule(args: Sequence[Tensor], seed: int = 0) -> tir.Schedule:
    """A fresh block-style schedule over ``args`` (inputs, then outputs)."""
    return tir.Schedule(te.create_prim_func(list(args)), seed=seed)


# -- the numeric check ----------------------------------------------------------------


def run_and_compare(built: Callable, args: Sequence[Tensor], seed: int = 0) -> None:
    """Run ``built`` on random inputs and compare every output with the reference."""
    rng = np.random.default_rng(seed)
    inputs = {
        t: rng.uniform(-1.0, 1.0, t.shape).astype(t.dtype)
        for t in args
        if isinstance(t.op, PlaceholderOp)
    }
    outputs = [t for t in args if isinstance(t.op, ComputeOp)]
    expected = evaluate(outputs, inputs)
    arrays = []
    for t in args:
        if t in inputs:
            arrays.append(inputs[t])
        else:
            # NaN shows any element the program forgot to write
            arrays.append(np.full(t.shape, np.nan, dtype=t.dtype))
    built(*arrays)
    for t, arr in zip(args, arrays):
        if t in inputs:
            continue
        np.testing.assert_allclose(
            arr, expected[t], rtol=RTOL, atol=ATOL, err_msg=f"output {t.name}"
        )


# -- trace round trips ----------------------------------------------------------------


def replay_python(trace: tir.Trace, fresh: tir.Schedule) -> tir.Schedule:
    """Exec the printed ``def apply_trace(sch):`` and apply it to ``fresh``."""
    text = str(trace)
    assert text.startswith("def apply_trace(sch):")
    namespace: dict = {}
    exec(compile(text, "<trace>", "exec"), namespace)  # noqa: S102 - our own printed trace
    namespace["apply_trace"](fresh)
    return fresh


def replay_json(trace: tir.Trace, fresh: tir.Schedule) -> tir.Schedule:
    """Replay the trace through its JSON text onto ``fresh``."""
    data = json.loads(json.dumps(trace.as_json()))
    tir.Trace.from_json(data).apply_to_schedule(fresh)
    return fresh


def lowered_text(sch: tir.Schedule) -> str:
    """The loop program ``sch`` builds (``sch.mod`` itself prints TVM's block form)."""
    return tvm.lower(sch.mod).script()


def program_texts(sch: tir.Schedule) -> str:
    """The block form ``sch.mod`` prints, then the loop program it builds."""
    return sch.mod.script() + "\n# lowered:\n" + lowered_text(sch)


def verify_block_form_roundtrip(sch: tir.Schedule) -> None:
    """``sch.mod``'s printed block form parses back to a structurally equal function."""
    func = sch.mod.main_function()
    tvm.ir.assert_structural_equal(func, from_source(sch.mod.script()))


def verify_trace_roundtrip(sch: tir.Schedule, args: Sequence[Tensor] | None = None) -> str:
    """Both replays of ``sch.trace`` onto fresh schedules lower to ``sch``'s program.

    ``args`` defaults to the tensors the schedule's PrimFunc was created from.
    """
    expected = program_texts(sch)
    func = te.create_prim_func(list(args if args is not None else sch.args))
    via_py = replay_python(sch.trace, tir.Schedule(func))
    assert program_texts(via_py) == expected, "Python trace replay differs"
    via_json = replay_json(sch.trace, tir.Schedule(func))
    assert program_texts(via_json) == expected, "JSON trace replay differs"
    assert str(via_json.trace) == str(sch.trace)
    return expected


# -- one call for a whole check -------------------------------------------------------


def assert_contains(text: str, snippets: Sequence[str]) -> None:
    """Every snippet occurs in ``text`` (printed in full when one does not)."""
    for snippet in snippets:
        assert snippet in text, f"{snippet!r} not in the lowered program:\n{text}"


def check(
    sch: tir.Schedule,
    args: Sequence[Tensor],
    contains: Sequence[str] = (),
    absent: Sequence[str] = (),
) -> str:
    """Lowered IR contents, LLVM result vs numpy, both trace round trips and the block
    form's print -> parse round trip; returns the lowered text."""
    text = lowered_text(sch)
    assert_contains(text, contains)
    for snippet in absent:
        assert snippet not in text, f"{snippet!r} unexpectedly in:\n{text}"
    run_and_compare(tvm.build(sch.mod, target="llvm"), args)
    verify_trace_roundtrip(sch, args)
    verify_block_form_roundtrip(sch)
    return text


def check_te(s: te.Schedule, args: Sequence[Tensor], contains: Sequence[str] = ()) -> str:
    """``check`` for a TE schedule: its block-style trace replays onto ``tir.Schedule``."""
    text = tvm.lower(s, list(args)).script()
    assert_contains(text, contains)
    run_and_compare(tvm.build(s, list(args), target="llvm"), args)
    for replay in (replay_python, replay_json):
        fresh = replay(s.trace, tir.Schedule(te.create_prim_func(list(args))))
        assert lowered_text(fresh) == text, f"{replay.__name__} of the TE trace differs"
    return text


def snapshot(sch: tir.Schedule) -> tuple:
    """The program (lowered afresh, not from ``sch.mod``'s cache) and the trace."""
    fresh = lower_state(sch.state, sch.args, "main").script()
    return fresh, sch.mod.script(), str(sch.trace), len(sch.trace.insts)


def assert_step_fails(sch: tir.Schedule, step: Callable[[], object], match: str) -> None:
    """``step`` raises ScheduleError matching ``match`` and changes nothing."""
    before = snapshot(sch)
    with pytest.raises(ScheduleError, match=match):
        step()
    assert snapshot(sch) == before, "a failing step changed the schedule or its trace"
    verify_trace_roundtrip(sch)  # and the trace left behind still replays
