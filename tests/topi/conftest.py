"""Shared fixtures of the topi tests: ``check_op`` runs a DAG and compares it with numpy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import ansor_lab
from ansor_lab.dsl.dag import ComputeDAG
from ansor_lab.dsl.reference import evaluate
from ansor_lab.dsl.tensor import ComputeOp, PlaceholderOp, Tensor

#: (rtol, atol) per dtype for results compared with a float64 numpy reference.
TOLERANCE = {
    "float16": (1e-2, 1e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-10, 1e-10),
}


def tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) for ``dtype``: loose for float16, exact for integers."""
    return TOLERANCE.get(str(dtype), (0.0, 0.0))


def _split_args(outputs_and_args: Tensor | Sequence[Tensor]) -> tuple[list, list, list]:
    if isinstance(outputs_and_args, Tensor):
        dag = ComputeDAG([outputs_and_args])
        args = [op.output(0) for op in dag.placeholders] + [outputs_and_args]
    else:
        args = list(outputs_and_args)
    placeholders = [t for t in args if isinstance(t.op, PlaceholderOp)]
    outputs = [t for t in args if isinstance(t.op, ComputeOp)]
    assert outputs, "the argument list has no computed tensor to check"
    return args, placeholders, outputs


def run_reference(args: list, inputs: dict) -> dict:
    """The outputs among ``args`` computed by the numpy reference evaluator."""
    outputs = [t for t in args if isinstance(t.op, ComputeOp)]
    values = evaluate(outputs, inputs)
    return {t: values[t] for t in outputs}


def run_llvm(args: list, inputs: dict) -> dict:
    """The outputs among ``args`` computed by code the LLVM backend compiled (default schedule)."""
    outputs = [t for t in args if isinstance(t.op, ComputeOp)]
    schedule = ansor_lab.te.create_schedule([t.op for t in outputs])
    func = ansor_lab.build(schedule, args, target="llvm")
    arrays = [
        np.ascontiguousarray(inputs[t]) if t in inputs else np.empty(t.shape, t.dtype) for t in args
    ]
    func(*arrays)
    return {t: a for t, a in zip(args, arrays) if isinstance(t.op, ComputeOp)}


#: Every way a DAG is executed in these tests; each must reproduce the expected values.
BACKENDS = {"reference": run_reference, "llvm": run_llvm}


def check_op(
    outputs_and_args: Tensor | Sequence[Tensor],
    inputs: Sequence[np.ndarray],
    expected: np.ndarray | Sequence[np.ndarray],
    rtol: float | None = None,
    atol: float | None = None,
) -> list[np.ndarray]:
    """Run an operator's DAG on every backend and assert each output equals ``expected``.

    ``outputs_and_args`` is either the single output tensor (its placeholders become the
    inputs, in DAG order) or the kernel's argument list as one passes it to a build:
    placeholders and outputs. ``inputs`` holds one array per placeholder, in that order;
    ``expected`` one array per output. Shape, dtype and values are compared, with the
    output dtype's tolerances unless given. This is the single place where the topi tests
    execute a DAG: ``BACKENDS`` lists the numpy reference evaluator and the LLVM backend
    (built with the default schedule), and a new backend is checked by adding it there.
    Returns the reference evaluator's outputs.
    """
    args, placeholders, outputs = _split_args(outputs_and_args)
    inputs = list(inputs)
    assert len(inputs) == len(placeholders), (
        f"{len(inputs)} input arrays for placeholders {[t.name for t in placeholders]}"
    )
    if isinstance(expected, np.ndarray):
        expected = [expected]
    expected = list(expected)
    assert len(expected) == len(outputs), (
        f"{len(expected)} expected arrays for {len(outputs)} outputs"
    )
    feed = dict(zip(placeholders, inputs))
    results = {}
    for backend, run in BACKENDS.items():
        results[backend] = run(args, feed)
        for t, want in zip(outputs, expected):
            got = results[backend][t]
            where = f"{backend}: output {t.name!r}"
            assert got.shape == want.shape, f"{where}: shape {got.shape}, expected {want.shape}"
            assert got.dtype == np.dtype(t.dtype) == want.dtype, (
                f"{where}: dtype {got.dtype} (tensor {t.dtype}), expected {want.dtype}"
            )
            r, a = tolerance(t.dtype)
            np.testing.assert_allclose(
                got,
                want,
                rtol=r if rtol is None else rtol,
                atol=a if atol is None else atol,
                err_msg=where,
            )
    return [results["reference"][t] for t in outputs]


@pytest.fixture(name="check_op")
def check_op_fixture():
    """The ``check_op`` function (see its docstring)."""
    return check_op


def random_array(rng: np.random.Generator, shape: tuple, dtype: str, low=-2.0, high=2.0):
    """Uniform values in [low, high) of ``dtype`` (integers in a slightly wider range)."""
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(int(low) - 3, int(high) + 4, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


@pytest.fixture
def rand():
    """``rand(shape, dtype="float32", low=-2, high=2)``: seeded arrays, so failures reproduce."""
    rng = np.random.default_rng(0)
    return lambda shape, dtype="float32", low=-2.0, high=2.0: random_array(
        rng, shape, dtype, low, high
    )
