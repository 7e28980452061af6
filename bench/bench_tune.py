"""Auto-scheduler benchmark: ours vs numpy (OpenBLAS) vs TVM MetaSchedule, in one run.

    .venv/bin/python bench/bench_tune.py --quick                       # smoke check, ~2 min
    .venv/bin/python bench/bench_tune.py --workloads matmul1024 --trials 64,256 --threads 1
    ANSOR_BENCH_TVM_PYTHON=/root/tvmvenv/bin/python .venv/bin/python bench/bench_tune.py \
        --workloads matmul512,matmul1024,chain512,conv_last --trials 64,256 --threads 1,2 \
        --json bench/results/tune.json

For each workload and thread count the auto-scheduler tunes once with a budget of the
largest ``--trials``; the smaller budgets are checkpoints of that same search (a round is
64 programs and the first rounds do not depend on the final budget, so "64 trials" is
exactly what a 64-trial search would measure; ``--separate`` runs one search per budget
instead). At each checkpoint it reports:

- best GFLOPS of the best program, re-timed outside the tuner (a fresh build,
  ``time_evaluator(number=5, repeat=15, min_repeat_ms=50)``, median) and checked against
  numpy;
- tuning wall time (sketches, workers and all), the search time (``stats.search_time``:
  sampling, evolution, cost model) and the measure time (build + run in the workers), and
  the search overhead = share of the wall time spent outside build + run;
- numpy's GFLOPS with the same thread count (threadpoolctl; the conv as im2col + sgemm);
- with ``ANSOR_BENCH_TVM_PYTHON`` set to a python that has apache-tvm (a separate venv,
  never a dependency), TVM MetaSchedule's best GFLOPS (re-timed the same way) and wall
  time for the same workload, budget and threads, run as a subprocess
  (``bench/tvm_side/ms_tune.py``, JSON in and out).

Targets (PASS/FAIL at the end): matmul1024 at 256 trials, 1 thread >= 0.9x numpy;
>= 1.2x MetaSchedule at equal trials; our wall time for 256 trials <= 0.5x
MetaSchedule's; search overhead < 20% of the wall time.
Not part of the test suite: numbers depend on the machine and its load (see ``uptime``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, topi

HERE = os.path.dirname(os.path.abspath(__file__))
TVM_SIDE = os.path.join(HERE, "tvm_side", "ms_tune.py")


# --------------------------------------------------------------------------------------
# Workloads (the TVM side writes the same ones with tvm.te, by name and parameters)


@auto_scheduler.register_workload
def bench_matmul(n: int):
    """C = A @ B, n x n float32."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]


