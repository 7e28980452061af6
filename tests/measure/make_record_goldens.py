"""Write the golden records of tests/golden/records/ (run once, by hand).

    PYTHONPATH=$PWD python tests/measure/make_record_goldens.py

The log is what the records code wrote on the day: a tiny matmul + relu tuned for a few
trials with the LocalRunner and RecordToFile, then one failed measurement written through
``save_records``. test_records_golden.py replays every record from the DAG JSON the
record carries and compares with the IR beside it. Never rewrite an existing log: add a
new one, so the old one keeps proving that old logs replay.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ansor_lab import auto_scheduler, te
from ansor_lab.measure.records import MeasureInput, MeasureResult, save_records

OUT = Path(__file__).resolve().parents[1] / "golden" / "records"


def matmul_relu(n: int = 16) -> list:
    """D = relu(A @ B), n x n x n."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, n), lambda i, j: te.max(C[i, j], te.const(0.0, "float32")), name="D")
    return [A, B, D]


def main() -> int:
    """Tune for 6 trials into a new log, then append one failed measurement."""
    path = OUT / "matmul_relu_16.jsonl"
    if path.exists():
        print(f"{path} exists; records goldens are never rewritten")
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG(matmul_relu()), target="llvm -num-cores=2"
    )
    options = auto_scheduler.TuningOptions(
        num_measure_trials=6,
        num_measures_per_round=3,
        verbose=0,
        runner=auto_scheduler.LocalRunner(timeout=10, number=1, min_repeat_ms=5),
        measure_callbacks=[auto_scheduler.RecordToFile(str(path))],
        check_correctness=True,
    )
    policy = auto_scheduler.SketchPolicy(
        task,
        params={"population": 8, "generations": 1, "sample_init_min_population": 4},
        seed=7,
        verbose=0,
    )
    task.tune(options, search_policy=policy)
    # a failed measurement, as the builder reports one (kept in the log, never the best)
    sch = task.make_schedule(seed=0)
    c = sch.get_block("C")
    i, _, _ = sch.get_loops(c)
    sch.split(i, [None, 4])
    failed = MeasureResult([], error_no=2, error_msg="golden: a build error", all_cost=0.5)
    save_records(str(path), [MeasureInput(task, sch.trace.as_json())], [failed])
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
