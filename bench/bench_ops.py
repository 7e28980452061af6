"""Operator benchmark across families: ours (tuned) vs numpy, PyTorch and MetaSchedule.

    .venv/bin/python bench/bench_ops.py --ops layer_norm_bert,softmax_rows --threads 1
    .venv/bin/python bench/bench_ops.py                       # all, 64 trials, 1 thread, 1 seed
    .venv/bin/python bench/bench_ops.py --trials 64,256 --threads 1,2 --seeds 5
    .venv/bin/python bench/bench_ops.py --seeds 5 --per-round 64      # TVM's batch size
    .venv/bin/python bench/bench_ops.py --torch-site VENV/lib/python3.11/site-packages
    ANSOR_BENCH_TVM_PYTHON=/root/venvs/tvmvenv/bin/python .venv/bin/python bench/bench_ops.py
    .venv/bin/python bench/bench_ops.py --jsonl bench/results/ops.jsonl --report   # tables only

Eighteen operators in eleven families (GEMM and dense (x @ w^T), batch GEMM, strided / 1x1
/ depthwise / grouped / dilated convolutions and ResNet-50's last 3x3 conv, GEMV, softmax,
layer norm, RMS norm, pooling, row and column reductions, an elementwise chain, a
transpose), at shapes of ResNet-50, BERT-base and LLM layers. Each is written once,
against a ``(te, topi)`` pair, so the MetaSchedule side (``bench/tvm_side/ms_tune.py``
with ``bench/ops_defs.py``, run with the python of an apache-tvm venv) builds the very
same computation with ``tvm.te`` / ``tvm.topi``.

For each thread count and operator: ``--seeds N`` searches (seeds 0..N-1) of the largest
``--trials`` budget, the smaller budgets read as checkpoints of the same search; each
checkpoint's best program rebuilt, checked against numpy (float64) and re-timed outside the
tuner (``time_evaluator``, median); then numpy, PyTorch (CPU, oneDNN; from a separate
venv's site-packages given by ``--torch-site``: never a dependency) and, with
``ANSOR_BENCH_TVM_PYTHON`` set, MetaSchedule: tuned with the same budget and thread count
(its work dir kept under ``--log-dir``, so a tuning done earlier, e.g. in the background,
is reused), and its best at each checkpoint re-timed and checked here, in the same run
(``tvm_side/ms_retime.py``).

Every measurement is appended to the ``--jsonl`` file as it is taken: a killed run loses
nothing, and the same command resumes it (what the file holds is skipped). The tables
(``ops_table.py``): per operator each peer's time over ours (> 1: we are faster) and over
the best peer, the seeds' best / median / worst and their spread, per family and the
geometric mean, the tuning wall time ours vs MetaSchedule's, correctness of every program.

Numbers depend on the machine and its load (``uptime`` is printed): on a shared machine
every timing is noisy. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_tune import blas_limit, time_python  # noqa: E402
from ops_defs import BY_NAME, Op  # noqa: E402
from ops_table import build_rows, format_report, record_key  # noqa: E402

import ansor_lab as tvm  # noqa: E402 - after the bench directory is importable
from ansor_lab import auto_scheduler, te, topi  # noqa: E402

MS_TUNE = os.path.join(HERE, "tvm_side", "ms_tune.py")
MS_RETIME = os.path.join(HERE, "tvm_side", "ms_retime.py")
TIMING = {"number": 5, "repeat": 9, "min_repeat_ms": 40}


# --------------------------------------------------------------------------------------
# Timing


def inputs_for(tensors) -> list[np.ndarray]:
    """Random float32 inputs for the placeholders (uniform in [-1, 1))."""
    from ansor_lab.runtime.ndarray import aligned_copy  # noqa: PLC0415 - bench helper

    rng = np.random.default_rng(0)
    return [
        aligned_copy(rng.uniform(-1, 1, size=tuple(int(d) for d in t.shape)).astype("float32"))
        for t in tensors
        if isinstance(t.op, te.PlaceholderOp)
    ]


def output_for(tensors) -> np.ndarray:
    """The zeroed output array in the output's dtype (an argmax writes int32), 64-byte
    aligned like the tuner's (and TVM's ``nd.empty``).

    numpy's own small arrays start on 16 bytes: a column sum that adds each row into its
    output took 63 us with an output 4 or 16 bytes off a 32-byte line and 47 us aligned, the
    same program, so an unaligned output made a seed look 1.45x slower than it is."""
    from ansor_lab.runtime.ndarray import aligned_empty  # noqa: PLC0415 - bench helper

    out = aligned_empty(tuple(int(d) for d in tensors[-1].shape), str(tensors[-1].dtype))
    out[...] = 0
    return out


def rel_error(got: np.ndarray, want: np.ndarray) -> float:
    """Max abs error over max(1, max |want|)."""
    return float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))


def build_ours(task, trace: dict, threads: int):
    """The program of a trace, built, with its inputs and output: ``(f, ins, out)``."""
    from ansor_lab.schedule.trace import Trace  # noqa: PLC0415 - bench helper

    sch = task.make_schedule()
    Trace.from_json(trace).apply_to_schedule(sch)
    f = tvm.build(sch, list(task.args), target=task.target, num_threads=threads)
    return f, inputs_for(task.args), output_for(task.args)


def time_ours(task, trace: dict, threads: int, op: Op) -> dict:
    """Rebuild the best trace, check it against numpy in float64, time it (median)."""
    f, ins, out = build_ours(task, trace, threads)
    f(*ins, out)
    err = rel_error(out, op.numpy_fn(*[a.astype("float64") for a in ins]))
    res = f.time_evaluator(**TIMING)(*ins, out)
    rec = {"ours_s": res.median, "rel_error": err}
    if threads == 1:  # the CPU clock leaves out the time other jobs held the core
        cpu = time_python(lambda: f(*ins, out), TIMING["repeat"], 40, clock=time.process_time)
        rec["ours_cpu_s"] = statistics.median(cpu)
    return rec


def _median_times(fn, threads: int) -> dict:
    """``{"s": median wall seconds}``, and on 1 thread ``"cpu_s"``: the process CPU clock."""
    out = {"s": statistics.median(time_python(fn, 9, 40))}
    if threads == 1:  # the CPU clock leaves out the time other jobs held the core
        out["cpu_s"] = statistics.median(time_python(fn, 9, 40, clock=time.process_time))
    return out


@dataclass(frozen=True)
class SelfTimed:
    """A measurement that times itself, for ``in_turns``: ``call()`` returns seconds (or
    None), run in every ``every``-th round (another process's re-time is slow: every other)."""

    call: Callable[[], float | None]
    every: int = 1


def in_turns(fns: dict, rounds: int = 7) -> dict[str, float]:
    """Median seconds per call of each function, timed in turns.

    Each round times every function once (a plain callable: the median of 3 repeats of
    >= 20 ms by ``time_python``; a ``SelfTimed``: its own result), starting from a
    different one each round; a function's time is its median over the rounds. On a
    machine whose speed drifts by tens of percent over seconds (a shared cloud core: one
    program ran 86, 109 and 122 us in consecutive 2-second windows), programs timed minutes
    apart differ by the drift; timed in turns, they see the same stretches of the machine.
    """
    names = list(fns)
    per: dict[str, list[float]] = {n: [] for n in names}
    for k in range(rounds):
        start = k % len(names)
        for n in names[start:] + names[:start]:
            fn = fns[n]
            if not isinstance(fn, SelfTimed):
                per[n].append(statistics.median(time_python(fn, 3, 20)))
            elif k % fn.every == 0 and (t := fn.call()) is not None:
                per[n].append(t)
    return {n: statistics.median(v) for n, v in per.items() if v}


def side_by_side(task, op: Op, seeds: dict[int, dict], torch, threads: int, ms=None) -> dict:
    """Every seed's best program, numpy and PyTorch timed in turns (``in_turns``), in this
    process, and ``ms`` (a call that re-times MetaSchedule's best in its own process, in
    seconds) between every other round: ``{"ours": {seed: s}, "numpy": s, "torch": s,
    "ms": s}`` (wall clock). Ours are timed by ``time_evaluator`` (a loop in the kernel's
    runtime, as the main table's), the peers by Python calls (as theirs)."""
    fns = {}
    for seed, trace in seeds.items():
        f, ins, out = build_ours(task, trace, threads)
        timer = f.time_evaluator(number=1, repeat=3, min_repeat_ms=20)
        fns[f"seed{seed}"] = SelfTimed(lambda t=timer, ins=ins, out=out: t(*ins, out).median)
    np_ins = inputs_for(task.args)
    fns["numpy"] = lambda: op.numpy_fn(*np_ins)
    if torch is not None and op.torch_fn is not None:
        torch.set_num_threads(threads)
        t_ins = [torch.from_numpy(a) for a in inputs_for(task.args)]

        def run_torch():
            with torch.inference_mode():
                return op.torch_fn(torch, *t_ins)

        fns["torch"] = run_torch
    if ms is not None:
        fns["ms"] = SelfTimed(ms, every=2)
    limit, _ = blas_limit(threads)
    with limit:
        t = in_turns(fns)
    return {
        "ours": {str(seed): t[f"seed{seed}"] for seed in seeds},
        "numpy": t["numpy"],
        "torch": t.get("torch"),
        "ms": t.get("ms"),
    }


def ms_timer(python: str | None, op: Op, threads: int, budget: int, base: str):
    """A call re-timing MetaSchedule's best of ``budget`` trials (seconds, or None), or None
    without its venv or tuning."""
    if not python or not os.path.exists(base + ".json"):
        return None

    def timer():
        rt = ms_retime(python, op.name, threads, [budget], base).get(str(budget))
        return op.flops / rt["best_gflops"] / 1e9 if rt else None

    return timer


def time_numpy(op: Op, tensors, threads: int) -> dict:
    """numpy's median time with ``threads`` BLAS threads (``_median_times``)."""
    ins = inputs_for(tensors)
    limit, _ = blas_limit(threads)
    with limit:
        return _median_times(lambda: op.numpy_fn(*ins), threads)


def load_torch(site: str | None):
    """PyTorch if importable (from ``site`` when given), else None."""
    if site:
        sys.path.append(site)
    try:
        import torch  # noqa: PLC0415 - optional peer, never a dependency
    except ImportError:
        return None
    return torch


def time_torch(torch, op: Op, tensors, threads: int) -> dict | None:
    """PyTorch's median time with ``threads`` threads (inference mode; ``_median_times``)."""
    if torch is None or op.torch_fn is None:
        return None
    torch.set_num_threads(threads)
    ins = [torch.from_numpy(a) for a in inputs_for(tensors)]
    with torch.inference_mode():
        return _median_times(lambda: op.torch_fn(torch, *ins), threads)


def stream_read_gbs(threads: int, mib: int = 9) -> float:
    """Read bandwidth (GB/s) over ``mib`` MiB, the GEMV's weights (the working set it
    streams when timed again and again): our read-sum kernel
    (``measure.bandwidth.measure_read_bandwidth``, see ``bench_bandwidth.py``), the best
    of 15 repeats of 20 ms. Not the median: on this 2-vCPU VM two reading threads run at
    the two-thread rate (193-212 GB/s) or, for whole repeats, at the one-thread rate
    (100-110), whatever the pinning; a median of 7 once filed 110 as the machine's
    bandwidth, and the GEMV read "174%" of it."""
    from ansor_lab.measure.bandwidth import measure_read_bandwidth  # noqa: PLC0415

    return measure_read_bandwidth(mib << 20, threads, repeats=15).best_gbs


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
        self.best = (inp.trace, res.mean_cost)

    def on_batch(self, task, inputs, results, stats) -> None:
        """Snapshot at each checkpoint passed."""
        for m in self.marks:
            if m not in self.snaps and stats.trials >= m and self.best is not None:
                self.snaps[m] = (*self.best, time.perf_counter() - self.t0, stats.invalid)


def make_task(op: Op, threads: int):
    """The operator's SearchTask for ``threads`` cores."""
    return auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG(op.build(te, topi)),
        target=f"llvm -num-cores={threads}",
    )