@auto_scheduler.register_workload
def bench_chain(n: int):
    """C = A @ B; D = exp(C); F = D @ E, n x n float32."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    E = te.placeholder((n, n), name="E")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, n), lambda i, j: te.exp(C[i, j]), name="D")
    k2 = te.reduce_axis((0, n), name="k2")
    F = te.compute((n, n), lambda i, j: te.sum(D[i, k2] * E[k2, j], axis=k2), name="F")
    return [A, B, E, F]


@auto_scheduler.register_workload
def bench_conv_bias_relu(n: int, c: int, hw: int, k: int, r: int, pad: int):
    """conv2d NCHW (stride 1) + per-channel bias + relu."""
    data = te.placeholder((n, c, hw, hw), name="data")
    kernel = te.placeholder((k, c, r, r), name="kernel")
    bias = te.placeholder((k,), name="bias")
    conv = topi.nn.conv2d_nchw(data, kernel, 1, pad, 1, out_dtype="float32")
    out = te.compute(conv.shape,
                     lambda b, f, y, x: te.max(conv[b, f, y, x] + bias[f], te.const(0.0)),
                     name="T_relu")
    return [data, kernel, bias, out]


def np_conv_im2col(data, kernel, bias, pad):
    """conv2d NCHW stride 1 as im2col + one sgemm, + bias + relu (numpy's best effort)."""
    n, c, h, w = data.shape
    k, _, r, s = kernel.shape
    oh, ow = h + 2 * pad - r + 1, w + 2 * pad - s + 1
    x = np.pad(data, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    v = np.lib.stride_tricks.sliding_window_view(x, (r, s), axis=(2, 3))  # n c oh ow r s
    cols = np.ascontiguousarray(v.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * r * s, oh * ow)
    wmat = kernel.reshape(k, c * r * s)
    out = np.matmul(wmat, cols).reshape(n, k, oh, ow)
    out += bias[None, :, None, None]
    np.maximum(out, 0, out=out)
    return out


def _chain_np(a, b, e):
    return np.exp(a @ b) @ e


@dataclass
class Workload:
    """One benchmark workload: our task's function and args, numpy's version, TVM spec."""

    name: str
    func: Callable
    args: tuple
    numpy_fn: Callable  # inputs -> output
    tvm_spec: dict


CONV_LAST = (1, 512, 7, 512, 3, 1)  # ResNet-50's last 3x3 conv: N, C, H=W, K, R=S, pad
WORKLOADS = {
    "matmul512": Workload("matmul512", bench_matmul, (512,), np.matmul,
                          {"name": "matmul", "n": 512}),
    "matmul1024": Workload("matmul1024", bench_matmul, (1024,), np.matmul,
                           {"name": "matmul", "n": 1024}),
    "chain512": Workload("chain512", bench_chain, (512,), _chain_np,
                         {"name": "chain", "n": 512}),
    "conv_last": Workload("conv_last", bench_conv_bias_relu, CONV_LAST,
                          lambda d, k, b: np_conv_im2col(d, k, b, CONV_LAST[5]),
                          {"name": "conv_bias_relu", "n": 1, "c": 512, "hw": 7, "k": 512,
                           "r": 3, "pad": 1}),
}


# --------------------------------------------------------------------------------------
# Timing helpers


def blas_limit(threads: int):
    """Limit numpy's BLAS to ``threads`` threads (and say which BLAS it is)."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return nullcontext(), "threadpoolctl missing: numpy uses its default thread count"
    blas = [f"{i.get('internal_api')} {i.get('version')}" for i in threadpool_info()
            if i.get("user_api") == "blas"]
    return threadpool_limits(limits=threads, user_api="blas"), ", ".join(blas) or "BLAS"


def time_python(fn: Callable[[], object], repeat: int, min_repeat_ms: float) -> list[float]:
    """Seconds per call, one entry per repeat (each repeat lasts >= min_repeat_ms)."""
    fn()
    t0 = time.perf_counter()
    fn()
    number = max(1, int(min_repeat_ms / 1e3 / max(time.perf_counter() - t0, 1e-7)) + 1)
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t0) / number)
    return out


def random_inputs(task) -> list[np.ndarray]:
    """Inputs for the task's placeholders and zeroed outputs, in argument order."""
    rng = np.random.default_rng(0)
    arrays = []
    for t in task.args:
        shape = tuple(int(d) for d in t.shape)
        arrays.append(rng.uniform(-1, 1, size=shape).astype("float32"))
    return arrays


def numpy_gflops(wl: Workload, task, threads: int, timing: dict) -> dict:
    """numpy's time for the workload with ``threads`` BLAS threads."""
    arrays = random_inputs(task)
    inputs = arrays[:-1]
    limit, _ = blas_limit(threads)
    with limit:
        costs = time_python(lambda: wl.numpy_fn(*inputs), timing["repeat"],
                            timing["min_repeat_ms"])
    med = statistics.median(costs)
    return {"numpy_s": med, "numpy_gflops": task.flop_ct / med / 1e9}


def retime(task, trace: dict, threads: int, timing: dict, wl: Workload) -> dict:
    """Rebuild a trace and time it outside the tuner; check it against numpy."""
    from ansor_lab.schedule.trace import Trace

    sch = task.make_schedule()
    Trace.from_json(trace).apply_to_schedule(sch)
    f = tvm.build(sch, list(task.args), target=task.target, num_threads=threads)
    arrays = random_inputs(task)
    arrays[-1][...] = 0
    f(*arrays)
    want = wl.numpy_fn(*[a.astype("float64") for a in arrays[:-1]])
    err = float(np.max(np.abs(arrays[-1] - want)) / max(1.0, float(np.max(np.abs(want)))))
    res = f.time_evaluator(number=timing["number"], repeat=timing["repeat"],
                           min_repeat_ms=timing["min_repeat_ms"])(*arrays)
    return {"best_s": res.median, "best_gflops": task.flop_ct / res.median / 1e9,
            "rel_error": err, "program": sch}


# --------------------------------------------------------------------------------------
# Our tuner


class Checkpoints(auto_scheduler.SearchCallback):
    """Snapshot the best trace and the clocks when the trial count reaches a checkpoint."""

    def __init__(self, marks: list[int], t0: float) -> None:
        super().__init__()
        self.marks = sorted(marks)
        self.t0 = t0
        self.best_trace = None
        self.best_cost = math.inf
        self.snaps: dict[int, dict] = {}

    def on_new_best(self, task, inp, res, stats) -> None:
        """Remember the best trace so far."""
        self.best_trace = inp.trace
        self.best_cost = stats.best_cost

    def on_batch(self, task, inputs, results, stats) -> None:
        """Take a snapshot at each checkpoint passed."""
        for m in self.marks:
            if m not in self.snaps and stats.trials >= m:
                self.snaps[m] = {
                    "trials": stats.trials, "wall_s": time.perf_counter() - self.t0,
                    "search_s": stats.search_time, "measure_s": stats.measure_time,
                    "tuner_best_gflops": stats.best_gflops, "errors": stats.errors,
                    "trace": self.best_trace,
                }


def tune_ours(wl: Workload, budgets: list[int], threads: int, round_size: int,
              log_dir: str, verbose: int) -> tuple:
    """One search up to max(budgets); (task, {budget: snapshot}, log file)."""
    target = tvm.Target(f"llvm -num-cores={threads}")
    task = auto_scheduler.SearchTask(func=wl.func, args=wl.args, target=target)
    log = os.path.join(log_dir, f"{wl.name}_t{threads}_n{max(budgets)}.json")
    if os.path.exists(log):
        os.remove(log)
    t0 = time.perf_counter()
    cp = Checkpoints(budgets, t0)
    opts = auto_scheduler.TuningOptions(
        num_measure_trials=max(budgets), num_measures_per_round=round_size,
        num_threads=threads, verbose=verbose, callbacks=[cp],
        measure_callbacks=[auto_scheduler.RecordToFile(log)])
    result = task.tune(opts)
    wall = time.perf_counter() - t0
    final = max(budgets)
    if final not in cp.snaps:  # stopped early / space exhausted: the end is the checkpoint
        st = result.stats
        cp.snaps[final] = {"trials": st.trials, "wall_s": wall, "search_s": st.search_time,
                           "measure_s": st.measure_time, "tuner_best_gflops": st.best_gflops,
                           "errors": st.errors, "trace": result.best_trace}
    cp.snaps[final]["wall_s"] = wall  # includes closing the workers
    return task, cp.snaps, log


# --------------------------------------------------------------------------------------
# TVM MetaSchedule (subprocess in its own venv)


def tune_tvm(tvm_python: str, wl: Workload, budgets: list[int], threads: int,
             work_dir: str, timing: dict, round_size: int, timeout: float) -> dict:
    """Run ms_tune.py in the TVM venv; {budget: {best_gflops, wall_s, ...}} or {error}."""
    spec = {"workload": wl.tvm_spec, "budgets": budgets, "threads": threads,
            "work_dir": os.path.join(work_dir, f"ms_{wl.name}_t{threads}_n{max(budgets)}"),
            "timing": timing, "round_size": round_size}
    out = os.path.join(work_dir, f"ms_{wl.name}_t{threads}_n{max(budgets)}.out.json")
    env = dict(os.environ)
    env["TVM_NUM_THREADS"] = str(threads)
    env["OMP_NUM_THREADS"] = str(threads)
    env["PYTHONPATH"] = os.path.dirname(TVM_SIDE) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [tvm_python, TVM_SIDE, "--spec", json.dumps(spec), "--out", out]
    try:
        proc = subprocess.run(cmd, env=env, timeout=timeout, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return {"error": f"MetaSchedule took longer than {timeout:.0f} s"}
    if proc.returncode != 0 or not os.path.exists(out):
        tail = (proc.stdout[-1500:] + proc.stderr[-3000:]).strip()
        return {"error": f"ms_tune.py exited with {proc.returncode}: {tail}"}
    with open(out) as fh:
        data = json.load(fh)
    return {int(k): v for k, v in data["checkpoints"].items()} | {"info": data.get("info", {})}


# --------------------------------------------------------------------------------------
# Report


def fmt(x, spec=".1f", none="-"):
    """Format a number or a dash."""
    return none if x is None or (isinstance(x, float) and not math.isfinite(x)) \
        else format(x, spec)


def print_table(rows: list[dict]) -> None:
    """The results table."""
    head = (f"{'workload':<11}{'thr':>4}{'trials':>7}{'ours GF':>9}{'wall s':>8}"
            f"{'search s':>9}{'meas s':>8}{'ovh %':>7}{'numpy GF':>10}{'/numpy':>8}"
            f"{'MS GF':>8}{'MS wall':>9}{'/MS':>7}{'wall/MS':>9}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['workload']:<11}{r['threads']:>4}{r['trials']:>7}"
              f"{fmt(r['ours_gflops']):>9}{fmt(r['wall_s'], '.0f'):>8}"
              f"{fmt(r['search_s'], '.0f'):>9}{fmt(r['measure_s'], '.0f'):>8}"
              f"{fmt(r['overhead_pct'], '.0f'):>7}{fmt(r['numpy_gflops']):>10}"
              f"{fmt(r['vs_numpy'], '.2f'):>8}{fmt(r.get('ms_gflops')):>8}"
              f"{fmt(r.get('ms_wall_s'), '.0f'):>9}{fmt(r.get('vs_ms'), '.2f'):>7}"
              f"{fmt(r.get('wall_vs_ms'), '.2f'):>9}")
    print("ours GF: best program re-timed (median of 15 repeats); ovh %: share of wall time "
          "outside build+run; /numpy, /MS: GFLOPS ratios; wall/MS: our wall time over MS's")


def verdicts(rows: list[dict]) -> list[tuple[str, str, str]]:
    """(target, PASS/FAIL/n.a., detail) for each target."""
    out = []
    head = [r for r in rows if r["workload"] == "matmul1024" and r["threads"] == 1
            and r["trials"] == 256]
    if head:
        r = head[0]
        ok = r["vs_numpy"] >= 0.9
        out.append(("matmul1024 @256, 1 thread >= 0.9x numpy", "PASS" if ok else "FAIL",
                    f"{r['ours_gflops']:.1f} vs {r['numpy_gflops']:.1f} GFLOPS "
                    f"({r['vs_numpy']:.2f}x)"))
    else:
        out.append(("matmul1024 @256, 1 thread >= 0.9x numpy", "n.a.", "not run"))
    ms_rows = [r for r in rows if r.get("vs_ms") is not None]
    if ms_rows:
        bad = [r for r in ms_rows if r["vs_ms"] < 1.2]
        detail = ", ".join(f"{r['workload']}/t{r['threads']}/{r['trials']}: {r['vs_ms']:.2f}x"
                           for r in ms_rows)
        out.append((">= 1.2x MetaSchedule at equal trials", "FAIL" if bad else "PASS", detail))
    else:
        out.append((">= 1.2x MetaSchedule at equal trials", "n.a.",
                    "set ANSOR_BENCH_TVM_PYTHON to compare"))
    w_rows = [r for r in rows if r.get("wall_vs_ms") is not None and r["trials"] == 256]
    if w_rows:
        bad = [r for r in w_rows if r["wall_vs_ms"] > 0.5]
        detail = ", ".join(f"{r['workload']}/t{r['threads']}: {r['wall_vs_ms']:.2f}x"
                           for r in w_rows)
        out.append(("wall time @256 <= 0.5x MetaSchedule's", "FAIL" if bad else "PASS", detail))
    else:
        out.append(("wall time @256 <= 0.5x MetaSchedule's", "n.a.", "no 256-trial MS run"))
    bad = [r for r in rows if r["overhead_pct"] >= 20]
    detail = ", ".join(f"{r['workload']}/t{r['threads']}/{r['trials']}: "
                       f"{r['overhead_pct']:.0f}%" for r in rows)
    out.append(("search overhead < 20% of wall time", "FAIL" if bad else "PASS", detail))
    return out


def load_average() -> str:
    """The 1/5/15-minute load averages."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> int:
    """Tune, re-time, compare, print."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default="matmul512,matmul1024,chain512,conv_last",
                   help=f"comma-separated, from {','.join(WORKLOADS)}")
    p.add_argument("--trials", default="64,256", help="comma-separated trial budgets")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--quick", action="store_true",
                   help="tiny budget (8 trials, 1 thread, short timing) for a smoke check")
    p.add_argument("--separate", action="store_true",
                   help="one search per budget instead of checkpoints of one search")
    p.add_argument("--no-tvm", action="store_true", help="skip MetaSchedule even if configured")
    p.add_argument("--tvm-timeout", type=float, default=3 * 3600,
                   help="seconds allowed for one MetaSchedule run")
    p.add_argument("--print-best", action="store_true",
                   help="print each best program's trace and loop IR")
    p.add_argument("--log-dir", help="keep tuning logs here (default: a temp dir)")
    p.add_argument("--verbose", type=int, default=0, help="tuner verbosity (1: progress bar)")
    p.add_argument("--json", help="write all numbers to this JSON file")
    args = p.parse_args(argv)

    names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")
    budgets = sorted({int(x) for x in args.trials.split(",")})
    threads_list = [int(x) for x in args.threads.split(",")]
    timing = {"number": 5, "repeat": 15, "min_repeat_ms": 50}
    round_size = 64
    if args.quick:
        budgets = [8] if args.trials == "64,256" else budgets
        threads_list = [1] if args.threads == "1,2" else threads_list
        timing = {"number": 2, "repeat": 3, "min_repeat_ms": 10}
    round_size = min([round_size] + budgets)
    for b in budgets:
        if b % round_size:
            p.error(f"budgets must be multiples of the round size {round_size}: {budgets}")
    tvm_python = None if args.no_tvm else os.environ.get("ANSOR_BENCH_TVM_PYTHON")

    work_dir = args.log_dir or tempfile.mkdtemp(prefix="bench_tune_")
    os.makedirs(work_dir, exist_ok=True)
    _, blas = blas_limit(1)
    print(f"ansor_lab {tvm.__version__} | python {platform.python_version()} | numpy "
          f"{np.__version__} ({blas}) | cpu {tvm.Target('llvm').mcpu} | "
          f"{os.cpu_count()} cores | load {load_average()}")
    print(f"workloads {names} | budgets {budgets} | threads {threads_list} | "
          f"{'separate searches' if args.separate else 'checkpoints of one search'} | "
          f"MetaSchedule: {tvm_python or 'off (set ANSOR_BENCH_TVM_PYTHON)'} | logs {work_dir}")

    rows: list[dict] = []
    for name in names:
        wl = WORKLOADS[name]
        for threads in threads_list:
            runs = [[b] for b in budgets] if args.separate else [budgets]
            for marks in runs:
                load0 = load_average()
                task, snaps, log = tune_ours(wl, marks, threads, min(round_size, min(marks)),
                                             work_dir, args.verbose)
                npy = numpy_gflops(wl, task, threads, timing)
                ms = None
                if tvm_python:
                    print(f"  [{name} t{threads}] MetaSchedule {max(marks)} trials ...",
                          flush=True)
                    ms = tune_tvm(tvm_python, wl, marks, threads, work_dir, timing,
                                  min(round_size, min(marks)), args.tvm_timeout)
                    if "error" in ms:
                        print(f"  MetaSchedule failed: {ms['error']}")
                for b in marks:
                    s = snaps.get(b)
                    if s is None or s["trace"] is None:
                        print(f"  [{name} t{threads} {b}] no valid program measured")
                        continue
                    rt = retime(task, s["trace"], threads, timing, wl)
                    row = {"workload": name, "threads": threads, "trials": b,
                           "measured": s["trials"], "ours_gflops": rt["best_gflops"],
                           "ours_s": rt["best_s"], "rel_error": rt["rel_error"],
                           "tuner_best_gflops": s["tuner_best_gflops"],
                           "wall_s": s["wall_s"], "search_s": s["search_s"],
                           "measure_s": s["measure_s"], "errors": s["errors"],
                           "overhead_pct": 100 * (1 - s["measure_s"] / s["wall_s"]),
                           "numpy_gflops": npy["numpy_gflops"],
                           "vs_numpy": rt["best_gflops"] / npy["numpy_gflops"],
                           "load_before": load0, "load_after": load_average(), "log": log}
                    if ms and b in ms:
                        row["ms_gflops"] = ms[b]["best_gflops"]
                        row["ms_wall_s"] = ms[b]["wall_s"]
                        row["ms_tuner_best_gflops"] = ms[b].get("tuner_best_gflops")
                        row["vs_ms"] = rt["best_gflops"] / ms[b]["best_gflops"]
                        row["wall_vs_ms"] = s["wall_s"] / ms[b]["wall_s"]
                    rows.append(row)
                    print(f"  [{name} t{threads} {b}] ours {rt['best_gflops']:.1f} GFLOPS "
                          f"(tuner said {s['tuner_best_gflops']:.1f}), wall {s['wall_s']:.0f} s, "
                          f"numpy {npy['numpy_gflops']:.1f}"
                          + (f", MS {row['ms_gflops']:.1f} in {row['ms_wall_s']:.0f} s"
                             if "ms_gflops" in row else "")
                          + f" | load {row['load_after']}", flush=True)
                    if rt["rel_error"] > 1e-3:
                        print(f"  WARNING: best program differs from numpy "
                              f"(relative error {rt['rel_error']:.2g})")
                    if args.print_best:
                        print(f"--- best program, {name} t{threads} @{b} ---")
                        print(rt["program"].trace)
                        print(rt["program"].mod.script())

    print()
    print_table(rows)
    print()
    for what, verdict, detail in verdicts(rows):
        print(f"{verdict:<5} {what}: {detail}")
    print(f"load average at the end: {load_average()}")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump({"machine": {"cpu": tvm.Target("llvm").mcpu, "cores": os.cpu_count(),
                                   "blas": blas, "python": platform.python_version()},
                       "budgets": budgets, "timing": timing, "rows": rows,
                       "verdicts": verdicts(rows)}, fh, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
