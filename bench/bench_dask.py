"""Tuning wall time on a Dask cluster with 1 and with 2 workers (LocalCluster).

    .venv/bin/python bench/bench_dask.py                      # 64 trials, 1 and 2 workers
    .venv/bin/python bench/bench_dask.py --trials 64 --workers 1,2,4 --size 128 --local

For each worker count a ``distributed.LocalCluster`` of single-threaded worker processes
is started (not timed; the workers are warmed up by importing ansor_lab), then the same
search (same seed) tunes an N x N x N float32 matmul for ``--trials`` trials through
``DaskBuilder`` + ``DaskRunner`` (``number=3, min_repeat_ms=100``, TVM's tuning defaults:
each timed run takes at least 0.1 s, so measuring dominates). Printed per run: wall time,
measure time (build + run, as the tuner waits for them), search time, best GFLOPS, errors,
and how many candidates each worker measured. ``--local`` adds the same search with
LocalBuilder + LocalRunner for comparison.

Candidates are single-threaded (target ``-num-cores=1``); with W workers, W candidates
build and run at a time. The speed-up is bounded by the machine's cores: the tuner's own
search and the workers share them. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter

from ansor_lab import auto_scheduler, te


def matmul(n: int) -> list:
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]


def tune_once(args: argparse.Namespace, builder, runner, log: str) -> tuple[float, object]:
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG(matmul(args.size)), target="llvm -num-cores=1"
    )
    options = auto_scheduler.TuningOptions(
        num_measure_trials=args.trials,
        num_measures_per_round=args.per_round,
        verbose=0,
        measure_callbacks=[auto_scheduler.RecordToFile(log)],
        builder=builder,
        runner=runner,
    )
    policy = auto_scheduler.SketchPolicy(task, seed=args.seed, verbose=0)
    start = time.perf_counter()
    result = task.tune(options, search_policy=policy)
    return time.perf_counter() - start, result


def report(label: str, wall: float, result, log: str) -> None:
    stats = result.stats
    per_worker = Counter(
        (r.machine or {}).get("worker", "local") for _, r in auto_scheduler.load_records(log)
    )
    counts = "/".join(str(v) for _, v in sorted(per_worker.items()))
    print(
        f"{label:>10} | {wall:8.1f} | {stats.measure_time:8.1f} | {stats.search_time:7.1f} | "
        f"{stats.best_gflops:7.2f} | {stats.errors:6d} | {counts}",
        flush=True,
    )


def main() -> None:
    import distributed

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--per-round", type=int, default=16)
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--local", action="store_true", help="also tune with LocalRunner")
    args = parser.parse_args()
    print(
        f"matmul {args.size}^3 float32, {args.trials} trials, rounds of {args.per_round}, "
        f"{os.cpu_count()} CPUs on this machine (load {os.getloadavg()[0]:.1f})"
    )
    print(" run       |  wall s  | measure s | search s |  GFLOPS | errors | per worker")
    tmp = tempfile.mkdtemp(prefix="bench_dask_")
    if args.local:
        log = os.path.join(tmp, "local.json")
        builder = auto_scheduler.LocalBuilder(n_parallel=1)
        runner = auto_scheduler.LocalRunner(number=3, min_repeat_ms=100)
        wall, result = tune_once(args, builder, runner, log)
        report("local", wall, result, log)
    for n in [int(w) for w in args.workers.split(",")]:
        with (
            distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            client.wait_for_workers(n)
            client.run(__import__, "ansor_lab.measure.dask_measure")  # warm the workers
            log = os.path.join(tmp, f"dask{n}.json")
            builder = auto_scheduler.DaskBuilder(client)
            runner = auto_scheduler.DaskRunner(client, number=3, min_repeat_ms=100)
            wall, result = tune_once(args, builder, runner, log)
            report(f"dask x{n}", wall, result, log)


if __name__ == "__main__":
    main()
