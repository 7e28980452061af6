"""What writing the records log costs per measured candidate.

    .venv/bin/python bench/bench_records.py [--n 500] [--dir /tmp]

The tuner appends each record as its measurement finishes (one ``append_lines`` call:
open, flock, a one-byte torn-line check, one write, close). This times, per record, the
encoding of a real record of a 64x64 matmul candidate and the append with and without
``fsync`` (``RecordToFile(sync=True)``), next to the fastest a candidate's measurement can
be (a worker round trip plus ``min_repeat_ms``, 100 ms by TVM's tutorials; ~10 ms in tests).
Also reads the log back (``load_records``) and reports records per second.

Not part of the test suite: numbers depend on the machine, its disk and its load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from ansor_lab import auto_scheduler, te
from ansor_lab.measure.records import MeasureResult, append_lines, encode, load_records


def _task() -> auto_scheduler.SearchTask:
    n = 64
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return auto_scheduler.SearchTask(compute_dag=auto_scheduler.ComputeDAG([A, B, C]))


def _per_call(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    """Print the per-record costs."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--dir", default=None, help="where the log goes (its disk is measured)")
    args = ap.parse_args()
    task = _task()
    policy = auto_scheduler.SketchPolicy(task, seed=0, verbose=0)
    inp = policy.next_batch(1)[0]
    res = MeasureResult([1.234e-4, 1.3e-4, 1.25e-4])
    line = encode(inp, res)
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        log = os.path.join(d, "bench.json")
        enc = _per_call(lambda: encode(inp, res), args.n)
        app = _per_call(lambda: append_lines(log, [line]), args.n)
        syn = _per_call(lambda: append_lines(log, [line], sync=True), max(20, args.n // 10))
        count = len(open(log).readlines())
        t = time.perf_counter()
        read = sum(1 for _ in load_records(log))
        read_s = time.perf_counter() - t
    print(f"record size                {len(line):8d} bytes")
    print(f"encode                     {enc * 1e6:8.1f} us / record")
    print(f"append (flock, one write)  {app * 1e6:8.1f} us / record")
    print(f"append + fsync             {syn * 1e6:8.1f} us / record")
    print(f"  vs a 10 ms measurement:  {(enc + app) / 10e-3:8.3%} (without fsync)")
    print(f"load_records               {read / read_s:8.0f} records / s ({read}/{count} read)")


if __name__ == "__main__":
    main()
