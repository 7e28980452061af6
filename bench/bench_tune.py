"""Auto-scheduler benchmark: ours vs numpy (OpenBLAS) vs TVM MetaSchedule, in one run.

    .venv/bin/python bench/bench_tune.py --quick                       # smoke check, ~2 min
    .venv/bin/python bench/bench_tune.py --workloads matmul1024 --trials 64,256 --threads 1
    .venv/bin/python bench/bench_tune.py --merge run1.json run2.json   # medians of saved runs
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
from ansor_lab.jupyter.roofline import multiply_add_peak_gflops
from ansor_lab.runtime.ndarray import aligned_copy

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
    out = te.compute(
        conv.shape,
        lambda b, f, y, x: te.max(conv[b, f, y, x] + bias[f], te.const(0.0)),
        name="T_relu",
    )
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
    "matmul512": Workload(
        "matmul512", bench_matmul, (512,), np.matmul, {"name": "matmul", "n": 512}
    ),
    "matmul1024": Workload(
        "matmul1024", bench_matmul, (1024,), np.matmul, {"name": "matmul", "n": 1024}
    ),
    "chain512": Workload("chain512", bench_chain, (512,), _chain_np, {"name": "chain", "n": 512}),
    "conv_last": Workload(
        "conv_last",
        bench_conv_bias_relu,
        CONV_LAST,
        lambda d, k, b: np_conv_im2col(d, k, b, CONV_LAST[5]),
        {"name": "conv_bias_relu", "n": 1, "c": 512, "hw": 7, "k": 512, "r": 3, "pad": 1},
    ),
}


# --------------------------------------------------------------------------------------
# Timing helpers


def blas_limit(threads: int):
    """Limit numpy's BLAS to ``threads`` threads (and say which BLAS it is)."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return nullcontext(), "threadpoolctl missing: numpy uses its default thread count"
    blas = [
        f"{i.get('internal_api')} {i.get('version')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    return threadpool_limits(limits=threads, user_api="blas"), ", ".join(blas) or "BLAS"


def time_python(
    fn: Callable[[], object],
    repeat: int,
    min_repeat_ms: float,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Seconds per call, one entry per repeat (each repeat lasts >= min_repeat_ms).

    ``clock=time.process_time`` measures CPU time instead: on a machine shared with other
    jobs a single-threaded kernel's CPU time leaves out the time it waited for a core.
    """
    fn()
    t0 = clock()
    fn()
    number = max(1, int(min_repeat_ms / 1e3 / max(clock() - t0, 1e-7)) + 1)
    out = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(number):
            fn()
        out.append((clock() - t0) / number)
    return out


def random_inputs(task) -> list[np.ndarray]:
    """Inputs for the task's placeholders and the output, in argument order, 64-byte
    aligned as the tuner's (and TVM's) arrays are."""
    rng = np.random.default_rng(0)
    arrays = []
    for t in task.args:
        shape = tuple(int(d) for d in t.shape)
        arrays.append(aligned_copy(rng.uniform(-1, 1, size=shape).astype("float32")))
    return arrays


def numpy_gflops(wl: Workload, task, threads: int, timing: dict) -> dict:
    """numpy's time for the workload with ``threads`` BLAS threads."""
    arrays = random_inputs(task)
    inputs = arrays[:-1]
    limit, _ = blas_limit(threads)
    with limit:
        costs = time_python(lambda: wl.numpy_fn(*inputs), timing["repeat"], timing["min_repeat_ms"])
        cpu = (
            time_python(
                lambda: wl.numpy_fn(*inputs),
                timing["repeat"],
                timing["min_repeat_ms"],
                time.process_time,
            )
            if threads == 1
            else None
        )
    med = statistics.median(costs)
    out = {"numpy_s": med, "numpy_gflops": task.flop_ct / med / 1e9, "numpy_cpu_gflops": None}
    if cpu:
        out["numpy_cpu_gflops"] = task.flop_ct / statistics.median(cpu) / 1e9
    return out


class Retimer:
    """A best program rebuilt outside the tuner, checked against numpy, timed on demand."""

    def __init__(self, task, trace: dict, threads: int, wl: Workload) -> None:
        from ansor_lab.schedule.trace import Trace

        self.task = task
        self.threads = threads
        self.program = task.make_schedule()
        Trace.from_json(trace).apply_to_schedule(self.program)
        self.f = tvm.build(self.program, list(task.args), target=task.target, num_threads=threads)
        self.arrays = random_inputs(task)
        self.arrays[-1][...] = 0
        self.f(*self.arrays)
        want = wl.numpy_fn(*[a.astype("float64") for a in self.arrays[:-1]])
        self.rel_error = float(
            np.max(np.abs(self.arrays[-1] - want)) / max(1.0, float(np.max(np.abs(want))))
        )

    def time(self, timing: dict) -> dict:
        """GFLOPS by time_evaluator (median), and on the CPU clock with 1 thread."""
        res = self.f.time_evaluator(
            number=timing["number"], repeat=timing["repeat"], min_repeat_ms=timing["min_repeat_ms"]
        )(*self.arrays)
        cpu_gflops = None
        if self.threads == 1:  # CPU clock: leaves out the time other jobs held the core
            cpu = time_python(
                lambda: self.f(*self.arrays),
                timing["repeat"],
                timing["min_repeat_ms"],
                time.process_time,
            )
            cpu_gflops = self.task.flop_ct / statistics.median(cpu) / 1e9
        return {
            "best_s": res.median,
            "best_gflops": self.task.flop_ct / res.median / 1e9,
            "cpu_gflops": cpu_gflops,
        }


def best_of(rounds: list[dict], key: str):
    """The largest value of ``key`` over timing rounds (load only ever slows a round)."""
    vals = [r[key] for r in rounds if r and r.get(key) is not None]
    return max(vals) if vals else None


def tree_cpu_seconds() -> float:
    """CPU seconds used so far by this process and its children, live or finished.

    On a machine shared with other jobs the tuning wall time mostly measures the load;
    the CPU time is what the tuning itself costs. Live children are read from /proc.
    """
    import resource

    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        ru = resource.getrusage(who)
        total += ru.ru_utime + ru.ru_stime
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    me = os.getpid()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return total
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:  # ppid; utime stime cutime cstime follow at 11..14
            total += sum(int(x) for x in fields[11:15]) / tick
    return total


# --------------------------------------------------------------------------------------
# Our tuner


class Checkpoints(auto_scheduler.SearchCallback):
    """Snapshot the best trace and the clocks when the trial count reaches a checkpoint."""

    def __init__(self, marks: list[int], t0: float, cpu0: float) -> None:
        super().__init__()
        self.marks = sorted(marks)
        self.t0 = t0
        self.cpu0 = cpu0
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
                    "trials": stats.trials,
                    "wall_s": time.perf_counter() - self.t0,
                    "cpu_s": tree_cpu_seconds() - self.cpu0,
                    "search_s": stats.search_time,
                    "measure_s": stats.measure_time,
                    "tuner_best_gflops": stats.best_gflops,
                    "errors": stats.errors,
                    "trace": self.best_trace,
                }


