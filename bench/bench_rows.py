"""Row and column reductions, several seeds: the worst seed's program against the peers.

    .venv/bin/python bench/bench_rows.py --torch-site /tmp/torchvenv/lib/python3.11/site-packages
    .venv/bin/python bench/bench_rows.py --ops softmax_rows --seeds 0,1,2,3,4 --trials 64
    .venv/bin/python bench/bench_rows.py --ops argmax --seeds 0,1,2    # bench_unseen's too

For each operator of ``bench_ops`` (softmax, layer norm, RMS norm, row and column sums by
default; ``bench_unseen``'s operators by name too) the auto-scheduler tunes once per seed
(one thread, ``--trials`` trials); each seed's best program is rebuilt and checked against
numpy (float64). Then every program, numpy and PyTorch (``--torch-site``, one thread) are
timed **interleaved**, round after round, each by Python calls, and each keeps its
fastest round: on a shared machine, load that comes and goes hits them all alike, and
the ratio of two minima is steadier than that of two medians taken minutes apart. The
table gives each seed's time, the worst seed over numpy and over PyTorch (> 1: ours
faster), the sketch each seed's best program came from, and how many of the measured
programs came from the fused-row sketch (``fuse rows``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_ops import inputs_for, load_torch, output_for  # noqa: E402
from bench_unseen import BY_NAME as UNSEEN  # noqa: E402
from ops_defs import BY_NAME  # noqa: E402

import ansor_lab as tvm  # noqa: E402 - after the bench directory is importable
from ansor_lab import auto_scheduler, te, topi  # noqa: E402
from ansor_lab.measure.records import load_records  # noqa: E402

DEFAULT_OPS = "softmax_rows,layer_norm_bert,rms_norm_llm,row_sum,col_sum"


def tune(op, seed: int, trials: int) -> dict:
    """One search: the best trace, its sketch, and the sketches of all measured programs."""
    tensors = op.build(te, topi)
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG(tensors), target="llvm -num-cores=1"
    )
    with tempfile.TemporaryDirectory() as logs:
        log = os.path.join(logs, "log.json")
        opts = auto_scheduler.TuningOptions(
            num_measure_trials=trials,
            num_measures_per_round=16,
            verbose=0,
            measure_callbacks=[auto_scheduler.RecordToFile(log)],
        )
        policy = auto_scheduler.SketchPolicy(task, seed=seed, verbose=0)
        t0 = time.perf_counter()
        result = task.tune(opts, search_policy=policy)
        wall = time.perf_counter() - t0
        records = list(load_records(log))
    names = [s.describe() for s in policy.sketches]
    fused = {k for k, n in enumerate(names) if "fuse rows" in n}
    measured = [inp.sketch for inp, _ in records]
    best = min(
        ((inp, res) for inp, res in records if res.error_no == 0),
        key=lambda r: float(np.median(r[1].costs)),
    )
    return {
        "task": task,
        "trace": result.best_trace,
        "sketch": names[best[0].sketch] if best[0].sketch is not None else "?",
        "fused_measured": sum(1 for s in measured if s in fused),
        "measured": len(measured),
        "wall": wall,
    }


def build(op, run: dict):
    """The seed's best program, built and checked against numpy (float64)."""
    from ansor_lab.schedule.trace import Trace  # noqa: PLC0415 - bench helper

    task = run["task"]
    sch = task.make_schedule()
    Trace.from_json(run["trace"]).apply_to_schedule(sch)
    f = tvm.build(sch, list(task.args), target=task.target, num_threads=1)
    ins = inputs_for(task.args)
    out = output_for(task.args)
    f(*ins, out)
    want = op.numpy_fn(*[a.astype("float64") for a in ins])
    err = float(np.max(np.abs(out - want)) / max(1.0, float(np.max(np.abs(want)))))
    return (lambda: f(*ins, out)), err


def interleaved_minima(fns: dict, rounds: int, min_ms: float = 0.5) -> dict:
    """Each function's fastest mean call time over ``rounds`` interleaved rounds."""
    best = dict.fromkeys(fns, float("inf"))
    reps = {}
    for k, fn in fns.items():  # calls per round: at least ``min_ms`` of work
        fn()
        t0 = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t0, 1e-7)
        reps[k] = max(1, int(min_ms / 1e3 / one))
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(reps[k]):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t0) / reps[k])
    return best


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ops", default=DEFAULT_OPS)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--torch-site", default=None)
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    torch = load_torch(args.torch_site)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"load: {os.getloadavg()}; torch: {getattr(torch, '__version__', 'not importable')}")
    rows, ok = [], True
    for name in args.ops.split(","):
        op = BY_NAME.get(name) or UNSEEN[name]
        runs = {s: tune(op, s, args.trials) for s in seeds}
        fns = {}
        for s, run in runs.items():
            fns[s], run["err"] = build(op, run)
            ok &= run["err"] < 1e-3
        np_ins = inputs_for(runs[seeds[0]]["task"].args)
        fns["numpy"] = lambda np_ins=np_ins, op=op: op.numpy_fn(*np_ins)
        if torch is not None and op.torch_fn is not None:
            t_ins = [torch.from_numpy(a) for a in inputs_for(runs[seeds[0]]["task"].args)]
            fns["torch"] = lambda t_ins=t_ins, op=op: op.torch_fn(torch, *t_ins)
            with torch.inference_mode():
                best = interleaved_minima(fns, args.rounds)
        else:
            best = interleaved_minima(fns, args.rounds)
        worst = max(best[s] for s in seeds)
        t = best.get("torch")
        rows.append((name, runs, best, worst, t))
        print(
            f"{name}: "
            + ", ".join(f"seed {s} {best[s] * 1e6:.1f} us" for s in seeds)
            + f"; numpy {best['numpy'] * 1e6:.1f} us"
            + (f"; torch {t * 1e6:.1f} us" if t else ""),
            flush=True,
        )
    print(
        f"\n| operator | {' | '.join(f'seed {s} us' for s in seeds)} | numpy us | torch us "
        "| worst seed vs numpy | vs torch | fused-row measured | best sketch (per seed) |"
    )
    print("|---" * (len(seeds) + 7) + "|")
    for name, runs, best, worst, t in rows:
        ratio = f"{t / worst:.2f}x" if t else "-"
        fused = ", ".join(f"{runs[s]['fused_measured']}/{runs[s]['measured']}" for s in seeds)
        sk = " / ".join(runs[s]["sketch"] for s in seeds)
        times = " | ".join(f"{best[s] * 1e6:.1f}" for s in seeds)
        n = best["numpy"]
        print(
            f"| {name} | {times} | {n * 1e6:.1f} | {t * 1e6 if t else 0:.1f} "
            f"| {n / worst:.2f}x | {ratio} | {fused} | {sk} |"
        )
    print("\ncorrectness: " + ("every program matches numpy" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
