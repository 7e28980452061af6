"""TVM MetaSchedule side of bench/bench_tune.py (runs with the python of a TVM venv).

    TVM_NUM_THREADS=1 PYTHONPATH=bench/tvm_side /root/tvmvenv/bin/python \
        bench/tvm_side/ms_tune.py --spec '{"workload": {"name": "matmul", "n": 512},
        "budgets": [64], "threads": 1, "work_dir": "/tmp/ms"}' --out /tmp/ms.json

Writes the same workloads as bench_tune.py with tvm.te, tunes them with
``tvm.s_tir.meta_schedule.tune_tir`` (budget max(budgets), 64 trials per iteration,
the default runner settings, which match ansor_lab's: number=3, repeat=1,
min_repeat_ms=100), snapshots the best schedule and the wall clock when the trial count
reaches each budget (a measure callback), then re-times each snapshot outside the tuner
with ``time_evaluator(number=5, repeat=15, min_repeat_ms=50)`` and checks it against numpy
(checked whole; timed as MetaSchedule's builder times it, weight repacks removed:
``deployed_build``).
Output JSON: {"checkpoints": {budget: {best_gflops, best_s, wall_s, tuner_best_gflops,
trials, rel_error}}, "info": {...}}. apache-tvm is never a dependency of ansor_lab;
this file is only run by the benchmark, in a separate venv.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time

import numpy as np


def workload(spec: dict):
    """(tensors, flops, numpy function) of a workload written with tvm.te."""
    from tvm import te, topi

    name = spec["name"]
    if name == "op":  # an operator of bench/bench_ops.py (bench/ops_defs.py on PYTHONPATH)
        from ops_defs import BY_NAME

        op = BY_NAME[spec["op"]]
        return op.build(te, topi), op.flops, op.numpy_fn
    if name == "matmul":
        n = spec["n"]
        A = te.placeholder((n, n), name="A")
        B = te.placeholder((n, n), name="B")
        k = te.reduce_axis((0, n), name="k")
        C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
        return [A, B, C], 2.0 * n**3, np.matmul
    if name == "chain":
        n = spec["n"]
        A = te.placeholder((n, n), name="A")
        B = te.placeholder((n, n), name="B")
        E = te.placeholder((n, n), name="E")
        k = te.reduce_axis((0, n), name="k")
        C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
        D = te.compute((n, n), lambda i, j: te.exp(C[i, j]), name="D")
        k2 = te.reduce_axis((0, n), name="k2")
        F = te.compute((n, n), lambda i, j: te.sum(D[i, k2] * E[k2, j], axis=k2), name="F")
        return [A, B, E, F], 4.0 * n**3 + n * n, lambda a, b, e: np.exp(a @ b) @ e
    if name == "conv_bias_relu":
        n, c, hw, kk, r, pad = (spec[x] for x in ("n", "c", "hw", "k", "r", "pad"))
        data = te.placeholder((n, c, hw, hw), name="data")
        kernel = te.placeholder((kk, c, r, r), name="kernel")
        bias = te.placeholder((kk,), name="bias")
        conv = topi.nn.conv2d_nchw(data, kernel, 1, pad, 1, out_dtype="float32")
        out = te.compute(
            conv.shape,
            lambda b, f, y, x: te.max(conv[b, f, y, x] + bias[f], te.const(0.0, "float32")),
            name="T_relu",
        )
        oh = hw + 2 * pad - r + 1
        flops = 2.0 * n * kk * oh * oh * c * r * r + 2.0 * n * kk * oh * oh
        return [data, kernel, bias, out], flops, lambda d, w, b: _np_conv(d, w, b, pad)
    raise SystemExit(f"unknown workload {name!r}")


def _np_conv(data, kernel, bias, pad):
    n, c, h, w = data.shape
    k, _, r, s = kernel.shape
    oh, ow = h + 2 * pad - r + 1, w + 2 * pad - s + 1
    x = np.pad(data, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    v = np.lib.stride_tricks.sliding_window_view(x, (r, s), axis=(2, 3))
    cols = np.ascontiguousarray(v.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * r * s, oh * ow)
    out = np.matmul(kernel.reshape(k, c * r * s), cols).reshape(n, k, oh, ow)
    return np.maximum(out + bias[None, :, None, None], 0)


def host_mcpu() -> str:
    """LLVM's name for this machine's CPU (``znver3``, ``rocketlake``, ...)."""
    from tvm.target import codegen

    return codegen.llvm_get_system_cpu()


def tree_cpu_seconds() -> float:
    """CPU seconds used by this process and its children, live or finished (/proc)."""
    import resource

    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        ru = resource.getrusage(who)
        total += ru.ru_utime + ru.ru_stime
    tick = os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            total += sum(int(x) for x in fields[11:15]) / tick
    return total


def deployed_build(mod, target, dev, rng):
    """The program as MetaSchedule's builder times it, and as a model with constant weights
    runs it: each weight layout rewrite (a ``layout_rewrite_preproc`` block repacking a
    weight, which deployment runs once at compile time) removed by the builder's own
    ``RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)``. Returns the function and
    arguments in its parameters' shapes (the repacked ones), random values (timing only:
    the answer is checked on the whole program). Timing the whole program charged a GEMV's
    9 MiB repack to every call: 1.1 GFLOPS re-timed against the tuner's 27.5.
    """
    import tvm
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    lib = tvm.compile(mod, target=target)
    f = lib.jit() if hasattr(lib, "jit") else lib
    func = mod["main"]
    args = []
    for p in func.params:  # TVM 0.27: a parameter is its buffer (older: buffer_map)
        buf = func.buffer_map[p] if hasattr(func, "buffer_map") else p
        shape = [int(d) for d in buf.shape]
        args.append(tvm.runtime.tensor(rng.uniform(-1, 1, size=shape).astype(buf.dtype), dev))
    return f, args


def cpu_times(fn, repeat: int, min_repeat_ms: float) -> list[float]:
    """CPU seconds per call (process clock), one entry per repeat of >= min_repeat_ms."""
    fn()
    t0 = time.process_time()
    fn()
    number = max(1, int(min_repeat_ms / 1e3 / max(time.process_time() - t0, 1e-7)) + 1)
    out = []
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(number):
            fn()
        out.append((time.process_time() - t0) / number)
    return out


def main() -> int:
    """Tune, snapshot, re-time, write JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spec", required=True, help="JSON: workload, budgets, threads, work_dir")
    p.add_argument("--out", required=True, help="where to write the result JSON")
    args = p.parse_args()
    spec = json.loads(args.spec)
    budgets = sorted(int(b) for b in spec["budgets"])
    threads = int(spec["threads"])
    timing = spec.get("timing") or {"number": 5, "repeat": 15, "min_repeat_ms": 50}
    round_size = int(spec.get("round_size", 64))
    work_dir = spec.get("work_dir") or tempfile.mkdtemp(prefix="ms_")
    os.makedirs(work_dir, exist_ok=True)
    os.environ.setdefault("TVM_NUM_THREADS", str(threads))

    t_import = time.perf_counter()
    import ms_init
    import tvm
    from tvm import te
    from tvm.ir.utils import derived_object
    from tvm.s_tir import meta_schedule as ms

    import_s = time.perf_counter() - t_import
    tensors, flops, np_fn = workload(spec["workload"])
    mod = tvm.IRModule({"main": te.create_prim_func(tensors)})
    target = tvm.target.Target(
        {"kind": "llvm", "mcpu": spec.get("mcpu") or host_mcpu(), "num-cores": threads}
    )

    snaps: dict[int, dict] = {}
    state = {"trials": 0, "best": math.inf, "best_mod": None}

    @derived_object
    class Snapshot(ms.measure_callback.PyMeasureCallback):
        """Keep the best schedule so far and snapshot it at each budget."""

        def apply(
            self, task_scheduler, task_id, measure_candidates, builder_results, runner_results
        ) -> None:
            for cand, br, rr in zip(measure_candidates, builder_results, runner_results):
                state["trials"] += 1
                if br.error_msg is None and rr.error_msg is None and rr.run_secs:
                    cost = float(np.mean([float(x) for x in rr.run_secs]))
                    if cost < state["best"]:
                        state["best"] = cost
                        state["best_mod"] = cand.sch.mod
            for b in budgets:
                if b not in snaps and state["trials"] >= b:
                    snaps[b] = {
                        "trials": state["trials"],
                        "wall_s": time.perf_counter() - t0,
                        "cpu_s": tree_cpu_seconds() - cpu0,
                        "tuner_best_gflops": flops / state["best"] / 1e9,
                        "mod": state["best_mod"],
                    }

    builder = ms.builder.LocalBuilder(
        max_workers=max(1, min(os.cpu_count() or 1, 2)),
        timeout_sec=120,
        initializer=ms_init.init_worker,
    )
    runner = ms.runner.LocalRunner(timeout_sec=30)
    callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [Snapshot()]
    t0 = time.perf_counter()
    cpu0 = tree_cpu_seconds()
    ms.tune_tir(
        mod,
        target,
        work_dir,
        max_trials_global=max(budgets),
        num_trials_per_iter=round_size,
        builder=builder,
        runner=runner,
        measure_callbacks=callbacks,
        num_tuning_cores=threads,
        seed=spec.get("seed"),
    )
    wall = time.perf_counter() - t0
    if max(budgets) not in snaps and state["best_mod"] is not None:  # space ran out early
        snaps[max(budgets)] = {
            "trials": state["trials"],
            "wall_s": wall,
            "cpu_s": 0.0,
            "tuner_best_gflops": flops / state["best"] / 1e9,
            "mod": state["best_mod"],
        }
    if max(budgets) in snaps:
        snaps[max(budgets)]["wall_s"] = wall
        snaps[max(budgets)]["cpu_s"] = tree_cpu_seconds() - cpu0

    rng = np.random.default_rng(0)
    out = {}
    for b, s in sorted(snaps.items()):
        if s["mod"] is None:
            continue
        lib = tvm.compile(s["mod"], target=target)
        f = lib.jit() if hasattr(lib, "jit") else lib
        dev = tvm.cpu(0)
        arrays = [
            rng.uniform(-1, 1, size=[int(d) for d in t.shape]).astype("float32") for t in tensors
        ]
        nd = [tvm.runtime.tensor(a, dev) for a in arrays]
        f["main"](*nd)
        got = nd[-1].numpy()
        want = np_fn(*[a.astype("float64") for a in arrays[:-1]])
        err = float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))
        f, nd = deployed_build(s["mod"], target, dev, rng)  # timed as MetaSchedule times it
        ev = f.time_evaluator(
            "main",
            dev,
            number=timing["number"],
            repeat=timing["repeat"],
            min_repeat_ms=int(timing["min_repeat_ms"]),
        )
        res = ev(*nd)
        med = statistics.median(list(res.results))
        cpu_gflops = None
        if threads == 1:  # the CPU clock, as bench_tune.py measures it for ours and numpy
            main_fn = f["main"]
            cpu = cpu_times(
                lambda fn=main_fn, a=nd: fn(*a), timing["repeat"], timing["min_repeat_ms"]
            )
            cpu_gflops = flops / statistics.median(cpu) / 1e9
        out[b] = {
            "trials": s["trials"],
            "wall_s": s["wall_s"],
            "cpu_s": s["cpu_s"],
            "tuner_best_gflops": s["tuner_best_gflops"],
            "best_s": med,
            "best_gflops": flops / med / 1e9,
            "cpu_gflops": cpu_gflops,
            "rel_error": err,
        }
        print(
            f"MS {spec['workload']['name']} t{threads} @{b}: {flops / med / 1e9:.1f} GFLOPS "
            f"(cpu clock {cpu_gflops or 0:.1f}, tuner said {s['tuner_best_gflops']:.1f}), "
            f"wall {s['wall_s']:.0f} s, rel err {err:.1e}",
            flush=True,
        )
    info = {
        "tvm": tvm.__version__,
        "import_s": import_s,
        "target": str(target),
        "work_dir": work_dir,
        "total_trials": state["trials"],
    }
    with open(args.out, "w") as fh:
        json.dump({"checkpoints": out, "info": info}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
