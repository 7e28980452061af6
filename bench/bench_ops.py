"""Operator benchmark across families: ours (tuned) vs numpy, PyTorch and MetaSchedule.

    .venv/bin/python bench/bench_ops.py --ops layer_norm,softmax,gemv --threads 1   # reduced
    .venv/bin/python bench/bench_ops.py                                 # all, 64 trials, 1 thread
    .venv/bin/python bench/bench_ops.py --long --threads 1,2 --json bench/results/ops.json
    .venv/bin/python bench/bench_ops.py --torch-site /tmp/benchvenv/lib/python3.11/site-packages
    ANSOR_BENCH_TVM_PYTHON=/root/tvmvenv/bin/python .venv/bin/python bench/bench_ops.py

Sixteen operators in eleven families (GEMM, batch GEMM, strided / 1x1 / depthwise / grouped
/ dilated convolutions, GEMV, softmax, layer norm, RMS norm, pooling, row and column
reductions, an elementwise chain, a transpose), at shapes of ResNet-50, BERT-base and
LLM layers. Each is written once, against a ``(te, topi)`` pair, so the MetaSchedule side
(``bench/tvm_side/ms_tune.py`` with ``bench/ops_defs.py``, run with the python of an
apache-tvm venv) builds the very
same computation with ``tvm.te`` / ``tvm.topi``.

For each operator and thread count the auto-scheduler tunes once (64 trials; ``--long``:
256, with the best at 64 read as a checkpoint of the same search); its best program is
rebuilt, checked against numpy (float64) and re-timed outside the tuner
(``time_evaluator``, median). numpy, PyTorch (CPU, oneDNN; when importable, e.g. from a
separate venv's site-packages given by ``--torch-site``: never a dependency) and
MetaSchedule are timed in the same run with the same thread count. The report gives each
peer's time over ours per operator (> 1: we are faster), per family and the geometric
mean, the tuning wall time, and a streaming read-bandwidth measurement with the GEMV's
share of it (the GEMV reads its weight matrix once: it is memory-bound).

Numbers depend on the machine and its load (``uptime`` is printed): on a shared machine
every timing is noisy. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_tune import blas_limit, time_python  # noqa: E402
from ops_defs import BY_NAME, Op  # noqa: E402

import ansor_lab as tvm  # noqa: E402 - after the bench directory is importable
from ansor_lab import auto_scheduler, te, topi  # noqa: E402

MS_SIDE = os.path.join(HERE, "tvm_side", "ms_tune.py")


# --------------------------------------------------------------------------------------
# Timing


TIMING = {"number": 5, "repeat": 9, "min_repeat_ms": 40}


def inputs_for(tensors) -> list[np.ndarray]:
    """Random float32 inputs for the placeholders (uniform in [-1, 1))."""
    from ansor_lab.runtime.ndarray import aligned_copy  # noqa: PLC0415 - bench helper

    rng = np.random.default_rng(0)
    return [
        aligned_copy(rng.uniform(-1, 1, size=tuple(int(d) for d in t.shape)).astype("float32"))
        for t in tensors
        if isinstance(t.op, te.PlaceholderOp)
    ]


def time_ours(task, trace: dict, threads: int, op: Op) -> dict:
    """Rebuild the best trace, check it against numpy in float64, time it (median)."""
    from ansor_lab.schedule.trace import Trace  # noqa: PLC0415 - bench helper

    sch = task.make_schedule()
    Trace.from_json(trace).apply_to_schedule(sch)
    f = tvm.build(sch, list(task.args), target=task.target, num_threads=threads)
    ins = inputs_for(task.args)
    out = np.zeros(tuple(int(d) for d in task.args[-1].shape), "float32")
    f(*ins, out)
    want = op.numpy_fn(*[a.astype("float64") for a in ins])
    err = float(np.max(np.abs(out - want)) / max(1.0, float(np.max(np.abs(want)))))
    res = f.time_evaluator(**TIMING)(*ins, out)
    return {"ours_s": res.median, "rel_error": err}


def time_numpy(op: Op, tensors, threads: int) -> float:
    """numpy's median time with ``threads`` BLAS threads."""
    ins = inputs_for(tensors)
    limit, _ = blas_limit(threads)
    with limit:
        return statistics.median(time_python(lambda: op.numpy_fn(*ins), 9, 40))


def load_torch(site: str | None):
    """PyTorch if importable (from ``site`` when given), else None."""
    if site:
        sys.path.append(site)
    try:
        import torch  # noqa: PLC0415 - optional peer, never a dependency
    except ImportError:
        return None
    return torch


