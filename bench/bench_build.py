"""Build times, and the default (unscheduled) matmul next to numpy, measured in one run.

    .venv/bin/python bench/bench_build.py [--repeat 3] [--sizes 256 512] [--json out.json]
    .venv/bin/python bench/bench_build.py --records tune.json [--sample 24]

(a) build time: lower (schedule -> loop IR) and the whole ``tvm.build`` (lower + LLVM IR
    generation + optimisation + machine code) for a small elementwise op and for the
    1024x1024x1024 matmul with its default schedule; median of ``--repeat`` fresh builds.
(b) the default matmul at each ``--sizes`` timed with ``time_evaluator`` and numpy's matmul
    on one BLAS thread (threadpoolctl), GFLOPS of both and their ratio.
(c) with ``--records LOG``: what building the tuner's candidates costs, phase by phase
    (replaying the trace and the pass pipeline, LLVM IR generation, LLVM's O3 pipeline,
    machine code), the mean over ``--sample`` records of a tuning log, as a builder worker does it.
Not part of the test suite: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from contextlib import nullcontext

import numpy as np

import ansor_lab as tvm
from ansor_lab import te


def elementwise(n: int = 1024):
    """C = exp(A) * B + 1 over n x n: a small one-stage program."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = te.compute((n, n), lambda i, j: te.exp(A[i, j]) * B[i, j] + 1.0, name="C")
    return [A, B, C], f"elementwise exp(A)*B+1 {n}x{n}"