def tune_ours(
    wl: Workload,
    budgets: list[int],
    threads: int,
    round_size: int,
    log_dir: str,
    verbose: int,
    policy_params: dict | None = None,
) -> tuple:
    """One search up to max(budgets); (task, {budget: snapshot}, log file)."""
    target = tvm.Target(f"llvm -num-cores={threads}")
    task = auto_scheduler.SearchTask(func=wl.func, args=wl.args, target=target)
    log = os.path.join(log_dir, f"{wl.name}_t{threads}_n{max(budgets)}.json")
    if os.path.exists(log):
        os.remove(log)
    t0 = time.perf_counter()
    cpu0 = tree_cpu_seconds()
    cp = Checkpoints(budgets, t0, cpu0)
    opts = auto_scheduler.TuningOptions(
        num_measure_trials=max(budgets),
        num_measures_per_round=round_size,
        num_threads=threads,
        verbose=verbose,
        callbacks=[cp],
        measure_callbacks=[auto_scheduler.RecordToFile(log)],
    )
    policy = (
        auto_scheduler.SketchPolicy(task, params=policy_params, verbose=verbose)
        if policy_params
        else None
    )
    result = task.tune(opts, search_policy=policy)
    wall = time.perf_counter() - t0
    final = max(budgets)
    if final not in cp.snaps:  # stopped early / space exhausted: the end is the checkpoint
        st = result.stats
        cp.snaps[final] = {
            "trials": st.trials,
            "wall_s": wall,
            "cpu_s": 0.0,
            "search_s": st.search_time,
            "measure_s": st.measure_time,
            "tuner_best_gflops": st.best_gflops,
            "errors": st.errors,
            "trace": result.best_trace,
        }
    cp.snaps[final]["wall_s"] = wall  # includes closing the workers
    cp.snaps[final]["cpu_s"] = tree_cpu_seconds() - cpu0
    return task, cp.snaps, log