def tune(
    op: Op, threads: int, budgets: list[int], seed: int, params: dict | None, per_round: int = 16
) -> tuple:
    """(task, {budget: (trace, tuner cost, wall seconds, invalid dropped)}) of one search
    measuring ``per_round`` programs a batch."""
    task = make_task(op, threads)
    snap = Snapshot(budgets)
    opts = auto_scheduler.TuningOptions(
        num_measure_trials=max(budgets),
        num_measures_per_round=per_round,
        num_threads=threads,
        verbose=0,
        callbacks=[snap],
    )
    policy = auto_scheduler.SketchPolicy(task, seed=seed, verbose=0, params=params)
    result = task.tune(opts, search_policy=policy)
    # the best tuner time after each batch of 16 and the sketch of the best: where a bad
    # seed fell behind
    snap.curve = [best for trial, _, best in result.stats.history if trial % 16 == 0]
    for b in budgets:  # a small space is exhausted before the budget: its best is final
        snap.snaps.setdefault(
            b,
            (
                result.best_trace,
                result.best_cost,
                time.perf_counter() - snap.t0,
                result.stats.invalid,
            ),
        )
    return task, snap.snaps, snap


def ms_base(log_dir: str, op: str, threads: int, budget: int, seed: int) -> str:
    """Where MetaSchedule's tuning of one (operator, threads, budget, seed) lives."""
    return os.path.join(log_dir, "ms", f"{op}_t{threads}_b{budget}_s{seed}")


