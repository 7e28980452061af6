"""``run_llvm``: build tensors with the default schedule, run them, return the outputs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.dsl.reference import evaluate


def run_llvm(
    outputs: te.Tensor | Sequence[te.Tensor],
    inputs: Sequence[te.Tensor],
    arrays: Sequence[np.ndarray],
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(compiled outputs, reference outputs) of ``outputs`` for input ``arrays``.

    Output arrays start filled with garbage, so an element the kernel forgets to write
    shows up as a mismatch.
    """
    outs = [outputs] if isinstance(outputs, te.Tensor) else list(outputs)
    func = tvm.build(te.create_schedule([o.op for o in outs]), list(inputs) + outs, "llvm")
    got = [np.full(o.shape, 99, dtype=o.dtype) for o in outs]
    func(*arrays, *got)
    values = evaluate(outs, dict(zip(inputs, arrays)))
    return got, [values[o] for o in outs]


@pytest.fixture(name="run_llvm")
def run_llvm_fixture():
    """The ``run_llvm`` function (see its docstring)."""
    return run_llvm