# --------------------------------------------------------------------------------------
# TVM MetaSchedule (subprocess in its own venv)


def tune_tvm(
    tvm_python: str,
    wl: Workload,
    budgets: list[int],
    threads: int,
    work_dir: str,
    timing: dict,
    round_size: int,
    timeout: float,
) -> dict:
    """Run ms_tune.py in the TVM venv; {budget: {best_gflops, wall_s, ...}} or {error}."""
    spec = {
        "workload": wl.tvm_spec,
        "budgets": budgets,
        "threads": threads,
        "work_dir": os.path.join(work_dir, f"ms_{wl.name}_t{threads}_n{max(budgets)}"),
        "timing": timing,
        "round_size": round_size,
        # MetaSchedule compiles for the same CPU as we do (its default would be a guess).
        "mcpu": tvm.Target("llvm").mcpu,
    }
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


def retime_tvm(
    tvm_python: str, wl: Workload, budgets: list[int], threads: int, ms_dir: str, timing: dict
) -> dict:
    """Re-time MetaSchedule's best of the first N records for each budget N (subprocess)."""
    env = dict(os.environ)
    env["TVM_NUM_THREADS"] = str(threads)
    env["OMP_NUM_THREADS"] = str(threads)
    env["PYTHONPATH"] = os.path.dirname(TVM_SIDE) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [
        tvm_python,
        os.path.join(os.path.dirname(TVM_SIDE), "ms_retime.py"),
        "--work-dir",
        ms_dir,
        "--workload",
        json.dumps(wl.tvm_spec),
        "--threads",
        str(threads),
        "--first",
        ",".join(map(str, budgets)),
        "--repeat",
        str(timing["repeat"]),
        "--number",
        str(timing["number"]),
        "--min-repeat-ms",
        str(timing["min_repeat_ms"]),
        "--mcpu",
        tvm.Target("llvm").mcpu,
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        print(f"  ms_retime.py failed: {proc.stderr[-1500:]}")
        return {}
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return {int(k): v for k, v in data.items()}


# --------------------------------------------------------------------------------------
# Report


def fmt(x, spec=".1f", none="-"):
    """Format a number or a dash."""
    return none if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def ratio(a, b):
    """a / b, or None when either is missing."""
    return a / b if a is not None and b else None


def add_ratios(row: dict) -> dict:
    """Fill in the derived columns of a row."""
    row["overhead_pct"] = 100 * (1 - row["measure_s"] / row["wall_s"])
    row["vs_numpy"] = ratio(row["ours_gflops"], row["numpy_gflops"])
    row["vs_numpy_cpu"] = ratio(row.get("ours_cpu_gflops"), row.get("numpy_cpu_gflops"))
    row["vs_ms"] = ratio(row["ours_gflops"], row.get("ms_gflops"))
    row["vs_ms_cpu"] = ratio(row.get("ours_cpu_gflops"), row.get("ms_cpu_gflops"))
    row["wall_vs_ms"] = ratio(row["wall_s"], row.get("ms_wall_s"))
    row["cpu_vs_ms"] = ratio(row.get("cpu_s"), row.get("ms_cpu_s"))
    return row


NUMERIC = (
    "ours_gflops",
    "ours_cpu_gflops",
    "tuner_best_gflops",
    "wall_s",
    "cpu_s",
    "search_s",
    "measure_s",
    "errors",
    "numpy_gflops",
    "numpy_cpu_gflops",
    "ms_gflops",
    "ms_cpu_gflops",
    "ms_wall_s",
    "ms_cpu_s",
    "ms_tuner_best_gflops",
)


def medians(rows: list[dict]) -> list[dict]:
    """One row per (workload, threads, trials): the median of each number over the runs."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["workload"], r["threads"], r["trials"]), []).append(r)
    out = []
    for (w, t, b), rs in groups.items():
        row = {
            "workload": w,
            "threads": t,
            "trials": b,
            "runs": len(rs),
            "ms_runs": sum(1 for r in rs if r.get("ms_gflops") is not None),
        }
        for key in NUMERIC:
            vals = [r[key] for r in rs if r.get(key) is not None]
            row[key] = statistics.median(vals) if vals else None
        out.append(add_ratios(row))
    return out


def print_table(rows: list[dict]) -> None:
    """The results: GFLOPS (wall clock and CPU clock), then times."""
    head = (
        f"{'workload':<11}{'thr':>4}{'trials':>7}{'runs':>5}{'ours GF':>9}{'numpy GF':>10}"
        f"{'MS GF':>8}{'/numpy':>8}{'/MS':>7}{'| cpu: ours':>12}{'numpy':>7}{'MS':>7}"
        f"{'/numpy':>8}{'/MS':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['workload']:<11}{r['threads']:>4}{r['trials']:>7}{r.get('runs', 1):>5}"
            f"{fmt(r['ours_gflops']):>9}{fmt(r['numpy_gflops']):>10}"
            f"{fmt(r.get('ms_gflops')):>8}{fmt(r['vs_numpy'], '.2f'):>8}"
            f"{fmt(r.get('vs_ms'), '.2f'):>7}{'| ':>4}{fmt(r.get('ours_cpu_gflops')):>8}"
            f"{fmt(r.get('numpy_cpu_gflops')):>7}{fmt(r.get('ms_cpu_gflops')):>7}"
            f"{fmt(r.get('vs_numpy_cpu'), '.2f'):>8}{fmt(r.get('vs_ms_cpu'), '.2f'):>7}"
        )
    print(
        "GF: GFLOPS of the best program re-timed outside the tuner (median of the repeats, "
        "best of the\nalternating rounds); cpu: the same on the process CPU clock (1 thread "
        "only; robust to other\njobs taking turns on the cores, not to a busy SMT sibling); "
        "/x: GFLOPS ratios; runs: medians over runs"
    )
    print()
    head = (
        f"{'workload':<11}{'thr':>4}{'trials':>7}{'wall s':>8}{'search s':>9}"
        f"{'meas s':>8}{'ovh %':>7}{'errors':>7}{'MS wall s':>10}{'wall/MS':>9}"
        f"{'| cpu s':>8}{'MS cpu s':>9}{'cpu/MS':>8}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['workload']:<11}{r['threads']:>4}{r['trials']:>7}{fmt(r['wall_s'], '.0f'):>8}"
            f"{fmt(r['search_s'], '.0f'):>9}{fmt(r['measure_s'], '.0f'):>8}"
            f"{fmt(r['overhead_pct'], '.0f'):>7}{fmt(r['errors'], '.0f'):>7}"
            f"{fmt(r.get('ms_wall_s'), '.0f'):>10}{fmt(r.get('wall_vs_ms'), '.2f'):>9}"
            f"{'| ':>3}{fmt(r.get('cpu_s'), '.0f'):>5}{fmt(r.get('ms_cpu_s'), '.0f'):>9}"
            f"{fmt(r.get('cpu_vs_ms'), '.2f'):>8}"
        )
    print(
        "wall: tuning wall time up to that many trials; search: stats.search_time (sampling, "
        "evolution, model);\nmeas: stats.measure_time (build + run in the workers); ovh %: "
        "share of the wall time outside build + run;\ncpu s: CPU seconds of the tuner and "
        "its workers (robust to other jobs on the machine)"
    )


def verdicts(rows: list[dict], peaks: dict | None = None) -> list[tuple[str, str, str]]:
    """(target, PASS/FAIL/n.a., detail) for each target, on the (median) rows.

    ``peaks`` (threads -> multiply-add peak GFLOPS) marks a ratio target that no program
    can meet: 1.2x a MetaSchedule program that already runs near the peak.
    """
    out = []
    peaks = {int(k): v for k, v in (peaks or {}).items()}  # JSON keys are strings

    def above_peak(r: dict) -> str:
        need, peak = 1.2 * r["ms_gflops"], peaks.get(r["threads"])
        return f" [1.2x = {need:.0f} GF > peak {peak:.0f}]" if peak and need > peak else ""

    def both(value_wall, value_cpu, ok):
        parts = []
        if value_wall is not None:
            parts.append(("wall", value_wall, ok(value_wall)))
        if value_cpu is not None:
            parts.append(("cpu", value_cpu, ok(value_cpu)))
        return parts

    head = [
        r
        for r in rows
        if r["workload"] == "matmul1024" and r["threads"] == 1 and r["trials"] == 256
    ]
    name = "matmul1024 @256, 1 thread >= 0.9x numpy"
    if head:
        r = head[0]
        parts = both(r["vs_numpy"], r.get("vs_numpy_cpu"), lambda v: v >= 0.9)
        verdict = "PASS" if parts[0][2] else "FAIL"
        out.append(
            (
                name,
                verdict,
                f"{r['ours_gflops']:.1f} vs {r['numpy_gflops']:.1f} GFLOPS; "
                + ", ".join(f"{c}-clock {v:.2f}x {'ok' if k else 'no'}" for c, v, k in parts),
            )
        )
    else:
        out.append((name, "n.a.", "not run"))
    name = ">= 1.2x MetaSchedule at equal trials"
    ms_rows = [r for r in rows if r.get("vs_ms") is not None]
    if ms_rows:
        bad = [r for r in ms_rows if r["vs_ms"] < 1.2]
        detail = "; ".join(
            f"{r['workload']}/t{r['threads']}/{r['trials']}: {r['vs_ms']:.2f}x"
            + (f" (cpu {r['vs_ms_cpu']:.2f}x)" if r.get("vs_ms_cpu") else "")
            + above_peak(r)
            for r in ms_rows
        )
        out.append((name, "FAIL" if bad else "PASS", detail))
    else:
        out.append((name, "n.a.", "set ANSOR_BENCH_TVM_PYTHON to compare"))
    name = "wall time @256 <= 0.5x MetaSchedule's"
    w_rows = [r for r in rows if r.get("wall_vs_ms") is not None and r["trials"] == 256]
    if w_rows:
        bad = [r for r in w_rows if r["wall_vs_ms"] > 0.5]
        detail = "; ".join(
            f"{r['workload']}/t{r['threads']}: {r['wall_s']:.0f} vs "
            f"{r['ms_wall_s']:.0f} s = {r['wall_vs_ms']:.2f}x"
            for r in w_rows
        )
        out.append((name, "FAIL" if bad else "PASS", detail))
    else:
        out.append((name, "n.a.", "no 256-trial MetaSchedule run"))
    bad = [r for r in rows if r["overhead_pct"] >= 20]
    detail = "; ".join(
        f"{r['workload']}/t{r['threads']}/{r['trials']}: {r['overhead_pct']:.0f}%" for r in rows
    )
    out.append(("search overhead < 20% of wall time", "FAIL" if bad else "PASS", detail))
    return out


def git_state() -> str:
    """The commit the package is at, and whether ansor_lab/ has local changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "ansor_lab"],
            cwd=os.path.dirname(HERE),
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head or '?'}{' + local changes in ansor_lab/' if dirty else ''}"