def _side_env(threads: int) -> dict:
    side = os.pathsep.join([os.path.join(HERE, "tvm_side"), HERE])
    return {**os.environ, "TVM_NUM_THREADS": str(threads), "PYTHONPATH": side}


def ms_tune(python: str, op: str, threads: int, budgets: list[int], base: str, seed: int):
    """Tune with MetaSchedule unless ``base + '.json'`` exists; its checkpoints or None."""
    if not os.path.exists(base + ".json"):
        spec = {
            "workload": {"name": "op", "op": op},
            "budgets": budgets,
            "threads": threads,
            "work_dir": base,
            "seed": seed,
        }
        cmd = [python, MS_TUNE, "--spec", json.dumps(spec), "--out", base + ".json.tmp"]
        os.makedirs(os.path.dirname(base), exist_ok=True)
        with open(base + ".log", "w") as log:
            proc = subprocess.run(cmd, env=_side_env(threads), stdout=log, stderr=log)
        if proc.returncode != 0:
            print(f"  MetaSchedule failed on {op}: see {base}.log", file=sys.stderr)
            return None
        os.replace(base + ".json.tmp", base + ".json")
    with open(base + ".json") as fh:
        return json.load(fh)["checkpoints"]


def ms_retime(python: str, op: str, threads: int, budgets: list[int], base: str) -> dict:
    """Re-time MetaSchedule's best of the first N records for each budget N, now."""
    cmd = [
        python,
        MS_RETIME,
        "--work-dir",
        base,
        "--workload",
        json.dumps({"name": "op", "op": op}),
        "--threads",
        str(threads),
        "--first",
        ",".join(map(str, budgets)),
        "--number",
        str(TIMING["number"]),
        "--repeat",
        str(TIMING["repeat"]),
        "--min-repeat-ms",
        str(TIMING["min_repeat_ms"]),
    ]
    proc = subprocess.run(cmd, env=_side_env(threads), capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"  MetaSchedule re-time failed on {op}: {proc.stderr[-400:]}", file=sys.stderr)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------
