"""What only the search tests share: their table of workloads, the numeric check of a
searched program, a record's identity. The workloads themselves, the task of a tensor
list and the fast tuning options are the suite's (``tests/workloads.py``).

Every workload is small enough that a candidate builds in well under a second and runs
in microseconds; every search uses a small population and one generation, so a tuning
round costs a few seconds.
"""

from __future__ import annotations

import numpy as np
from workloads import (
    conv2d_bias_relu,
    elementwise,
    matmul,
    matmul_relu,
    row_sum,
    scaled_matmul,
    softmax,
)

import ansor_lab as tvm
from ansor_lab.dsl.reference import reference_outputs
from ansor_lab.dsl.tensor import PlaceholderOp, Tensor
from ansor_lab.measure.workers import random_inputs

#: The search tests' workloads by name.
WORKLOADS = {
    "matmul": matmul,
    "matmul_relu": matmul_relu,
    "conv2d": conv2d_bias_relu,
    "softmax": softmax,
    "row_sum": row_sum,
    "elementwise": elementwise,
    "scaled_matmul": scaled_matmul,
}


# -- the numeric check ----------------------------------------------------------------


def check_numeric(sch, args: list[Tensor], seed: int = 0) -> None:
    """Build ``sch`` with LLVM, run it on random inputs, compare with the reference.

    Output arrays start filled with garbage, so an element the program forgets to write
    shows up as a mismatch.
    """
    f = tvm.build(sch.mod, target="llvm")
    params = [(t.name, list(t.shape), t.dtype) for t in args]
    arrays = random_inputs(params, seed)
    for t, a in zip(args, arrays):
        if not isinstance(t.op, PlaceholderOp):
            a[...] = 99.0
    f(*arrays)
    want = reference_outputs(args, arrays)
    for t, got, exp in zip(args, arrays, want):
        if not isinstance(t.op, PlaceholderOp):
            np.testing.assert_allclose(
                got, exp, rtol=1e-4, atol=1e-4, err_msg=f"output {t.name} of\n{sch.trace}"
            )


def record_key(inp) -> tuple:
    """(sketch, decisions) of a record, hashable (the search's candidate identity)."""
    return (inp.sketch, _freeze(inp.decisions))


def _freeze(x):
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(v) for v in x)
    return x
