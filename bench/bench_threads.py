"""Two threads against one: how much each ``bench_ops`` operator gains from a second core.

    .venv/bin/python bench/bench_threads.py --ops gemv_ffn,bias_gelu,row_sum --trials 64
    .venv/bin/python bench/bench_threads.py --json bench/results/threads.json     # all ops

For each operator (``bench/ops_defs.py``) the auto-scheduler tunes once for one thread
(``llvm -num-cores=1``) and once for two (``-num-cores=2``), ``--trials`` each, as
``bench_ops.py --threads 1,2`` does. The two best programs are then rebuilt, checked
against numpy, and re-timed alternately (1T, 2T, 1T, 2T, ... for ``--rounds`` rounds,
each a ``time_evaluator`` median), so the speedup is a ratio of timings taken seconds
apart rather than minutes apart under a changing load: the printed speedup is the median
over rounds of t(1T) / t(2T). Target (issue 21): >= 1.8x wherever the work allows it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_ops import time_ours, tune  # noqa: E402
from ops_defs import BY_NAME  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Run the comparison (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ops", default=",".join(BY_NAME), help="comma-separated operator names")
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5, help="alternating re-timing rounds")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args(argv)
    names = [n for n in args.ops.split(",") if n]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        ap.error(f"unknown operators {unknown}; choose from {sorted(BY_NAME)}")
    print(f"load: {os.getloadavg()}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as logs:
        for name in names:
            op = BY_NAME[name]
            tuned = {}
            for thr in (1, 2):
                log_dir = os.path.join(logs, f"t{thr}")
                os.makedirs(log_dir, exist_ok=True)
                task, snaps = tune(op, thr, [args.trials], log_dir)
                tuned[thr] = (task, snaps[args.trials][0], snaps[args.trials][1])
            times: dict[int, list[float]] = {1: [], 2: []}
            err = 0.0
            for _ in range(args.rounds):
                for thr in (1, 2):
                    task, trace, _wall = tuned[thr]
                    got = time_ours(task, trace, thr, op)
                    times[thr].append(got["ours_s"])
                    err = max(err, got["rel_error"])
            ratios = [a / b for a, b in zip(times[1], times[2], strict=True)]
            row = {
                "op": name,
                "family": op.family,
                "t1_us": statistics.median(times[1]) * 1e6,
                "t2_us": statistics.median(times[2]) * 1e6,
                "speedup": statistics.median(ratios),
                "speedup_min": min(ratios),
                "speedup_max": max(ratios),
                "tune1_s": tuned[1][2],
                "tune2_s": tuned[2][2],
                "rel_error": err,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\nload: {os.getloadavg()}")
    print(f"{'operator':18} {'1T us':>9} {'2T us':>9} {'2T/1T':>6} {'(min-max)':>12}  err")
    for r in rows:
        flag = "" if r["speedup"] >= 1.8 else "  < 1.8"
        print(
            f"{r['op']:18} {r['t1_us']:9.1f} {r['t2_us']:9.1f} {r['speedup']:6.2f} "
            f"{r['speedup_min']:5.2f}-{r['speedup_max']:<5.2f} {r['rel_error']:.0e}{flag}"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0 if all(r["rel_error"] < 1e-3 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
