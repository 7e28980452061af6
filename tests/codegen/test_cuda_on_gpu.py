"""Every hand-scheduled CUDA workload of the CUDA C tests, run on a real GPU and compared
with the numpy reference (skipped where no CUDA binding sees a GPU; see
tests/codegen/test_cuda_driver.py for the interface without one)."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_workloads import ALL_WORKLOADS
from test_cuda_c import built, inputs_for
from workloads import needs_gpu

from ansor_lab.dsl.reference import reference_outputs

pytestmark = needs_gpu


@pytest.mark.parametrize("name", sorted(ALL_WORKLOADS))
def test_workload_on_the_gpu_equals_numpy(name):
    mod, args = built(name)
    arrays = inputs_for(name, args)
    want = reference_outputs(args, arrays)
    for t, a in zip(args, arrays):  # outputs start as garbage the kernels must overwrite
        if t.op.__class__.__name__ != "PlaceholderOp":
            a[...] = np.nan if a.dtype.kind == "f" else -7
    mod(*arrays)
    for t, got, ref in zip(args, arrays, want):
        if t.op.__class__.__name__ == "PlaceholderOp":
            continue
        if got.dtype.kind == "f":
            rtol = 2e-3 if got.dtype == np.float16 else 1e-5
            np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, ref)


def test_timing_on_the_gpu_is_kernel_time():
    mod, args = built("matmul_shared")
    arrays = inputs_for("matmul_shared", args)
    res = mod.time_evaluator(mod.entry_name, number=20, repeat=3, min_repeat_ms=2)(*arrays)
    assert len(res.results) == 3
    # a 128^3 matmul: well under a millisecond per run on any GPU CUDA 13 supports, and
    # more than the ~2 us of an empty launch
    assert all(2e-6 < r < 1e-3 for r in res.results), res.results