# The run: every measurement appended to the JSON-lines file as it is taken


class Journal:
    """The JSON-lines file of a run: what it holds is done (resume), new records appended."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.records: list[dict] = []
        if os.path.exists(path):
            with open(path) as fh:
                self.records = [json.loads(line) for line in fh if line.strip()]
        self.keys = {record_key(r) for r in self.records}

    def has(self, **key) -> bool:
        """Whether a record with this key is in the file."""
        return record_key(key) in self.keys

    def add(self, **rec) -> None:
        """Append a record (flushed at once)."""
        rec["at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.records.append(rec)
        self.keys.add(record_key(rec))
        with open(self.path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def run(args, names: list[str], budgets: list[int], threads: list[int], journal: Journal):
    """Measure what the journal does not hold yet (see the module docstring)."""
    torch = load_torch(args.torch_site)
    python = os.environ.get("ANSOR_BENCH_TVM_PYTHON")
    tvm_note = python or "not run (set ANSOR_BENCH_TVM_PYTHON)"
    print(
        f"load: {os.getloadavg()}; torch: {getattr(torch, '__version__', 'not importable')};"
        f" MetaSchedule: {tvm_note}",
        flush=True,
    )
    params = json.loads(args.policy_params) if args.policy_params else None
    total = len(threads) * len(names)
    t_start, done = time.perf_counter(), 0
    for thr in threads:
        if not journal.has(kind="bandwidth", threads=thr):
            journal.add(kind="bandwidth", threads=thr, gbs=stream_read_gbs(thr), stat="best of 15")
        for name in names:
            op, done = BY_NAME[name], done + 1
            eta = (time.perf_counter() - t_start) / max(done - 1, 1) * (total - done + 1)
            print(f"[{done}/{total}] {name}, {thr} thread(s) (about {eta / 60:.0f} min left)")
            task = None
            for seed in range(args.seeds):
                if all(
                    journal.has(kind="ours", op=name, threads=thr, trials=b, seed=seed)
                    for b in budgets
                ):
                    continue
                t0 = time.perf_counter()
                task, snaps, snap = tune(op, thr, budgets, seed, params, args.per_round)
                for b in budgets:
                    trace, tuner_s, wall, invalid = snaps[b]
                    ours = time_ours(task, trace, thr, op)
                    journal.add(
                        kind="ours", op=name, threads=thr, trials=b, seed=seed, **ours,
                        tuner_s=tuner_s, tune_s=wall, invalid=invalid, trace=trace,
                        per_round=args.per_round,
                        curve=[c for k, c in enumerate(snap.curve) if 16 * (k + 1) <= b],
                    )  # fmt: skip
                    print(
                        f"  seed {seed} @{b}: {op.flops / ours['ours_s'] / 1e9:8.2f} GFLOPS"
                        f" ({ours['ours_s'] * 1e6:.1f} us, tuned in {wall:.0f} s,"
                        f" err {ours['rel_error']:.1e})",
                        flush=True,
                    )
                print(f"  seed {seed} done in {time.perf_counter() - t0:.0f} s", flush=True)
            tensors = list((task or make_task(op, thr)).args)
            if not journal.has(kind="numpy", op=name, threads=thr):
                journal.add(kind="numpy", op=name, threads=thr, **time_numpy(op, tensors, thr))
            if torch is not None and not journal.has(kind="torch", op=name, threads=thr):
                t = time_torch(torch, op, tensors, thr)
                if t is not None:
                    journal.add(kind="torch", op=name, threads=thr, **t)
            for seed in range(args.ms_seeds if python else 0):
                if all(
                    journal.has(kind="ms", op=name, threads=thr, trials=b, seed=seed)
                    for b in budgets
                ):
                    continue
                base = ms_base(args.log_dir, name, thr, max(budgets), seed)
                print(f"  MetaSchedule seed {seed} ({base})", flush=True)
                if args.ms_reuse_only and not os.path.exists(base + ".json"):
                    print(f"  MetaSchedule: no tuning in {base} yet (--ms-reuse-only)")
                    continue
                checkpoints = ms_tune(python, name, thr, budgets, base, seed)
                if checkpoints is None:
                    continue
                retimed = ms_retime(python, name, thr, budgets, base)
                for b in budgets:
                    cp, rt = checkpoints.get(str(b)), retimed.get(str(b))
                    if cp is None or rt is None:
                        continue
                    ms_s = op.flops / rt["best_gflops"] / 1e9
                    cpu = rt.get("cpu_gflops")
                    journal.add(
                        kind="ms", op=name, threads=thr, trials=b, seed=seed, ms_s=ms_s,
                        rel_error=rt["rel_error"], tune_s=cp["wall_s"],
                        ms_cpu_s=op.flops / cpu / 1e9 if cpu else None,
                        tuner_gflops=cp["tuner_best_gflops"],
                    )  # fmt: skip
                    print(f"  MetaSchedule @{b}: {rt['best_gflops']:.2f} GFLOPS", flush=True)
            for b in budgets:  # every seed's best beside numpy and PyTorch, timed in turns
                if journal.has(kind="side_by_side", op=name, threads=thr, trials=b):
                    continue
                last = {
                    r["seed"]: r["trace"]
                    for r in journal.records
                    if r["kind"] == "ours" and r["op"] == name and r["threads"] == thr
                    and r["trials"] == b and r.get("trace")
                }  # fmt: skip
                if last:
                    base = ms_base(args.log_dir, name, thr, max(budgets), 0)
                    ms = ms_timer(python, op, thr, b, base)
                    sbs = side_by_side(task or make_task(op, thr), op, last, torch, thr, ms)
                    journal.add(kind="side_by_side", op=name, threads=thr, trials=b, **sbs)
                    ts = sorted(sbs["ours"].values())
                    print(
                        f"  side by side @{b}: seeds {ts[0] * 1e6:.1f}-{ts[-1] * 1e6:.1f} us"
                        f" (spread {ts[-1] / ts[0]:.2f}x), numpy {sbs['numpy'] * 1e6:.1f} us"
                        + (f", torch {sbs['torch'] * 1e6:.1f} us" if sbs["torch"] else "")
                        + (f", MetaSchedule {sbs['ms'] * 1e6:.1f} us" if sbs["ms"] else ""),
                        flush=True,
                    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ops", default=",".join(BY_NAME), help="comma-separated operator names")
    ap.add_argument("--threads", default="1", help="thread counts, e.g. 1,2")
    ap.add_argument("--trials", default="64", help="budgets, e.g. 64,256 (checkpoints of one")
    ap.add_argument("--long", action="store_true", help="same as --trials 64,256")
    ap.add_argument("--seeds", type=int, default=1, help="searches per operator (seeds 0..N-1)")
    ap.add_argument(
        "--per-round", type=int, default=16, help="programs measured per batch (TVM's default: 64)"
    )
    ap.add_argument("--ms-seeds", type=int, default=1, help="MetaSchedule searches per operator")
    ap.add_argument(
        "--ms-reuse-only",
        action="store_true",
        help="only re-time MetaSchedule tunings already in --log-dir (tune none)",
    )
    ap.add_argument("--torch-site", default=None, help="site-packages holding torch")
    ap.add_argument("--jsonl", default=None, help="the run's records (default: a new file)")
    ap.add_argument("--log-dir", default=None, help="MetaSchedule work dirs (default: by jsonl)")
    ap.add_argument("--report", action="store_true", help="print the tables of --jsonl only")
    ap.add_argument("--policy-params", default=None, help="SketchPolicy params as JSON")
    ap.add_argument("--json", default=None, help="also write the table rows here")
    args = ap.parse_args(argv)
    names = [n for n in args.ops.split(",") if n]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        ap.error(f"unknown operators {unknown}; choose from {sorted(BY_NAME)}")
    budgets = sorted(int(x) for x in ("64,256" if args.long else args.trials).split(","))
    threads = [int(x) for x in args.threads.split(",")]
    if args.jsonl is None:
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        args.jsonl = os.path.join(HERE, "results", time.strftime("ops-%Y%m%d-%H%M%S.jsonl"))
    args.log_dir = args.log_dir or os.path.splitext(args.jsonl)[0] + "_logs"
    journal = Journal(args.jsonl)
    print(f"records: {args.jsonl} ({len(journal.records)} already there)")
    if not args.report:
        run(args, names, budgets, threads, journal)
    recs = [r for r in journal.records if r.get("op") in names or r["kind"] == "bandwidth"]
    recs = [r for r in recs if r.get("threads") in threads]
    recs = [r for r in recs if r.get("trials") in (None, *budgets)]
    rows = build_rows(
        recs,
        {n: BY_NAME[n].flops for n in names},
        {n: BY_NAME[n].family for n in names},
    )
    bandwidth = {r["threads"]: r["gbs"] for r in recs if r["kind"] == "bandwidth"}
    print(format_report(rows, bandwidth))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "bandwidth": bandwidth}, fh, indent=1)
    return 0 if all(r["rel_error"] < 1e-3 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