def time_torch(torch, op: Op, tensors, threads: int) -> float | None:
    """PyTorch's median time with ``threads`` threads (inference mode)."""
    if torch is None or op.torch_fn is None:
        return None
    torch.set_num_threads(threads)
    ins = [torch.from_numpy(a) for a in inputs_for(tensors)]
    with torch.inference_mode():
        return statistics.median(time_python(lambda: op.torch_fn(torch, *ins), 9, 40))


def stream_read_gbs(threads: int, mib: int = 9) -> float:
    """Read bandwidth (GB/s) over ``mib`` MiB, the GEMV's weights (the working set it
    streams when timed again and again): our read-sum kernel
    (``measure.bandwidth.measure_read_bandwidth``, see ``bench_bandwidth.py``), median."""
    from ansor_lab.measure.bandwidth import measure_read_bandwidth  # noqa: PLC0415

    return measure_read_bandwidth(mib << 20, threads, repeats=7).gbs


# --------------------------------------------------------------------------------------
# Tuning


class Snapshot(auto_scheduler.SearchCallback):
    """The best trace when the trial count first reaches each checkpoint."""

    def __init__(self, marks: list[int]) -> None:
        super().__init__()
        self.marks, self.best, self.snaps = sorted(marks), None, {}
        self.t0 = time.perf_counter()

    def on_new_best(self, task, inp, res, stats) -> None:
        """Remember the best trace so far."""
        self.best = inp.trace

    def on_batch(self, task, inputs, results, stats) -> None:
        """Snapshot at each checkpoint passed."""
        for m in self.marks:
            if m not in self.snaps and stats.trials >= m:
                self.snaps[m] = (self.best, time.perf_counter() - self.t0, stats.invalid)


def tune(op: Op, threads: int, budgets: list[int], log_dir: str) -> tuple:
    """(task, {budget: (trace, wall seconds, invalid dropped)}) of one search."""
    tensors = op.build(te, topi)
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG(tensors), target=f"llvm -num-cores={threads}"
    )
    snap = Snapshot(budgets)
    opts = auto_scheduler.TuningOptions(
        num_measure_trials=max(budgets),
        num_measures_per_round=16,
        verbose=0,
        measure_callbacks=[auto_scheduler.RecordToFile(os.path.join(log_dir, f"{op.name}.json"))],
        callbacks=[snap],
    )
    policy = auto_scheduler.SketchPolicy(task, seed=0, verbose=0)
    result = task.tune(opts, search_policy=policy)
    for b in budgets:  # a small space is exhausted before the budget: its best is final
        snap.snaps.setdefault(
            b, (result.best_trace, time.perf_counter() - snap.t0, result.stats.invalid)
        )
    return task, snap.snaps


def run_ms(op: Op, threads: int, budgets: list[int]) -> dict | None:
    """MetaSchedule's results by budget (a subprocess in the TVM venv), or None."""
    python = os.environ.get("ANSOR_BENCH_TVM_PYTHON")
    if not python:
        return None
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "ms.json")
        spec = {
            "workload": {"name": "op", "op": op.name},
            "budgets": budgets,
            "threads": threads,
            "work_dir": work,
        }
        side = os.pathsep.join([os.path.join(HERE, "tvm_side"), HERE])
        env = {**os.environ, "TVM_NUM_THREADS": str(threads), "PYTHONPATH": side}
        cmd = [python, MS_SIDE, "--spec", json.dumps(spec), "--out", out]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"  MetaSchedule failed on {op.name}: {proc.stderr[-400:]}", file=sys.stderr)
            return None
        with open(out) as fh:
            return json.load(fh)["checkpoints"]


# --------------------------------------------------------------------------------------
# Report


def geomean(xs: list[float]) -> float | None:
    """Geometric mean of the positive values (None when there are none)."""
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def _fmt(x, unit="") -> str:
    return "-" if x is None else f"{x:.2f}{unit}"