def load_average() -> str:
    """The 1/5/15-minute load averages."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def run_config(
    wl: Workload,
    threads: int,
    marks: list[int],
    round_size: int,
    work_dir: str,
    timing: dict,
    tvm_python: str | None,
    args,
    run: int,
) -> list[dict]:
    """Tune one (workload, threads, budgets) with ours, then MetaSchedule; then re-time the
    best programs of both and numpy in alternating rounds and keep each one's best round."""
    load0 = load_average()
    sub = os.path.join(work_dir, f"run{run}")
    os.makedirs(sub, exist_ok=True)
    task, snaps, log = tune_ours(
        wl, marks, threads, round_size, sub, args.verbose, args.policy_params
    )
    load1 = load_average()
    rows, timers = [], {}
    for b in marks:
        s = snaps.get(b)
        if s is None or s["trace"] is None:
            print(f"  [{wl.name} t{threads} {b}] no valid program measured")
            continue
        timers[b] = Retimer(task, s["trace"], threads, wl)
        if timers[b].rel_error > 1e-3:
            print(
                f"  WARNING: best program differs from numpy (relative error "
                f"{timers[b].rel_error:.2g})"
            )
        if args.print_best:
            print(f"--- best program, {wl.name} t{threads} @{b} ---")
            print(timers[b].program.trace)
            print(timers[b].program.mod.script())
        rows.append(
            {
                "workload": wl.name,
                "threads": threads,
                "trials": b,
                "run": run,
                "measured": s["trials"],
                "rel_error": timers[b].rel_error,
                "tuner_best_gflops": s["tuner_best_gflops"],
                "wall_s": s["wall_s"],
                "cpu_s": s["cpu_s"],
                "search_s": s["search_s"],
                "measure_s": s["measure_s"],
                "errors": s["errors"],
                "load_before": load0,
                "load_after_tuning": load1,
                "log": log,
            }
        )
    ms = None
    if tvm_python and run < args.tvm_runs:
        print(
            f"  [{wl.name} t{threads}] MetaSchedule {max(marks)} trials (load {load_average()})"
            " ...",
            flush=True,
        )
        ms = tune_tvm(tvm_python, wl, marks, threads, sub, timing, round_size, args.tvm_timeout)
        if "error" in ms:
            print(f"  MetaSchedule failed: {ms['error']}")
            ms = None
    # Alternate ours / numpy / MetaSchedule so that a burst of load hits all of them alike.
    rounds: dict = {"ours": {b: [] for b in timers}, "numpy": [], "ms": {b: [] for b in timers}}
    load_rt = load_average()
    for _ in range(args.retime_rounds):
        for b, t in timers.items():
            rounds["ours"][b].append(t.time(timing))
        rounds["numpy"].append(numpy_gflops(wl, task, threads, timing))
        if ms:
            got = retime_tvm(tvm_python, wl, list(timers), threads, ms["info"]["work_dir"], timing)
            for b in timers:
                rounds["ms"][b].append(got.get(b))
    for row in rows:
        b = row["trials"]
        row["ours_gflops"] = best_of(rounds["ours"][b], "best_gflops")
        row["ours_cpu_gflops"] = best_of(rounds["ours"][b], "cpu_gflops")
        row["numpy_gflops"] = best_of(rounds["numpy"], "numpy_gflops")
        row["numpy_cpu_gflops"] = best_of(rounds["numpy"], "numpy_cpu_gflops")
        row["rounds"] = {"ours": rounds["ours"][b], "numpy": rounds["numpy"], "ms": rounds["ms"][b]}
        row["load_retime"] = load_rt
        if ms and b in ms:
            row["ms_gflops"] = best_of(rounds["ms"][b], "best_gflops")
            row["ms_cpu_gflops"] = best_of(rounds["ms"][b], "cpu_gflops")
            row["ms_in_tuner_retime_gflops"] = ms[b]["best_gflops"]
            row["ms_wall_s"] = ms[b]["wall_s"]
            row["ms_cpu_s"] = ms[b].get("cpu_s")
            row["ms_tuner_best_gflops"] = ms[b].get("tuner_best_gflops")
        row["load_after"] = load_average()
        add_ratios(row)
        print(
            f"  [{wl.name} t{threads} {b} run {run}] ours {row['ours_gflops']:.1f} GFLOPS "
            f"(cpu {fmt(row['ours_cpu_gflops'])}, tuner said {row['tuner_best_gflops']:.1f}), "
            f"wall {row['wall_s']:.0f} s (search {row['search_s']:.0f}, measure "
            f"{row['measure_s']:.0f}, cpu {row['cpu_s']:.0f}); numpy "
            f"{row['numpy_gflops']:.1f} (cpu {fmt(row['numpy_cpu_gflops'])})"
            + (
                f"; MS {fmt(row['ms_gflops'])} (cpu {fmt(row.get('ms_cpu_gflops'))}, tuner "
                f"said {fmt(row['ms_tuner_best_gflops'])}) in {row['ms_wall_s']:.0f} s "
                f"(cpu {fmt(row['ms_cpu_s'], '.0f')})"
                if row.get("ms_wall_s")
                else ""
            )
            + f" | load {row['load_before']} -> {row['load_after']}",
            flush=True,
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Tune, re-time, compare, print."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--workloads",
        default="matmul512,matmul1024,chain512,conv_last",
        help=f"comma-separated, from {','.join(WORKLOADS)}",
    )
    p.add_argument("--trials", default="64,256", help="comma-separated trial budgets")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument(
        "--quick",
        action="store_true",
        help="tiny budget (8 trials, 1 thread, short timing) for a smoke check",
    )
    p.add_argument(
        "--separate",
        action="store_true",
        help="one search per budget instead of checkpoints of one search",
    )
    p.add_argument(
        "--runs",
        type=int,
        default=1,
        help="tune each config this many times; the table shows medians",
    )
    p.add_argument(
        "--tvm-runs", type=int, default=1, help="how many of the runs also tune with MetaSchedule"
    )
    p.add_argument(
        "--retime-rounds",
        type=int,
        default=3,
        help="alternating re-timing rounds of ours / numpy / MS (best round kept)",
    )
    p.add_argument("--no-tvm", action="store_true", help="skip MetaSchedule even if configured")
    p.add_argument(
        "--tvm-timeout",
        type=float,
        default=3 * 3600,
        help="seconds allowed for one MetaSchedule run",
    )
    p.add_argument(
        "--print-best", action="store_true", help="print each best program's trace and loop IR"
    )
    p.add_argument("--log-dir", help="keep tuning logs here (default: a temp dir)")
    p.add_argument("--verbose", type=int, default=0, help="tuner verbosity (1: progress bar)")
    p.add_argument(
        "--policy-params",
        type=json.loads,
        default=None,
        metavar="JSON",
        help="SketchPolicy params for our tuner, e.g. '{\"analytic_prior\": 0}'",
    )
    p.add_argument("--json", help="write all numbers to this JSON file")
    p.add_argument(
        "--merge",
        nargs="+",
        metavar="JSON",
        help="tune nothing: print the median tables of earlier --json outputs",
    )
    args = p.parse_args(argv)
    if args.merge:
        rows, peaks = [], {}
        for path in args.merge:
            with open(path) as fh:
                data = json.load(fh)
            rows += data["rows"]
            peaks.update(data.get("machine", {}).get("multiply_add_peak_gflops", {}))
        summary = medians(rows)
        print_table(summary)
        print()
        for what, verdict, detail in verdicts(summary, peaks):
            print(f"{verdict:<5} {what}: {detail}")
        return 0

    names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")
    budgets = sorted({int(x) for x in args.trials.split(",")})
    threads_list = [int(x) for x in args.threads.split(",")]
    timing = {"number": 5, "repeat": 15, "min_repeat_ms": 50}
    if args.quick:
        budgets = [8] if args.trials == "64,256" else budgets
        threads_list = [1] if args.threads == "1,2" else threads_list
        timing = {"number": 2, "repeat": 3, "min_repeat_ms": 10}
        args.retime_rounds = min(args.retime_rounds, 1)
    round_size = min([64] + budgets)
    for b in budgets:
        if b % round_size:
            p.error(f"budgets must be multiples of the round size {round_size}: {budgets}")
    tvm_python = None if args.no_tvm else os.environ.get("ANSOR_BENCH_TVM_PYTHON")

    work_dir = args.log_dir or tempfile.mkdtemp(prefix="bench_tune_")
    os.makedirs(work_dir, exist_ok=True)
    _, blas = blas_limit(1)
    print(
        f"ansor_lab {tvm.__version__} | python {platform.python_version()} | numpy "
        f"{np.__version__} ({blas}) | cpu {tvm.Target('llvm').mcpu} | "
        f"{os.cpu_count()} cores | load {load_average()}"
    )
    print(
        f"workloads {names} | budgets {budgets} | threads {threads_list} | runs {args.runs} | "
        f"{'separate searches' if args.separate else 'checkpoints of one search'} | "
        f"MetaSchedule: {tvm_python or 'off (set ANSOR_BENCH_TVM_PYTHON)'} | logs {work_dir}"
    )
    print(
        f"re-timing: time_evaluator(number={timing['number']}, repeat={timing['repeat']}, "
        f"min_repeat_ms={timing['min_repeat_ms']}), median; best of {args.retime_rounds} "
        "alternating rounds of ours / numpy / MS",
        flush=True,
    )
    print(f"code: {git_state()}", flush=True)
    # the roof every number below is under: both tuners' matmul512 reached ~99% of it on Zen 5
    peaks = {t: round(multiply_add_peak_gflops(threads=t), 1) for t in threads_list}
    print(
        "float32 multiply-add peak (GFLOPS): "
        + ", ".join(f"{t} thread{'s' * (t > 1)} {g}" for t, g in peaks.items()),
        flush=True,
    )
    if args.policy_params:
        print(f"SketchPolicy params: {args.policy_params}", flush=True)

    rows: list[dict] = []
    for run in range(args.runs):
        for name in names:
            for threads in threads_list:
                runs = [[b] for b in budgets] if args.separate else [budgets]
                for marks in runs:
                    rows += run_config(
                        WORKLOADS[name],
                        threads,
                        marks,
                        min(round_size, min(marks)),
                        work_dir,
                        timing,
                        tvm_python,
                        args,
                        run,
                    )
    summary = medians(rows)
    # measured again on the now quiet machine, the higher kept: a peak is a maximum and
    # load only lowers it (run 11 measured 182 GFLOPS on two cores at its start, 233 alone)
    again = {t: round(multiply_add_peak_gflops(threads=t), 1) for t in threads_list}
    if again != peaks:
        print(
            "float32 multiply-add peak measured again (GFLOPS): "
            + ", ".join(f"{t} thread{'s' * (t > 1)} {g}" for t, g in again.items()),
            flush=True,
        )
    peaks = {t: max(peaks[t], again[t]) for t in threads_list}
    print()
    print_table(summary)
    print()
    for what, verdict, detail in verdicts(summary, peaks):
        print(f"{verdict:<5} {what}: {detail}")
    print(f"load average at the end: {load_average()}")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "machine": {
                        "cpu": tvm.Target("llvm").mcpu,
                        "cores": os.cpu_count(),
                        "blas": blas,
                        "python": platform.python_version(),
                        "multiply_add_peak_gflops": peaks,
                    },
                    "budgets": budgets,
                    "timing": timing,
                    "rows": rows,
                    "summary": summary,
                    "verdicts": verdicts(summary, peaks),
                },
                fh,
                indent=2,
            )
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