def matmul(n: int):
    """C = A @ B for n x n float32 matrices."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C], f"matmul {n}x{n}x{n}"


def time_build(make, repeat: int) -> dict:
    """Median lower time and build time over ``repeat`` fresh schedules."""
    lower_s, build_s = [], []
    for _ in range(repeat):
        args, name = make()
        s = te.create_schedule(args[-1].op)
        t0 = time.perf_counter()
        tvm.lower(s, args)
        lower_s.append(time.perf_counter() - t0)
        s = te.create_schedule(args[-1].op)
        t0 = time.perf_counter()
        tvm.build(s, args, target="llvm")
        build_s.append(time.perf_counter() - t0)
    return {
        "workload": name,
        "lower_ms": statistics.median(lower_s) * 1e3,
        "build_ms": statistics.median(build_s) * 1e3,
    }


def time_record_builds(log: str, sample: int) -> dict:
    """Mean seconds per phase of building ``sample`` records of a tuning log."""
    import random

    import llvmlite.binding as llvm

    from ansor_lab.codegen import llvm as codegen
    from ansor_lab.codegen.pipeline import prepare
    from ansor_lab.codegen.target import Target
    from ansor_lab.measure.workers import rebuild_schedule

    with open(log) as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    picked = random.Random(0).sample(records, min(sample, len(records)))
    phases = {"replay": [], "ir_gen": [], "llvm_opt": [], "machine_code": [], "ir_kb": []}
    for rec in picked:
        t0 = time.perf_counter()
        target = Target(rec["target"])
        func = prepare(rebuild_schedule(rec["dag"], rec["trace"]).mod["main"], target)
        t1 = time.perf_counter()
        text, _ = codegen.generate_ir(func, target, codegen.CodegenOptions(num_threads=1))
        mod = llvm.parse_assembly(text)
        tm = codegen.target_machine(target.mcpu, target.mattr)
        mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
        t2 = time.perf_counter()
        codegen.optimize(mod, tm)
        t3 = time.perf_counter()
        tm.emit_object(mod)
        t4 = time.perf_counter()
        for key, v in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, len(text) / 1024)):
            phases[key].append(v)
    out = {k: statistics.mean(v) for k, v in phases.items()}
    out["records"] = len(picked)
    out["log"] = log
    return out


def numpy_limits():
    """Limit numpy's BLAS to one thread (our default kernels use one core)."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return nullcontext(), "numpy: default BLAS threads (threadpoolctl missing)"
    blas = [
        f"{i.get('internal_api')} {i.get('version')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    note = f"numpy: {', '.join(blas) or 'BLAS'}, 1 thread"
    return threadpool_limits(limits=1, user_api="blas"), note


def time_matmul(n: int, repeat: int) -> dict:
    """The default-schedule matmul and numpy's, median times and GFLOPS."""
    args, name = matmul(n)
    f = tvm.build(te.create_schedule(args[-1].op), args, target="llvm")
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    f(a, b, c)
    err = float(np.max(np.abs(c - a @ b)) / n)
    ours = f.time_evaluator(number=1, repeat=repeat)(a, b, c).median
    limit, _ = numpy_limits()
    with limit:
        np.matmul(a, b, out=c)  # warm-up, then calibrate to ~50 ms per repeat
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        number = max(1, int(0.05 / max(time.perf_counter() - t0, 1e-7)))
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(number):
                np.matmul(a, b, out=c)
            times.append((time.perf_counter() - t0) / number)
    theirs = statistics.median(times)
    flops = 2.0 * n**3
    return {
        "workload": name,
        "ours_ms": ours * 1e3,
        "ours_gflops": flops / ours / 1e9,
        "numpy_ms": theirs * 1e3,
        "numpy_gflops": flops / theirs / 1e9,
        "numpy_over_ours": ours / theirs,
        "rel_error": err,
    }


def main(argv: list[str] | None = None) -> int:
    """Run both benchmarks and print the tables."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3, help="measurements per number (median)")
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[256, 512],
        help="matmul sizes to time against numpy",
    )
    p.add_argument("--build-size", type=int, default=1024, help="matmul size for build time")
    p.add_argument("--json", help="also write the results to this JSON file")
    p.add_argument(
        "--records", metavar="LOG", help="only (c): build phases of candidates from this tuning log"
    )
    p.add_argument("--sample", type=int, default=24, help="records to build with --records")
    args = p.parse_args(argv)
    if args.records:
        r = time_record_builds(args.records, args.sample)
        print(f"(c) building {r['records']} candidates of {r['log']}: mean seconds per candidate")
        print(f"{'replay':>8}{'IR gen':>9}{'LLVM O3':>9}{'mc':>8}{'total':>8}{'IR (KiB)':>10}")
        total = r["replay"] + r["ir_gen"] + r["llvm_opt"] + r["machine_code"]
        print(
            f"{r['replay']:>8.3f}{r['ir_gen']:>9.3f}{r['llvm_opt']:>9.3f}"
            f"{r['machine_code']:>8.3f}{total:>8.3f}{r['ir_kb']:>10.0f}"
        )
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(r, fh, indent=2)
        return 0

    target = tvm.Target("llvm")
    _, blas = numpy_limits()
    print(
        f"ansor_lab {tvm.__version__} | python {platform.python_version()} | "
        f"numpy {np.__version__} | target {target}"
    )
    print(blas)

    builds = [
        time_build(elementwise, args.repeat),
        time_build(lambda: matmul(args.build_size), args.repeat),
    ]
    print(f"\n(a) build time, median of {args.repeat} fresh builds")
    print(f"{'workload':<34}{'lower (ms)':>12}{'build (ms)':>12}")
    for r in builds:
        print(f"{r['workload']:<34}{r['lower_ms']:>12.1f}{r['build_ms']:>12.1f}")
    print("build = lower + LLVM IR generation + optimisation + machine code")

    runs = [time_matmul(n, args.repeat) for n in args.sizes]
    print(f"\n(b) default (scalar, unscheduled) matmul vs numpy, median of {args.repeat}")
    print(
        f"{'workload':<22}{'ours (ms)':>11}{'GFLOPS':>9}{'numpy (ms)':>12}{'GFLOPS':>9}"
        f"{'numpy speed-up':>16}"
    )
    for r in runs:
        print(
            f"{r['workload']:<22}{r['ours_ms']:>11.2f}{r['ours_gflops']:>9.2f}"
            f"{r['numpy_ms']:>12.3f}{r['numpy_gflops']:>9.2f}{r['numpy_over_ours']:>15.1f}x"
        )
        if r["rel_error"] > 1e-4:
            print(f"  WARNING: result differs from numpy (relative error {r['rel_error']:.2g})")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {"target": str(target), "numpy": blas, "build": builds, "matmul": runs},
                fh,
                indent=2,
            )
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
