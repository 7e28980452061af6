"""Bad-input catalogue, part "no silent wrong answer, ever" (issue 22, scope 1).

Each case is a hostile input that used to build and run with a wrong result, write
nothing, or kill the caller's process: an index that overflows int32 (a split factor,
a fused extent, a shape), a division by zero (constant or at run time), an access far
out of bounds. Each must now end in one of our exceptions whose message says what went
wrong and what to do. ``test_catalogue_figures`` prints the figures the issue asks for.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.dsl.reference import evaluate
from ansor_lab.dsl.serialize import dag_from_json, dag_to_json
from ansor_lab.errors import (
    AnsorLabError,
    DSLError,
    KernelBoundsError,
    KernelDivisionByZeroError,
    LoweringError,
    ReferenceEvaluationError,
    ScheduleError,
)
from ansor_lab.measure.workers import rebuild_schedule

BIG = 2**31  # one past the largest int32
RECORDS = Path(__file__).parents[1] / "golden" / "records" / "matmul_relu_16.jsonl"


@dataclass(frozen=True)
class Case:
    """A hostile input: ``run`` must raise ``error`` with every phrase of ``says``."""

    name: str
    run: Callable[[], object]
    error: type
    says: tuple


def _vector_add(n: int = 64):
    a = te.placeholder((n,), name="A")
    b = te.compute((n,), lambda i: a[i] * 2, name="B")
    return a, b


def _tir_split(factors: list) -> None:
    a, b = _vector_add()
    sch = tir.Schedule(te.create_prim_func([a, b]))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=factors)


def _te_split(**kw) -> None:
    a, b = _vector_add()
    s = te.create_schedule(b.op)
    s[b].split(b.op.axis[0], **kw)


def _te_tile() -> None:
    a = te.placeholder((64, 64), name="A")
    b = te.compute((64, 64), lambda i, j: a[i, j] + 1, name="B")
    s = te.create_schedule(b.op)
    s[b].tile(b.op.axis[0], b.op.axis[1], 8, BIG)


def _big_fuse(style: str) -> None:
    # 65536 x 65536 int8 elements: each loop fits int32, their fusion does not
    a = te.placeholder((65536, 65536), "int8", name="A")
    b = te.compute((65536, 65536), lambda i, j: a[i, j] + 1, name="B")
    if style == "tir":
        sch = tir.Schedule(te.create_prim_func([a, b]))
        sch.fuse(*sch.get_loops(sch.get_block("B")))
    else:
        s = te.create_schedule(b.op)
        s[b].fuse(*b.op.axis)


def _json_trace_split() -> None:
    a, b = _vector_add()
    sch = tir.Schedule(te.create_prim_func([a, b]))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 16])
    text = json.dumps(sch.trace.as_json()).replace("16", str(BIG))
    fresh = tir.Schedule(te.create_prim_func([a, b]))
    tir.Trace.from_json(text).apply_to_schedule(fresh)


def _record(edit: Callable[[list], None]) -> None:
    record = json.loads(RECORDS.read_text().splitlines()[0])
    trace = copy.deepcopy(record["trace"])
    edit(trace["insts"])
    rebuild_schedule(record["dag"], trace)


def _record_decision(insts: list) -> None:
    first = next(x for x in insts if x[0] == "SamplePerfectTile")
    first[3] = [1, 1, 1, BIG]


def _record_split(insts: list) -> None:
    k = next(k for k, x in enumerate(insts) if x[0] == "Split")
    insts[k][1] = [insts[k][1][0], ["factors", [None, BIG]]]


def _int_input(n: int = 8):
    return te.placeholder((n,), "int32", name="A")


def _compute(fn: Callable) -> None:
    a = _int_input()
    te.compute((8,), lambda i: fn(a[i]), name="B")


def _dag_json_zero_divisor() -> None:
    a = _int_input()
    b = te.compute((8,), lambda i: a[i] // 3, name="B")
    text = json.dumps(dag_to_json([a, b]))
    dag_from_json(json.loads(text.replace('["Int", 3,', '["Int", 0,')))


def _divide_at_run_time(schedule: str, kind: str = "//") -> None:
    n = 16
    a, c = _int_input(n), te.placeholder((n,), "int32", name="C")
    ops = {"//": lambda x, y: x // y, "%": lambda x, y: x % y, "/": te.truncdiv}
    b = te.compute((n,), lambda i: ops[kind](a[i], c[i]), name="B")
    s = te.create_schedule(b.op)
    if schedule == "vectorize":
        s[b].vectorize(b.op.axis[0])
    elif schedule == "parallel":
        s[b].parallel(b.op.axis[0])
    f = tvm.build(s, [a, c, b], num_threads=2)
    divisor = np.full(n, 3, "int32")
    divisor[n - 3] = 0
    f(np.arange(n, dtype="int32"), divisor, np.zeros(n, "int32"))


def _reference_zero_divisor() -> None:
    a, c = _int_input(), te.placeholder((8,), "int32", name="C")
    b = te.compute((8,), lambda i: a[i] % c[i], name="B")
    evaluate([b], {a: np.ones(8, "int32"), c: np.zeros(8, "int32")})


def _far_read(index: Callable) -> None:
    x = te.placeholder((8,), name="X")
    b = te.compute((8,), lambda i: x[index(i)], name="B")
    tvm.build(te.create_schedule(b.op), [x, b])


def _far_read_tir() -> None:
    x = te.placeholder((8, 8), name="X")
    b = te.compute((8, 8), lambda i, j: x[i, j * 4], name="B")
    sch = tir.Schedule(te.create_prim_func([x, b]))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.split(j, factors=[None, 4])
    tvm.build(sch.mod)


def _gather_at_run_time(schedule: str, bad: int) -> None:
    n = 16
    x, idx = te.placeholder((n,), name="X"), te.placeholder((n,), "int32", name="I")
    b = te.compute((n,), lambda i: x[idx[i]], name="B")
    s = te.create_schedule(b.op)
    if schedule == "vectorize":
        s[b].vectorize(b.op.axis[0])
    elif schedule == "parallel":
        s[b].parallel(b.op.axis[0])
    f = tvm.build(s, [x, idx, b], instrument_bound_checkers=True, num_threads=2)
    where = np.arange(n, dtype="int32")
    where[5] = bad
    f(np.ones(n, "float32"), where, np.zeros(n, "float32"))


def _read_at_run_time(index: Callable, schedule: str = "serial") -> None:
    """A default build (no ``instrument_bound_checkers``): an index that is not linear
    and not provably inside the buffer is checked at run time anyway."""
    x = te.placeholder((8,), name="X")
    b = te.compute((8,), lambda i: x[index(i)], name="B")
    s = te.create_schedule(b.op)
    if schedule == "vectorize":
        s[b].vectorize(b.op.axis[0])
    f = tvm.build(s, [x, b])
    f(np.ones(8, "float32"), np.zeros(8, "float32"))


def _gather_by_default(bad: int) -> None:
    x, idx = te.placeholder((16,), name="X"), te.placeholder((16,), "int32", name="I")
    b = te.compute((16,), lambda i: x[idx[i]], name="B")
    f = tvm.build(te.create_schedule(b.op), [x, idx, b])
    where = np.arange(16, dtype="int32")
    where[5] = bad
    f(np.ones(16, "float32"), where, np.zeros(16, "float32"))


def _script_block_far() -> None:
    """A TensorIR block's axis read through its binding: ``vi`` takes i's [0, 9]."""
    from ansor_lab.script import tir as T  # noqa: PLC0415 - only this case parses a script

    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(10):
            with T.block("B"):
                vi = T.axis.spatial(10, i)
                B[vi] = A[vi]

    tvm.build(main, target="llvm")


def _script_far_write() -> None:
    from ansor_lab.script import tir as T  # noqa: PLC0415 - only this case parses a script

    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[(i * 100000007) % 2000000011] = A[i]

    tvm.build(main, target="llvm")(np.ones(8, "float32"), np.zeros(8, "float32"))


INT32 = ("int32", "at most 2147483647")
SPLIT = ("split", "int32", "factors that multiply to about 64")
ZERO = ("division by the constant 0", "te.if_then_else(b != 0")
RUNTIME_ZERO = ("division or modulo by zero", "guard the divisor")
FAR = ("out-of-bounds read of buffer 'X'", "shape (8,)", "guard the access")
CHECKED = ("out-of-bounds access", "X[I[i]]", "fix the index expression")
RUN = ("out-of-bounds access", "outside its shape (8,)")

CASES = [
    Case("tir split factors=[None, 2**31]", lambda: _tir_split([None, BIG]), ScheduleError, SPLIT),
    Case("tir split factors=[2**31, None]", lambda: _tir_split([BIG, None]), ScheduleError, SPLIT),
    Case(
        "tir split [None, 2**16, 2**16] (product)",
        lambda: _tir_split([None, 2**16, 2**16]),
        ScheduleError,
        SPLIT,
    ),
    Case("te split factor=2**31", lambda: _te_split(factor=BIG), ScheduleError, SPLIT),
    Case("te split nparts=2**31", lambda: _te_split(nparts=BIG), ScheduleError, SPLIT),
    Case("te tile y_factor=2**31", _te_tile, ScheduleError, ("split", "int32")),
    Case("tir fuse 65536 x 65536", lambda: _big_fuse("tir"), ScheduleError, ("fuse", *INT32)),
    Case("te fuse 65536 x 65536", lambda: _big_fuse("te"), ScheduleError, ("fuse", *INT32)),
    Case("JSON trace: split by 2**31", _json_trace_split, ScheduleError, SPLIT[:2]),
    Case(
        "record: SamplePerfectTile decision 2**31",
        lambda: _record(_record_decision),
        ScheduleError,
        ("2147483648", "whose product is 16"),
    ),
    Case("record: Split [None, 2**31]", lambda: _record(_record_split), ScheduleError, INT32),
    Case(
        "placeholder dimension 2**31",
        lambda: te.placeholder((BIG,), name="A"),
        DSLError,
        (*INT32, "split the tensor"),
    ),
    Case(
        "compute dimension 2**31",
        lambda: te.compute((4, BIG), lambda i, j: i + j, name="B"),
        DSLError,
        (*INT32, "split the tensor"),
    ),
    Case(
        "reduce_axis (0, 2**31)",
        lambda: te.reduce_axis((0, BIG), name="k"),
        DSLError,
        INT32,
    ),
    Case("x // 0", lambda: _compute(lambda x: x // 0), DSLError, ZERO),
    Case("x % 0", lambda: _compute(lambda x: x % 0), DSLError, ZERO),
    Case("x / 0 (int)", lambda: _compute(lambda x: x / 0), DSLError, ZERO),
    Case("te.truncdiv(x, 0)", lambda: _compute(lambda x: te.truncdiv(x, 0)), DSLError, ZERO),
    Case("te.truncmod(x, 0)", lambda: _compute(lambda x: te.truncmod(x, 0)), DSLError, ZERO),
    Case(
        "te.floordiv(x, te.const(0))",
        lambda: _compute(lambda x: te.floordiv(x, te.const(0, "int32"))),
        DSLError,
        ZERO,
    ),
    Case("te.indexmod(x, 0)", lambda: _compute(lambda x: te.indexmod(x, 0)), DSLError, ZERO),
    Case("DAG JSON with a zero divisor", _dag_json_zero_divisor, DSLError, ZERO),
    Case(
        "run-time x // 0 (serial)",
        lambda: _divide_at_run_time("serial"),
        KernelDivisionByZeroError,
        RUNTIME_ZERO,
    ),
    Case(
        "run-time x % 0 (vectorized)",
        lambda: _divide_at_run_time("vectorize", "%"),
        KernelDivisionByZeroError,
        RUNTIME_ZERO,
    ),
    Case(
        "run-time truncdiv(x, 0) (parallel)",
        lambda: _divide_at_run_time("parallel", "/"),
        KernelDivisionByZeroError,
        RUNTIME_ZERO,
    ),
    Case(
        "reference evaluator x % 0",
        _reference_zero_divisor,
        ReferenceEvaluationError,
        ("division by zero", "te.if_then_else(b != 0"),
    ),
    Case(
        "X[i*100000000 + 100000000]",
        lambda: _far_read(lambda i: i * 100000000 + 100000000),
        LoweringError,
        (*FAR, "[100000000, 800000000]"),
    ),
    Case("X[i - 1]", lambda: _far_read(lambda i: i - 1), LoweringError, (*FAR, "[-1, 6]")),
    Case("X[7 - 2*i]", lambda: _far_read(lambda i: 7 - 2 * i), LoweringError, (*FAR, "[-7, 7]")),
    Case(
        "tir: X[i, j*4] after split",
        _far_read_tir,
        LoweringError,
        ("out-of-bounds read of buffer 'X'", "shape (8, 8)", "outside [0, 8)"),
    ),
    Case(
        "TVMScript block: B[vi] = A[vi], vi over range(10)",
        _script_block_far,
        LoweringError,
        ("out-of-bounds read of buffer 'A'", "[0, 9]", "outside [0, 8)"),
    ),
    Case(
        "TVMScript: B[(i * 100000007) % 2000000011] (default build)",
        _script_far_write,
        KernelBoundsError,
        ("out-of-bounds access", "write of B["),
    ),
    Case(
        "X[(i * 5) % 9] (default build)",
        lambda: _read_at_run_time(lambda i: (i * 5) % 9),
        KernelBoundsError,
        (*RUN, "X[i * 5 % 9]"),
    ),
    Case(
        "X[i // 2 * 3] (default build, vectorized)",
        lambda: _read_at_run_time(lambda i: i // 2 * 3, "vectorize"),
        KernelBoundsError,
        RUN,
    ),
    Case(
        "X[min(i * 2, 9)] (default build)",
        lambda: _read_at_run_time(lambda i: te.min(i * 2, 9)),
        KernelBoundsError,
        RUN,
    ),
    Case(
        "X[if_then_else(i > 3, 400000000, 0)] (default build)",
        lambda: _read_at_run_time(lambda i: te.if_then_else(i > 3, 400000000, 0)),
        KernelBoundsError,
        (*RUN, "X[400000000]"),
    ),
    Case(
        "gather X[I[i]], I = 10**8 (default build)",
        lambda: _gather_by_default(10**8),
        KernelBoundsError,
        CHECKED,
    ),
    Case(
        "checked gather X[I[i]], I = 10**8 (serial)",
        lambda: _gather_at_run_time("serial", 10**8),
        KernelBoundsError,
        CHECKED,
    ),
    Case(
        "checked gather X[I[i]], I = -1 (vectorized)",
        lambda: _gather_at_run_time("vectorize", -1),
        KernelBoundsError,
        CHECKED,
    ),
    Case(
        "checked gather X[I[i]], I = 2**31-1 (parallel)",
        lambda: _gather_at_run_time("parallel", 2**31 - 1),
        KernelBoundsError,
        CHECKED,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input_is_refused_clearly(case: Case):
    with pytest.raises(case.error) as info:
        case.run()
    message = str(info.value)
    for phrase in case.says:
        assert phrase in message, f"{case.name}: {phrase!r} missing from: {message}"


def test_catalogue_figures():
    """Every case: tried, rejected cleanly with our class; printed for the issue's note."""
    tried = clean = 0
    other = []
    for case in CASES:
        tried += 1
        try:
            case.run()
            other.append(f"{case.name}: no error")
        except case.error as err:
            ok = isinstance(err, AnsorLabError) and all(p in str(err) for p in case.says)
            clean += ok
            if not ok:
                other.append(f"{case.name}: unclear message {err}")
        except Exception as err:  # noqa: BLE001 - counted as "anything else"
            other.append(f"{case.name}: {type(err).__name__}: {err}")
    print(f"hostile inputs tried {tried} / rejected cleanly {clean} / anything else {len(other)}")
    assert tried >= 30
    assert clean == tried, other
