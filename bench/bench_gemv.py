"""GEMV against the read bandwidth: the tuned ``gemv_ffn`` next to our read-sum kernel.

    .venv/bin/python bench/bench_gemv.py --trials 64 --threads 1,2 --rounds 7

For each thread count: tune ``bench_ops``' ``gemv_ffn`` (dense 1x3072 by 768x3072, 9 MiB
of float32 weights) for ``--trials``, then alternate for ``--rounds`` rounds: the best
program (``time_evaluator`` median), ``measure_read_bandwidth`` over a buffer of the
weights' size (the working set the GEMV streams when timed again and again) and
``np.sum`` over the weights. Printed: medians over rounds in GB/s (weight bytes over
time), and the GEMV's share of the read bandwidth (the median of the per-round ratios).
Also the DRAM read bandwidth (``read_bandwidth``, cached) for reference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_bandwidth import numpy_sum_gbs  # noqa: E402
from bench_ops import inputs_for, output_for, time_ours, tune  # noqa: E402
from ops_defs import BY_NAME  # noqa: E402

import ansor_lab as tvm  # noqa: E402
from ansor_lab.measure.bandwidth import measure_read_bandwidth, read_bandwidth  # noqa: E402
from ansor_lab.schedule.trace import Trace  # noqa: E402


def build_best(task, trace: dict, threads: int):
    """The best program built, with its inputs and output array."""
    sch = task.make_schedule()
    Trace.from_json(trace).apply_to_schedule(sch)
    f = tvm.build(sch, list(task.args), target=task.target, num_threads=threads)
    ins = inputs_for(task.args)
    return f, ins, output_for(task.args)


def sch_text(task, trace: dict) -> str:
    """The best program's loop nest (its TVMScript)."""
    sch = task.make_schedule()
    Trace.from_json(trace).apply_to_schedule(sch)
    return sch.mod.script().replace("\n", "\n  ")


def cpu_seconds(f, ins, out, calls: int = 20, repeats: int = 5) -> float:
    """Median process-CPU seconds per call (one thread)."""
    f(*ins, out)
    per = []
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(calls):
            f(*ins, out)
        per.append((time.process_time() - t0) / calls)
    return statistics.median(per)


def main(argv: list[str] | None = None) -> int:
    """Run the comparison (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--threads", default="1")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--op", default="gemv_ffn")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    op = BY_NAME[args.op]
    print(f"load: {os.getloadavg()}", flush=True)
    rows = []
    for thr in [int(t) for t in args.threads.split(",")]:
        task, snaps, _ = tune(op, thr, [args.trials], args.seed, None)
        trace, _cost, wall, _invalid = snaps[args.trials]
        w = max(inputs_for(task.args), key=lambda a: a.nbytes)
        f, ins, out = build_best(task, trace, thr)
        gemv, ours, npy, ratio, cpu_ratio = [], [], [], [], []
        for _ in range(args.rounds):
            t = time_ours(task, trace, thr, op)
            assert t["rel_error"] < 1e-4, t
            g = w.nbytes / t["ours_s"] / 1e9
            b = measure_read_bandwidth(w.nbytes, thr, repeats=5).gbs
            gemv.append(g)
            ours.append(b)
            npy.append(numpy_sum_gbs(w, thr))
            ratio.append(g / b)
            if thr == 1:  # the same on the process CPU clock (load above the core count)
                g_cpu = w.nbytes / cpu_seconds(f, ins, out) / 1e9
                b_cpu = measure_read_bandwidth(w.nbytes, 1, 5, clock=time.process_time).gbs
                cpu_ratio.append(g_cpu / b_cpu)
        rows.append((thr, wall, *map(statistics.median, (gemv, ours, npy, ratio))))
        print(f"threads {thr}: gemv {gemv}\n  read-sum {ours}", flush=True)
        if cpu_ratio:
            print(f"  CPU clock GEMV/read-sum per round: {[round(r, 2) for r in cpu_ratio]}")
            print(f"  CPU clock GEMV/read-sum median: {statistics.median(cpu_ratio):.2f}")
        print(f"  {sch_text(task, trace)}", flush=True)
    print(f"\nload: {os.getloadavg()}")
    head = ("thr", "tune s", "GEMV GB/s", "read-sum GB/s", "np.sum GB/s", "GEMV/bw")
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (3, 7, 10, 14, 12, 8), strict=True)))
    for thr, wall, g, b, n, r in rows:
        print(f"{thr:>3} {wall:7.0f} {g:10.1f} {b:14.1f} {n:12.1f} {r:8.2f}")
    for thr, *_ in rows:
        print(f"DRAM read bandwidth ({thr} thread(s), cached): {read_bandwidth(thr).gbs:.1f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
