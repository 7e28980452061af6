"""The seeds' spread, re-timed side by side: each seed's best program of a bench_ops run.

    .venv/bin/python bench/bench_seeds.py --jsonl bench/results/ops.jsonl [--rounds 5] [--ops A,B]

``bench_ops.py --seeds N`` keeps each search's best trace in its JSON-lines records. This
re-times those programs (one thread) in the tuner's own runner — ``LocalRunner`` with its
default clock, the runner thread's CPU clock, timing in native code — round-robin over the
seeds for ``--rounds`` rounds, so load that comes and goes hits every seed alike, and
prints per operator each seed's median time, the tuner's own time of it, and the spread
(worst / best). The search's seed dependence is what is left once the timing is steady.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_ops import make_task  # noqa: E402
from ops_defs import BY_NAME  # noqa: E402

from ansor_lab.measure.measure import LocalBuilder, LocalRunner, ProgramMeasurer  # noqa: E402
from ansor_lab.measure.records import MeasureInput  # noqa: E402


def retime(name: str, recs: list[dict], rounds: int) -> list[float]:
    """Median seconds per run of each record's program over ``rounds`` interleaved rounds."""
    task = make_task(BY_NAME[name], 1)
    inputs = [MeasureInput(task, r["trace"]) for r in recs]
    measurer = ProgramMeasurer(
        LocalBuilder(), LocalRunner(number=3, repeat=3, min_repeat_ms=40), [], 1
    )
    times: list[list[float]] = [[] for _ in recs]
    try:
        for _ in range(rounds):
            for k, res in enumerate(measurer.measure(task, None, inputs)):
                if res.error_no != 0:
                    raise RuntimeError(f"{name} seed {recs[k]['seed']}: {res.error_msg}")
                times[k] += list(res.costs)
    finally:
        measurer.close()
    return [statistics.median(t) for t in times]


def main(argv: list[str] | None = None) -> int:
    """Re-time and print (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--jsonl", required=True, help="a bench_ops.py run's records")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    ap.add_argument("--trials", type=int, default=64, help="the budget whose bests to re-time")
    ap.add_argument("--ops", default=None, help="comma-separated operators (default: all)")
    args = ap.parse_args(argv)
    with open(args.jsonl) as fh:
        recs = [json.loads(line) for line in fh if line.strip()]
    recs = [
        r
        for r in recs
        if r["kind"] == "ours" and r["threads"] == 1 and r["trials"] == args.trials
        and r.get("trace") and (args.ops is None or r["op"] in args.ops.split(","))
    ]  # fmt: skip
    print(f"{'operator':18} {'seeds':>5} {'best us':>9} {'median':>9} {'worst':>9} {'spread':>7}"
          "  per seed: re-timed (tuner) us")  # fmt: skip
    for name in dict.fromkeys(r["op"] for r in recs):
        group = sorted((r for r in recs if r["op"] == name), key=lambda r: r["seed"])
        times = retime(name, group, args.rounds)
        per = " ".join(
            f"s{r['seed']}:{t * 1e6:.1f}({r['tuner_s'] * 1e6:.1f})" for r, t in zip(group, times)
        )
        ts = sorted(times)
        print(
            f"{name:18} {len(ts):5d} {ts[0] * 1e6:9.1f} {statistics.median(ts) * 1e6:9.1f}"
            f" {ts[-1] * 1e6:9.1f} {ts[-1] / ts[0]:6.2f}x  {per}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
