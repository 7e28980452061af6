"""Streaming read bandwidth: our read-sum kernel next to numpy's sum, on 1 and 2 threads.

    .venv/bin/python bench/bench_bandwidth.py                       # GEMV size + DRAM size
    .venv/bin/python bench/bench_bandwidth.py --mib 9,64,1024 --rounds 7 --cache

For each buffer size and thread count, alternating for ``--rounds`` rounds:
- ours: ``ansor_lab.measure.bandwidth.measure_read_bandwidth`` (a read-sum kernel in LLVM
  IR with 8 vector accumulators, one contiguous slice per thread; the GB/s of a round is
  the median of its repeats);
- numpy: ``np.sum`` of float32 (pairwise summation, SIMD), on 2 threads one ``np.sum``
  per half in two Python threads (the reduction releases the GIL).
Printed: the median over rounds, GB/s (bytes read / seconds). The default sizes are the
GEMV's weight matrix (9 MiB: what a GEMV timed again and again reads, from whatever cache
level holds it) and ``default_nbytes()`` (far past the last-level cache: DRAM).
``--cache`` also measures and stores the figures the roofline and the prior read
(``read_bandwidth(threads, force=True)`` and ``machine_balance`` at each cache level of
``bandwidth_levels``, on the CPU clock; stale figures are measured again).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from ansor_lab.measure.bandwidth import (  # noqa: E402
    bandwidth_levels,
    default_nbytes,
    machine_balance,
    measure_read_bandwidth,
    read_bandwidth,
)


def numpy_sum_gbs(a: np.ndarray, threads: int, repeats: int = 5, clock=time.perf_counter) -> float:
    """Median GB/s of ``np.sum`` over ``a`` split into ``threads`` contiguous parts
    (``clock=time.process_time``: on the process CPU clock, divided by the threads)."""
    parts = np.array_split(a, threads)
    reps = max(1, int(0.02 / max(a.nbytes / 10e9, 1e-7)))  # ~20 ms per timing

    def one(part):
        for _ in range(reps):
            part.sum()

    rates = []
    one(parts[0])  # warm-up
    for _ in range(repeats):
        workers = [threading.Thread(target=one, args=(p,)) for p in parts]
        t0 = clock()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        spent = clock() - t0
        spent = spent / threads if clock is time.process_time else spent
        rates.append(a.nbytes * reps / spent / 1e9)
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    """Run the measurement (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mib", default=None, help="buffer sizes in MiB (default: 9 and DRAM)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cache", action="store_true", help="measure and cache read_bandwidth")
    args = ap.parse_args(argv)
    sizes = (
        [int(float(x) * (1 << 20)) for x in args.mib.split(",")]
        if args.mib
        else [9 << 20, default_nbytes()]
    )
    threads = [int(x) for x in args.threads.split(",")]
    print(f"load: {os.getloadavg()}")
    print(
        f"{'MiB':>6} {'thr':>3} {'ours GB/s':>10} {'numpy GB/s':>11} {'ours/numpy':>10} | "
        f"{'cpu: ours':>9} {'numpy':>6} {'ours/numpy':>10}"
    )
    for nbytes in sizes:
        a = np.ones(nbytes // 4, dtype=np.float32)
        for thr in threads:
            ours, theirs, ours_c, theirs_c = [], [], [], []
            cpu = time.process_time
            for _ in range(args.rounds):
                ours.append(measure_read_bandwidth(nbytes, thr, repeats=5).gbs)
                theirs.append(numpy_sum_gbs(a, thr))
                ours_c.append(measure_read_bandwidth(nbytes, thr, repeats=5, clock=cpu).gbs)
                theirs_c.append(numpy_sum_gbs(a, thr, clock=cpu))
            o, t = statistics.median(ours), statistics.median(theirs)
            oc, tc = statistics.median(ours_c), statistics.median(theirs_c)
            print(
                f"{nbytes / (1 << 20):6.0f} {thr:>3} {o:10.1f} {t:11.1f} {o / t:10.2f} | "
                f"{oc:9.1f} {tc:6.1f} {oc / tc:10.2f}"
            )
        del a
    if args.cache:
        for thr in threads:
            got = read_bandwidth(thr, force=True)
            print(f"cached read_bandwidth({thr}): {got.gbs:.1f} GB/s over {got.nbytes >> 20} MiB")
            for name, size in bandwidth_levels():
                bal = machine_balance(thr, measure=True, nbytes=size)
                print(f"cached machine_balance({thr}, {name}, {size >> 10} KiB): {bal:.3f} B/flop")
    print(f"load: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
