"""Cost-model benchmark: how well RandomForestModel ranks programs it has not seen.

    .venv/bin/python bench/bench_cost_model.py                      # tune to collect, then fit
    .venv/bin/python bench/bench_cost_model.py --log a.json b.json  # reuse tuning logs
    .venv/bin/python bench/bench_cost_model.py --workloads matmul512,conv_last --trials 128

Records come from tuning logs (``--log``, e.g. those ``bench_tune.py --log-dir`` keeps) or
from tuning each ``--workloads`` entry for ``--trials`` trials here (``--sampler random``
measures uniformly random programs instead of the search's picks, a less clustered set).
Each record is replayed from the trace and DAG it stores, lowered, and turned into the
feature vector the search uses (``program_features``). Then, for ``--splits`` random
splits (``--test-frac`` held out per workload) and for a chronological split (train on
the first records of each log, test on the last ones: what the search faces), the model
is fit on the training records of all workloads together (throughput normalised per
task, as in the search) and scored on the held-out records of each workload by pairwise
ranking accuracy: the share of pairs of programs (of one workload, different measured
times) that the model orders like the measurements. Failed records count as throughput 0
in training and are left out of the scoring (``--score-errors`` keeps them).
Also printed: top-10% recall (how many of the truly fastest held-out programs the model
puts in its own top 10%) and the forest's top feature importances.
Target: pairwise accuracy >= 0.8 on matmul and conv2d.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_tune import WORKLOADS  # noqa: E402

import ansor_lab as tvm  # noqa: E402
from ansor_lab import auto_scheduler  # noqa: E402
from ansor_lab.schedule.lower import lower_state  # noqa: E402
from ansor_lab.search.task import schedule_from_record  # noqa: E402


def collect(names: list[str], trials: int, threads: int, sampler: str, log_dir: str) -> list:
    """Tune each workload to fill a log; returns the log paths."""
    logs = []
    for name in names:
        wl = WORKLOADS[name]
        task = auto_scheduler.SearchTask(
            func=wl.func, args=wl.args, target=tvm.Target(f"llvm -num-cores={threads}")
        )
        log = os.path.join(log_dir, f"cm_{name}_{sampler}_{trials}.json")
        if os.path.exists(log):
            os.remove(log)
        policy = None
        if sampler == "random":
            policy = auto_scheduler.SketchPolicy(
                task, program_cost_model=auto_scheduler.RandomModel(0), verbose=0
            )
        t0 = time.perf_counter()
        task.tune(
            auto_scheduler.TuningOptions(
                num_measure_trials=trials,
                num_threads=threads,
                verbose=0,
                measure_callbacks=[auto_scheduler.RecordToFile(log)],
            ),
            search_policy=policy,
        )
        print(
            f"  tuned {name}: {trials} trials in {time.perf_counter() - t0:.0f} s -> {log}",
            flush=True,
        )
        logs.append(log)
    return logs


def featurize(logs: list[str]) -> tuple[dict, dict]:
    """{workload key: [(order, features, cost)]} from the records of the logs, and
    {workload key: [analytic prior score]} in the same order."""
    data: dict = {}
    priors: dict = {}
    for path in logs:
        # a glob over a bench log dir also matches MetaSchedule's output JSON: a file with no
        # record of ours is skipped with one line instead of a warning per line
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            records = list(auto_scheduler.load_records(path))
        if not records:
            print(f"  skipped {path}: no ansor_lab records in it")
            continue
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        for k, (inp, res) in enumerate(records):
            try:
                sch = schedule_from_record(inp)
                func = lower_state(sch.state, sch.args, simplify=False)
                target = tvm.Target(inp.target)
                feats = auto_scheduler.program_features(func, target.vector_bytes, target.num_cores)
                prior = float(feats[-1])  # the analytic prior's score is the last feature
            except Exception as err:  # noqa: BLE001 - a record of an older version: skip it
                print(f"  skipped a record of {path}: {err}")
                continue
            cost = res.mean_cost if res.error_no == 0 else float("inf")
            data.setdefault(inp.workload_key, []).append((k, feats, cost))
            priors.setdefault(inp.workload_key, []).append(prior)
    return data, priors


def top_recall(pred: np.ndarray, truth: np.ndarray, frac: float = 0.1) -> float:
    """Share of the truly best ``frac`` that the model also ranks in its best ``frac``."""
    k = max(1, int(round(len(truth) * frac)))
    best = set(np.argsort(-truth)[:k])
    picked = set(np.argsort(-pred)[:k])
    return len(best & picked) / k


def evaluate(data: dict, split_fn, score_errors: bool, seed: int) -> tuple[dict, object]:
    """Fit on the training part of every workload; score each workload's test part."""
    train_f, train_c, train_g, tests = [], [], [], {}
    for key, rows in data.items():
        train, test = split_fn(rows)
        for _, f, c in train:
            train_f.append(f)
            train_c.append(c)
            train_g.append(key)
        tests[key] = test
    model = auto_scheduler.RandomForestModel(seed=seed)
    model.update(train_f, train_c, train_g)
    out = {}
    for key, test in tests.items():
        if not score_errors:
            test = [r for r in test if np.isfinite(r[2])]
        if len(test) < 3:
            continue
        pred = model.predict([f for _, f, _ in test])
        truth = np.array([1.0 / c if np.isfinite(c) else 0.0 for _, _, c in test])
        out[key] = {
            "pairwise": auto_scheduler.pairwise_accuracy(pred, truth),
            "top10_recall": top_recall(pred, truth),
            "n_test": len(test),
            "n_train": len(train_f),
        }
    return out, model


