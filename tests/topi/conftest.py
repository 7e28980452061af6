"""Shared fixtures of the topi tests: ``check_op`` runs a DAG and compares it with numpy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

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


def _split_args(outputs_and_args: Tensor | Sequence[Tensor]) -> tuple[list, list]:
    if isinstance(outputs_and_args, Tensor):
        dag = ComputeDAG([outputs_and_args])
        args = [op.output(0) for op in dag.placeholders] + [outputs_and_args]
    else:
        args = list(outputs_and_args)
    placeholders = [t for t in args if isinstance(t.op, PlaceholderOp)]
    outputs = [t for t in args if isinstance(t.op, ComputeOp)]
    assert outputs, "the argument list has no computed tensor to check"
    return placeholders, outputs


def check_op(
    outputs_and_args: Tensor | Sequence[Tensor],
    inputs: Sequence[np.ndarray],
    expected: np.ndarray | Sequence[np.ndarray],
    rtol: float | None = None,
    atol: float | None = None,
) -> list[np.ndarray]:
    """Run an operator's DAG and assert each output equals ``expected`` (shape, dtype, values).

    ``outputs_and_args`` is either the single output tensor (its placeholders become the
    inputs, in DAG order) or the kernel's argument list as one would pass it to a build:
    placeholders and outputs. ``inputs`` holds one array per placeholder, in that order;
    ``expected`` one array per output. Tolerances default to the output dtype's.
    This is the single place where every topi test executes a DAG: it runs the numpy
    reference evaluator today, and a compiled backend is checked by adding it here.
    Returns the computed outputs.
    """
    placeholders, outputs = _split_args(outputs_and_args)
    inputs = list(inputs)
    assert len(inputs) == len(placeholders), (
        f"{len(inputs)} input arrays for placeholders {[t.name for t in placeholders]}"
    )
    if isinstance(expected, np.ndarray):
        expected = [expected]
    expected = list(expected)
    assert len(expected) == len(outputs), f"{len(expected)} expected arrays for {len(outputs)} outputs"
    values = evaluate(outputs, dict(zip(placeholders, inputs)))
    results = [values[t] for t in outputs]
    for t, got, want in zip(outputs, results, expected):
        assert got.shape == want.shape, f"{t.name}: shape {got.shape}, expected {want.shape}"
        assert got.dtype == np.dtype(t.dtype) == want.dtype, (
            f"{t.name}: dtype {got.dtype} (tensor {t.dtype}), expected {want.dtype}"
        )
        r, a = tolerance(t.dtype)
        np.testing.assert_allclose(
            got, want, rtol=r if rtol is None else rtol, atol=a if atol is None else atol,
            err_msg=f"output {t.name!r}",
        )
    return results


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
    """``rand(shape, dtype="float32", low=-2, high=2)``: seeded random arrays, so failures reproduce."""
    rng = np.random.default_rng(0)
    return lambda shape, dtype="float32", low=-2.0, high=2.0: random_array(
        rng, shape, dtype, low, high
    )
