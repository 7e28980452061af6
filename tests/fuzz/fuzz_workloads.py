"""Small workloads for the schedule fuzzer, and the checks one fuzzed schedule must pass.

Each workload is a list of tensors (inputs first, outputs last) with odd, small shapes,
its random inputs and its numpy reference outputs (computed once), and the tolerance of
its dtype. The DAG builders that are not one topi call at an odd shape are the suite's
(``tests/workloads.py``). ``check_schedule`` builds a schedule with LLVM, compares it
with the reference and replays its trace through Python and JSON; ``replay_json``
reproduces a failure printed by the fuzzer::

    from fuzz_workloads import replay_json  # with tests/ and tests/fuzz on sys.path
    replay_json("matmul", {"version": 1, "insts": [...]})
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import workloads

import ansor_lab as tvm
from ansor_lab import te, tir, topi
from ansor_lab.dsl.reference import evaluate


@dataclass
class Workload:
    """Tensors to schedule, their inputs and reference outputs, and the tolerance."""

    name: str
    args: list  # inputs then outputs, as te.create_prim_func takes them
    rtol: float
    atol: float
    low: float = -1.0  # inputs are drawn uniformly from [low, high)
    high: float = 1.0
    func: object = None
    inputs: list = field(default_factory=list)
    expected: list = field(default_factory=list)

    @property
    def outputs(self) -> list:
        """The computed arguments."""
        return [t for t in self.args if not isinstance(t.op, te.PlaceholderOp)]

    def fresh(self, seed: int | None = None) -> tir.Schedule:
        """An unscheduled block-style schedule of the workload."""
        return tir.Schedule(self.func, seed=seed)


def _matmul() -> list:
    A = te.placeholder((17, 23), name="A")
    B = te.placeholder((23, 19), name="B")
    return [A, B, topi.nn.matmul(A, B)]


def _batch_matmul() -> list:
    x = te.placeholder((3, 9, 13), name="x")
    y = te.placeholder((3, 11, 13), name="y")
    return [x, y, topi.nn.batch_matmul(x, y)]


def _conv2d() -> list:
    data = te.placeholder((1, 5, 11, 9), name="data")
    kernel = te.placeholder((6, 5, 3, 3), name="kernel")
    return [data, kernel, topi.nn.conv2d_nchw(data, kernel, 1, 1, 1)]


def _depthwise() -> list:
    data = te.placeholder((1, 4, 13, 10), name="data")
    kernel = te.placeholder((4, 2, 3, 3), name="kernel")
    return [data, kernel, topi.nn.depthwise_conv2d_nchw(data, kernel, 2, 1, 1)]


def _max_pool() -> list:
    data = te.placeholder((1, 3, 15, 13), name="data")
    return [data, topi.nn.max_pool2d(data, 3, 2, 1, 1)]


def _avg_pool() -> list:
    data = te.placeholder((2, 3, 12, 11), name="data")
    return [data, topi.nn.avg_pool2d(data, 3, 1, 1, (1, 1, 1, 1), count_include_pad=False)]


def _softmax() -> list:
    x = te.placeholder((13, 27), name="x")
    return [x, topi.nn.softmax(x)]


def _layer_norm() -> list:
    data = te.placeholder((9, 21), name="data")
    gamma = te.placeholder((21,), name="gamma")
    beta = te.placeholder((21,), name="beta")
    return [data, gamma, beta, topi.nn.layer_norm(data, gamma, beta, axis=[-1])]


def _broadcast_chain() -> list:
    """tanh(relu(X + bias[j]) * s[i, 0]) with a broadcast row and column."""
    X = te.placeholder((15, 28), name="X")
    bias = te.placeholder((28,), name="bias")
    s = te.placeholder((15, 1), name="s")
    t1 = topi.add(X, bias)
    t2 = topi.nn.relu(t1)
    t3 = topi.multiply(t2, s)
    return [X, bias, s, topi.tanh(t3)]


BUILDERS: dict[str, tuple[Callable[[], list], dict]] = {
    "matmul": (_matmul, {}),
    "batch_matmul": (_batch_matmul, {}),
    "conv2d": (_conv2d, {}),
    "depthwise_conv2d": (_depthwise, {}),
    "max_pool": (_max_pool, {}),
    "avg_pool": (_avg_pool, {}),
    "softmax": (_softmax, {"low": -3.0, "high": 3.0}),
    "layer_norm": (_layer_norm, {}),
    "mm_exp_mm": (workloads.mm_exp_mm, {"low": -0.3, "high": 0.3}),
    "broadcast_chain": (_broadcast_chain, {}),
    "guarded_reduce": (workloads.guarded_reduce, {}),
    "int_reduce": (workloads.int_matmul_colmax, {"low": -20, "high": 20}),
}
NAMES = list(BUILDERS)


@cache
def workload(name: str) -> Workload:
    """The workload called ``name``, with its inputs and reference outputs (cached)."""
    build, opts = BUILDERS[name]
    args = build()
    dtype = args[-1].dtype
    exact = dtype.startswith("int")
    w = Workload(name, args, 0.0 if exact else 2e-4, 0.0 if exact else 2e-4, **opts)
    w.func = te.create_prim_func(args)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for t in args:
        if isinstance(t.op, te.PlaceholderOp):
            if exact:
                arr = rng.integers(int(w.low), int(w.high), size=t.shape).astype(t.dtype)
            else:
                arr = rng.uniform(w.low, w.high, size=t.shape).astype(t.dtype)
            w.inputs.append(arr)
    placeholders = [t for t in args if isinstance(t.op, te.PlaceholderOp)]
    values = evaluate(w.outputs, dict(zip(placeholders, w.inputs)))
    w.expected = [values[t] for t in w.outputs]
    return w


def run_built(w: Workload, mod: object) -> list:
    """Build ``mod`` with LLVM and run it; outputs start as NaN / a sentinel to catch
    elements that are never written."""
    f = tvm.build(mod, target="llvm")
    arrays, outs = [], []
    it = iter(w.inputs)
    for t in w.args:
        if isinstance(t.op, te.PlaceholderOp):
            arrays.append(next(it).copy())
        else:
            fill = np.nan if t.dtype.startswith("float") else -123456789
            out = np.full(t.shape, fill, dtype=t.dtype)
            arrays.append(out)
            outs.append(out)
    f(*arrays)
    return outs


def compare(w: Workload, outs: list) -> None:
    """Assert every output matches the reference within the workload's tolerance."""
    for t, got, want in zip(w.outputs, outs, w.expected):
        if w.rtol == 0.0:
            bad = got != want
        else:
            bad = ~np.isclose(got, want, rtol=w.rtol, atol=w.atol)
        if bad.any():
            idx = tuple(int(x) for x in np.argwhere(bad)[0])
            raise AssertionError(
                f"{w.name}: output {t.name} differs from the reference at {bad.sum()} of "
                f"{bad.size} elements; first at {idx}: got {got[idx]}, want {want[idx]}"
            )