def prior_accuracy(rows: list, scores: list) -> float:
    """Pairwise ranking accuracy of the analytic prior on a workload's valid records."""
    ok = [(s, 1.0 / c) for (_, _, c), s in zip(rows, scores) if np.isfinite(c)]
    if len(ok) < 2:
        return float("nan")
    return auto_scheduler.pairwise_accuracy(
        np.array([s for s, _ in ok]), np.array([t for _, t in ok])
    )


def short(key: str) -> str:
    """A readable name for a workload key."""
    for name, wl in WORKLOADS.items():
        if key == json.dumps([wl.func.__name__, *wl.args]):
            return name
    return key[:40]


def main(argv: list[str] | None = None) -> int:
    """Collect, featurize, fit, score, print."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log", nargs="*", default=[], help="records files to use (no tuning)")
    p.add_argument(
        "--workloads",
        default="matmul512,conv_last",
        help=f"what to tune when no --log is given ({','.join(WORKLOADS)})",
    )
    p.add_argument("--trials", type=int, default=128, help="trials per workload when tuning")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--sampler",
        choices=("search", "random"),
        default="search",
        help="tune with the search (model-guided) or measure random programs",
    )
    p.add_argument("--splits", type=int, default=5, help="random splits to average over")
    p.add_argument("--test-frac", type=float, default=0.3)
    p.add_argument(
        "--score-errors", action="store_true", help="also score failed records (throughput 0)"
    )
    p.add_argument("--top", type=int, default=15, help="feature importances to print")
    p.add_argument("--log-dir", help="where tuning logs go (default: a temp dir)")
    p.add_argument("--json", help="write the numbers to this JSON file")
    args = p.parse_args(argv)

    logs = list(args.log)
    if not logs:
        names = [w.strip() for w in args.workloads.split(",") if w.strip()]
        log_dir = args.log_dir or tempfile.mkdtemp(prefix="bench_cm_")
        os.makedirs(log_dir, exist_ok=True)
        print(f"collecting: tuning {names}, {args.trials} trials each ({args.sampler})")
        logs = collect(names, args.trials, args.threads, args.sampler, log_dir)
    t0 = time.perf_counter()
    data, priors = featurize(logs)
    print(
        f"featurized {sum(len(v) for v in data.values())} records of {len(data)} "
        f"workload(s) in {time.perf_counter() - t0:.1f} s"
    )
    for key, rows in data.items():
        ok = [r for r in rows if np.isfinite(r[2])]
        gf = "-"
        if ok:
            costs = sorted(r[2] for r in ok)
            gf = f"{costs[0] * 1e3:.2f} .. {costs[-1] * 1e3:.1f} ms"
        print(
            f"  {short(key):<12} {len(rows):>5} records, {len(rows) - len(ok)} failed, times {gf}"
        )

    results: dict = {}
    random_runs = []
    for s in range(args.splits):
        rng = np.random.default_rng(s)

        def rsplit(rows, rng=rng):
            idx = rng.permutation(len(rows))
            n_test = max(1, int(round(len(rows) * args.test_frac)))
            return [rows[i] for i in idx[n_test:]], [rows[i] for i in idx[:n_test]]

        out, model = evaluate(data, rsplit, args.score_errors, seed=s)
        random_runs.append(out)

    def csplit(rows):
        n_test = max(1, int(round(len(rows) * args.test_frac)))
        rows = sorted(rows, key=lambda r: r[0])
        return rows[:-n_test], rows[-n_test:]

    chrono, _ = evaluate(data, csplit, args.score_errors, seed=0)

    print(f"\npairwise ranking accuracy on held-out records ({args.test_frac:.0%} per workload)")
    print(
        f"{'workload':<13}{'n test':>7}{'random split':>20}{'top-10% recall':>16}"
        f"{'chronological':>15}{'prior alone':>13}{'verdict':>9}"
    )
    verdicts = []
    for key in data:
        accs = [r[key]["pairwise"] for r in random_runs if key in r]
        recs = [r[key]["top10_recall"] for r in random_runs if key in r]
        if not accs:
            continue
        mean = statistics.fmean(accs)
        sd = statistics.pstdev(accs) if len(accs) > 1 else 0.0
        ch = chrono.get(key, {}).get("pairwise", float("nan"))
        prior_acc = prior_accuracy(data[key], priors[key])
        verdict = "PASS" if mean >= 0.8 else "FAIL"
        verdicts.append((short(key), verdict, mean))
        print(
            f"{short(key):<13}{random_runs[0][key]['n_test']:>7}"
            f"{mean:>12.3f} ± {sd:.3f}{statistics.fmean(recs):>16.2f}{ch:>15.3f}"
            f"{prior_acc:>13.3f}{verdict:>9}"
        )
        results[short(key)] = {
            "pairwise_mean": mean,
            "pairwise_sd": sd,
            "splits": accs,
            "top10_recall": statistics.fmean(recs),
            "chronological": ch,
            "prior_alone": prior_acc,
        }
    print(
        "random split: mean ± sd over splits; chronological: train on the first "
        f"{1 - args.test_frac:.0%} of each log, test on the rest;\nprior alone: the analytic "
        "prior (search/prior.py, what ranks the first batch) on all records, no training"
    )

    full = auto_scheduler.RandomForestModel(seed=0)
    every = [(f, c, key) for key, rows in data.items() for _, f, c in rows]
    full.update([f for f, _, _ in every], [c for _, c, _ in every], [k for _, _, k in every])
    imps = full.feature_importances(auto_scheduler.FEATURE_NAMES)[: args.top]
    print(f"\ntop {args.top} feature importances (forest fit on all records)")
    for name, v in imps:
        print(f"  {name:<28}{v:.3f}")
    print()
    for name, verdict, mean in verdicts:
        print(f"{verdict:<5} pairwise accuracy >= 0.8 on {name}: {mean:.3f}")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(
                {"logs": logs, "results": results, "importances": [(n, float(v)) for n, v in imps]},
                fh,
                indent=2,
            )
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
