"""``ansor-lab info`` (this machine) and ``ansor-lab demo`` (the whole pipeline once)."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import numpy as np

from .. import __version__

#: CPU features worth naming, in the order a reader looks for them.
NOTABLE_FEATURES = (
    "sse4.2",
    "avx",
    "avx2",
    "fma",
    "avx512f",
    "avx512bw",
    "avx512dq",
    "avx512vl",
    "avx512vnni",
    "avx512bf16",
    "avx512fp16",
    "amx-tile",
    "amx-int8",
    "amx-bf16",
    "neon",
    "sve",
    "sve2",
)


def cpu_feature_summary(features: str) -> str:
    """The notable enabled features of an LLVM feature string ("+avx2,-amx-tile,...")."""
    enabled = {f[1:] for f in features.split(",") if f.startswith("+")}
    named = [f for f in NOTABLE_FEATURES if f in enabled]
    return f"{', '.join(named) or 'none of the usual SIMD sets'} ({len(enabled)} features enabled)"


def find_nvcc() -> str | None:
    """Path of ``nvcc`` on PATH or in the default CUDA location, or None."""
    path = shutil.which("nvcc")
    if path is None and os.path.exists("/usr/local/cuda/bin/nvcc"):
        path = "/usr/local/cuda/bin/nvcc"
    return path


def _nvcc_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"(could not run: {exc})"
    for line in out.stdout.splitlines():
        if "release" in line:
            return line.strip()
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "(unknown version)"


def cmd_info(args: argparse.Namespace) -> int:
    """Print the version, the default target and what hardware/toolchains are usable."""
    import llvmlite
    import llvmlite.binding as llvm

    from ..codegen.cuda_driver import driver
    from ..codegen.target import Target, host_cpu
    from ..runtime.cuda_support import cuda_available

    target = Target("llvm")
    cpu_name, features = host_cpu()
    nvcc = find_nvcc()
    rows = [
        ("ansor_lab", __version__),
        ("python", f"{platform.python_version()} ({sys.executable})"),
        ("numpy", np.__version__),
        ("llvmlite", f"{llvmlite.__version__} (LLVM {'.'.join(map(str, llvm.llvm_version_info))})"),
        ("target", str(target)),
        ("cpu", f"{cpu_name} on {platform.machine()}"),
        ("cpu features", cpu_feature_summary(features)),
        ("cores", f"{target.num_cores} usable ({os.cpu_count()} online)"),
        ("simd width", f"{target.vector_bytes * 8} bits ({target.vector_lanes_f32} float32 lanes)"),
        (
            "caches",
            f"L1d {target.l1_bytes // 1024} KiB, L2 {target.l2_bytes // 1024} KiB, "
            f"L3 {target.l3_bytes // 1024} KiB",
        ),
        ("nvcc", f"{nvcc}: {_nvcc_version(nvcc)}" if nvcc else "not found"),
        (
            "cuda gpu",
            f"available ({driver().name} found a device)"
            if cuda_available()
            else "not available (no pycuda or cuda-python, or no GPU/driver); CPU targets work",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


def _numpy_threads(n: int) -> tuple[AbstractContextManager, str]:
    """A context limiting numpy's BLAS to ``n`` threads, and a note saying what was done."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return nullcontext(), "numpy threads: library default (threadpoolctl not installed)"
    return threadpool_limits(limits=n, user_api="blas"), f"numpy BLAS limited to {n} thread(s)"


def time_numpy(fn: Callable[[], object], number: int, repeat: int) -> float:
    """Median over ``repeat`` of the mean time of ``number`` calls of ``fn`` (one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def cmd_demo(args: argparse.Namespace) -> int:
    """Build the matmul + exp example, check it against numpy, time it next to numpy."""
    from .. import build, lower, te

    n = args.size
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, n), lambda i, j: te.exp(C[i, j]), name="D")
    dag = te.ComputeDAG([A, B, D])
    print(f"== the computation ({dag.flop_ct:.4g} FLOPs)")
    print(dag)

    s = te.create_schedule(D.op)
    print("\n== lowered loop IR (default schedule)")
    print(lower(s, [A, B, D]).script())

    start = time.perf_counter()
    f = build(s, [A, B, D], target="llvm")
    build_s = time.perf_counter() - start
    print(f"\n== built for {f.target} in {build_s * 1e3:.1f} ms")

    rng = np.random.default_rng(0)
    a = (rng.random((n, n), dtype=np.float32) / n).astype("float32")
    b = rng.random((n, n), dtype=np.float32)
    d = np.empty((n, n), dtype="float32")
    f(a, b, d)
    expected = np.exp(a.astype("float64") @ b.astype("float64"))
    err = float(np.max(np.abs(d - expected)))
    ok = bool(np.allclose(d, expected, rtol=1e-4, atol=1e-5))
    print(f"max abs error vs numpy: {err:.3g} ({'OK' if ok else 'MISMATCH'})")

    ours = f.time_evaluator(number=args.number, repeat=args.repeat)(a, b, d).median
    limit, note = _numpy_threads(1)
    out = np.empty_like(d)
    with limit:
        ref = time_numpy(lambda: np.exp(np.matmul(a, b), out=out), args.number, args.repeat)
    flops = dag.flop_ct
    print(f"\n== time, n={n} ({note}; median of {args.repeat} x {args.number} runs)")
    print(f"{'':<24}{'time (ms)':>12}{'GFLOPS':>10}")
    print(f"{'ansor_lab (default)':<24}{ours * 1e3:>12.3f}{flops / ours / 1e9:>10.2f}")
    print(f"{'numpy exp(a @ b)':<24}{ref * 1e3:>12.3f}{flops / ref / 1e9:>10.2f}")
    if ours >= ref:
        print(
            f"numpy is {ours / ref:.1f}x faster: the default schedule is a scalar loop nest; "
            "schedule primitives (split, vectorize, parallel...) close the gap."
        )
    else:
        print(f"ansor_lab is {ref / ours:.1f}x faster than numpy here.")
    return 0 if ok else 1
