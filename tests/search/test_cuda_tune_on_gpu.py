"""A CUDA task tuned with LocalRunner on a real GPU: every record measured (never marked
estimated), its costs plausible kernel times, and the best program, rebuilt from the log,
equal to numpy on the GPU. Skipped where no CUDA binding sees a GPU (EmulatedRunner is
what tunes there: test_emulated_runner.py)."""

from __future__ import annotations

import numpy as np
from workloads import fast_options, make_task, matmul, needs_gpu

import ansor_lab as tvm
from ansor_lab import auto_scheduler

pytestmark = needs_gpu


def test_tune_a_matmul_on_the_gpu(tmp_path):
    log = str(tmp_path / "gpu.json")
    task = make_task(matmul(96, 80, 72), target="cuda")
    task.tune(fast_options(log, trials=16, per_round=8))
    records = list(auto_scheduler.load_records(log))
    assert len(records) == 16
    good = [res for _, res in records if res.error_no == 0]
    assert len(good) >= 8, [res.error_msg[:200] for _, res in records if res.error_no]
    for inp, res in records:
        assert inp.target.startswith("cuda") and not res.estimated
    # a 96x80x72 matmul on a GPU: more than an empty launch, far less than a CPU's time
    assert all(1e-6 < res.mean_cost < 2e-3 for res in good), [r.mean_cost for r in good]

    sch, args = task.apply_best(log)
    mod = tvm.build(sch, args, target="cuda")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((96, 72), dtype="float32")
    b = rng.standard_normal((72, 80), dtype="float32")
    c = np.full((96, 80), np.nan, "float32")
    mod(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
