"""How well the analytic prior (search/prior.py) ranks the programs a search measures.

    .venv/bin/python bench/bench_prior.py --log-dir /tmp/prior_logs             # all operators
    .venv/bin/python bench/bench_prior.py --log-dir D --ops conv_grouped,dw_s2_mobilenet
    .venv/bin/python bench/bench_prior.py --log-dir D --seeds 0,1,2 --trials 64

The prior ranks the first batch of every search, before anything is measured. For each
operator of ``bench_ops.py`` and ``bench_unseen.py`` this tunes ``--seeds`` searches of
``--trials`` trials (one thread), keeping every record in ``<log-dir>/<op>.json`` (an
existing log is reused, not tuned again), then scores every distinct measured program
with the prior and prints:

- ``rho``: Spearman rank correlation between the prior's scores and the measured speeds;
- ``top1 / top5 / top12``: the fastest measured time among the prior's first 1, 5, 12
  programs over the fastest of all (1.00: the prior's favourites hold the best; a first
  batch of 16 holds 12 prior-ranked picks);
- the geometric mean of those over the operators.

The programs are the searches' own picks (the cost model's and the prior's favourites,
not a uniform sample): what the prior has to rank when a search asks it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_ops import make_task  # noqa: E402
from bench_unseen import OPS as UNSEEN  # noqa: E402
from ops_defs import BY_NAME  # noqa: E402

from ansor_lab import auto_scheduler  # noqa: E402
from ansor_lab.measure.records import RecordToFile, load_records  # noqa: E402
from ansor_lab.schedule.lower import lower_state  # noqa: E402
from ansor_lab.schedule.trace import Trace  # noqa: E402
from ansor_lab.search.features import program_features  # noqa: E402

OPS = {**BY_NAME, **{op.name: op for op in UNSEEN}}


def collect(name: str, log: str, seeds: list[int], trials: int) -> None:
    """Tune ``name`` once per seed, appending every record to ``log``."""
    for seed in seeds:
        task = make_task(OPS[name], 1)
        opts = auto_scheduler.TuningOptions(
            num_measure_trials=trials,
            num_measures_per_round=16,
            num_threads=1,
            verbose=0,
            measure_callbacks=[RecordToFile(log)],
        )
        policy = auto_scheduler.SketchPolicy(task, seed=seed, verbose=0)
        result = task.tune(opts, search_policy=policy)
        print(f"  {name} seed {seed}: best {result.best_cost * 1e6:.1f} us", flush=True)


def measured_programs(name: str, log: str) -> tuple[np.ndarray, np.ndarray]:
    """(measured seconds, prior score) of each distinct program the log measured."""
    task = make_task(OPS[name], 1)
    hw = task.hardware_params
    costs, scores, seen = [], [], set()
    for inp, res in load_records(log):
        key = json.dumps(inp.trace, sort_keys=True)
        if res.error_no != 0 or key in seen:
            continue
        seen.add(key)
        sch = task.make_schedule()
        Trace.from_json(inp.trace).apply_to_schedule(sch)
        func = lower_state(sch.state, sch.args, simplify=False, check=False)
        # the prior exactly as the search computes it (with the measured memory balance)
        scores.append(float(program_features(func, hw.vector_unit_bytes, hw.num_cores)[-1]))
        costs.append(res.mean_cost)
    return np.array(costs), np.array(scores)


def ranking(costs: np.ndarray, scores: np.ndarray) -> dict:
    """Spearman rho and the fastest of the prior's top k over the fastest of all."""
    rank = lambda x: np.argsort(np.argsort(x, kind="stable"), kind="stable")  # noqa: E731
    rho = float(np.corrcoef(rank(-costs), rank(scores))[0, 1]) if len(costs) > 2 else 0.0
    order = np.argsort(-scores, kind="stable")
    top = {k: float(costs[order[:k]].min() / costs.min()) for k in (1, 5, 12)}
    return {"n": len(costs), "rho": rho, **{f"top{k}": v for k, v in top.items()}}


def main(argv: list[str] | None = None) -> int:
    """Collect (where no log exists) and print the table (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--log-dir", required=True, help="one records log per operator")
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated operator names")
    ap.add_argument("--seeds", default="0,1,2", help="search seeds per operator")
    ap.add_argument("--trials", type=int, default=64, help="trials per search")
    args = ap.parse_args(argv)
    names = args.ops.split(",")
    unknown = [n for n in names if n not in OPS]
    if unknown:
        ap.error(f"unknown operators {unknown}; known: {', '.join(OPS)}")
    os.makedirs(args.log_dir, exist_ok=True)
    rows = []
    print(f"{'operator':18} {'programs':>8} {'rho':>6} {'top1':>6} {'top5':>6} {'top12':>6}")
    for name in names:
        log = os.path.join(args.log_dir, f"{name}.json")
        if not os.path.exists(log):
            collect(name, log, [int(s) for s in args.seeds.split(",")], args.trials)
        row = ranking(*measured_programs(name, log))
        rows.append(row)
        print(
            f"{name:18} {row['n']:8d} {row['rho']:+6.2f} {row['top1']:6.2f} {row['top5']:6.2f}"
            f" {row['top12']:6.2f}",
            flush=True,
        )
    if rows:
        mean = lambda k: float(np.exp(np.mean(np.log([r[k] for r in rows]))))  # noqa: E731
        print(
            f"{'mean / geomean':18} {sum(r['n'] for r in rows):8d}"
            f" {np.mean([r['rho'] for r in rows]):+6.2f} {mean('top1'):6.2f}"
            f" {mean('top5'):6.2f} {mean('top12'):6.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