def report(rows: list[dict], bandwidth: dict) -> str:
    """The tables: per operator, per family, the geomeans, and the bandwidth line."""
    lines = []
    head = (
        f"{'operator':18} {'thr':>3} {'trials':>6} {'ours us':>9} {'numpy':>7} {'torch':>7}"
        f" {'MS':>7} {'GFLOPS':>7} {'tune s':>7} {'drop':>5} {'err':>8}"
    )
    lines += [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['op']:18} {r['threads']:>3} {r['trials']:>6} {r['ours_s'] * 1e6:9.1f}"
            f" {_fmt(r['vs_numpy'], 'x'):>7} {_fmt(r['vs_torch'], 'x'):>7}"
            f" {_fmt(r['vs_ms'], 'x'):>7} {r['gflops']:7.1f} {r['tune_s']:7.0f}"
            f" {r['invalid']:>5} {r['rel_error']:8.1e}"
        )
    lines.append("(numpy / torch / MS columns: the peer's time over ours; > 1 means we are faster)")
    keys = sorted({(r["threads"], r["trials"]) for r in rows})
    for thr, trials in keys:
        sel = [r for r in rows if r["threads"] == thr and r["trials"] == trials]
        lines.append(f"\nper family, {thr} thread(s), {trials} trials (geomean of peer/ours):")
        for fam in dict.fromkeys(r["family"] for r in sel):
            fr = [r for r in sel if r["family"] == fam]
            lines.append(
                f"  {fam:12} numpy {_fmt(geomean([r['vs_numpy'] for r in fr]), 'x'):>7}"
                f"  torch {_fmt(geomean([r['vs_torch'] for r in fr]), 'x'):>7}"
                f"  MS {_fmt(geomean([r['vs_ms'] for r in fr]), 'x'):>7}"
            )
        lines.append(
            f"  {'GEOMEAN':12} numpy {_fmt(geomean([r['vs_numpy'] for r in sel]), 'x'):>7}"
            f"  torch {_fmt(geomean([r['vs_torch'] for r in sel]), 'x'):>7}"
            f"  MS {_fmt(geomean([r['vs_ms'] for r in sel]), 'x'):>7}"
        )
    for thr, gbs in bandwidth.items():
        gemv = [r for r in rows if r["family"] == "gemv" and r["threads"] == thr]
        share = ", ".join(
            f"{r['trials']} trials: {768 * 3072 * 4 / r['ours_s'] / 1e9:.1f} GB/s "
            f"= {768 * 3072 * 4 / r['ours_s'] / 1e9 / gbs:.0%}"
            for r in gemv
        )
        lines.append(f"\nstreaming read bandwidth, {thr} thread(s): {gbs:.1f} GB/s; GEMV {share}")
    bad = [r["op"] for r in rows if not r["rel_error"] < 1e-3]
    lines.append("\ncorrectness: " + ("every program matches numpy" if not bad else f"FAIL {bad}"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ops", default=",".join(BY_NAME), help="comma-separated operator names")
    ap.add_argument("--threads", default="1", help="thread counts, e.g. 1,2")
    ap.add_argument("--long", action="store_true", help="tune 256 trials (64 is a checkpoint)")
    ap.add_argument("--trials", default=None, help="budgets, e.g. 16,64 (overrides --long)")
    ap.add_argument("--torch-site", default=None, help="site-packages holding torch")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args(argv)
    names = [n for n in args.ops.split(",") if n]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        ap.error(f"unknown operators {unknown}; choose from {sorted(BY_NAME)}")
    budgets = [int(x) for x in (args.trials or ("64,256" if args.long else "64")).split(",")]
    threads = [int(x) for x in args.threads.split(",")]
    torch = load_torch(args.torch_site)
    print(f"load: {os.getloadavg()}; torch: {getattr(torch, '__version__', 'not importable')}")
    rows, bandwidth = [], {}
    with tempfile.TemporaryDirectory() as logs:
        for thr in threads:
            bandwidth[thr] = stream_read_gbs(thr)
            for name in names:
                op = BY_NAME[name]
                task, snaps = tune(op, thr, budgets, logs)
                tensors = list(task.args)
                np_s = time_numpy(op, tensors, thr)
                torch_s = time_torch(torch, op, tensors, thr)
                ms = run_ms(op, thr, budgets)
                for b in budgets:
                    trace, wall, invalid = snaps[b]
                    ours = time_ours(task, trace, thr, op)
                    ms_s = (ms or {}).get(str(b), {}).get("best_s")
                    row = {
                        "op": name,
                        "family": op.family,
                        "threads": thr,
                        "trials": b,
                        **ours,
                        "gflops": op.flops / ours["ours_s"] / 1e9,
                        "numpy_s": np_s,
                        "torch_s": torch_s,
                        "ms_s": ms_s,
                        "vs_numpy": np_s / ours["ours_s"],
                        "vs_torch": torch_s / ours["ours_s"] if torch_s else None,
                        "vs_ms": ms_s / ours["ours_s"] if ms_s else None,
                        "tune_s": wall,
                        "invalid": invalid,
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    print(report(rows, bandwidth))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "bandwidth": bandwidth}, fh, indent=1)
    return 0 if all(r["rel_error"] < 1e-3 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