def roundtrip(w: Workload, sch: tir.Schedule, script: str) -> None:
    """Replaying the trace as printed Python and as JSON gives the same program."""
    py = str(sch.trace)
    ns: dict = {}
    exec(compile(py, "<trace>", "exec"), ns)  # the trace's own Python rendering
    fresh = w.fresh()
    ns["apply_trace"](fresh)
    got = _texts(fresh.mod)
    assert got == script, f"Python replay differs:\n{got}\n--- expected ---\n{script}"
    data = json.loads(json.dumps(sch.trace.as_json()))
    fresh2 = w.fresh()
    tir.Trace.from_json(data).apply_to_schedule(fresh2)
    got2 = _texts(fresh2.mod)
    assert got2 == script, f"JSON replay differs:\n{got2}\n--- expected ---\n{script}"
    again = json.loads(json.dumps(fresh2.trace.as_json()))
    assert again == data, "the replayed schedule records a different trace"


def check_schedule(w: Workload, sch: tir.Schedule) -> None:
    """Lower, build, run and compare ``sch``, then check both trace round trips."""
    mod = sch.mod
    compare(w, run_built(w, mod))
    roundtrip(w, sch, _texts(mod))


def _texts(mod: object) -> str:
    # the block form a schedule's module prints, and the loop program it builds
    return mod.script() + "\n# lowered:\n" + tvm.lower(mod).script()


def replay_json(name: str, trace_json: dict | str) -> tir.Schedule:
    """Replay a trace the fuzzer printed onto ``name``'s workload and run every check."""
    w = workload(name)
    sch = w.fresh()
    tir.Trace.from_json(trace_json).apply_to_schedule(sch)
    check_schedule(w, sch)
    return sch
