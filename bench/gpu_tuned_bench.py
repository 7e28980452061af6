"""bench_gpu.py's "tuned" section: the auto-scheduled conv2d and matmul on the GPU.

    .venv/bin/python bench/bench_gpu.py --section tuned [--trials 16] [--json out.json]

Each workload — the GPU tutorial's conv2d (ResNet-50's last layer, 7x7x512, 3x3, pad 1,
+ bias + relu) and a 512x512x512 matmul — is tuned for ``--trials`` candidates: measured
with CUDA events by LocalRunner where pycuda sees a GPU, otherwise checked on the GPU
emulator and estimated by the analytic model (EmulatedRunner; labelled "estimated"). For
the best program it reports

* the resources of its kernels: threads per block, registers per thread, shared bytes and
  spills from ptxas (NVRTC or nvcc, when one is installed), and the model's view
  (occupancy, what bounds it, coalescing, bank conflicts);
* its GFLOPS: estimated, and measured with ``time_evaluator`` on a GPU;
* with a GPU and PyTorch: PyTorch's cuDNN conv2d and cuBLAS matmul on the same shapes.

What cannot run here is printed as skipped, with the reason.
"""

from __future__ import annotations

import collections
import os
import tempfile
import time
from typing import Any

import numpy as np

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, topi
from ansor_lab.runtime.cuda_support import cuda_unavailable_reason
from ansor_lab.search.gpu_model import estimate


@auto_scheduler.register_workload(override=True)
def bench_gpu_conv2d(N, H, W, CO, CI, KH, KW, stride, padding):
    """The tutorial's conv2d + bias + relu."""
    data = te.placeholder((N, CI, H, W), name="data")
    kernel = te.placeholder((CO, CI, KH, KW), name="kernel")
    bias = te.placeholder((1, CO, 1, 1), name="bias")
    conv = topi.nn.conv2d_nchw(data, kernel, stride, padding, dilation=1, out_dtype="float32")
    return [data, kernel, bias, topi.nn.relu(conv + bias)]


@auto_scheduler.register_workload(override=True)
def bench_gpu_matmul(n):
    """C = A @ B, n x n."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    return [A, B, te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")]


WORKLOADS = {
    "conv2d (tutorial)": (bench_gpu_conv2d, (1, 7, 7, 512, 512, 3, 3, (1, 1), (1, 1))),
    "matmul 512": (bench_gpu_matmul, (512,)),
}


def _torch_gflops(name: str, args: tuple, flop: float) -> tuple[float | None, str]:
    """GFLOPS of PyTorch on the GPU (cuDNN / cuBLAS), or (None, why it was skipped)."""
    try:
        import torch  # noqa: PLC0415 - optional peer
    except ImportError:
        return None, "PyTorch is not installed"
    if not torch.cuda.is_available():
        return None, "PyTorch sees no CUDA GPU"
    dev = torch.device("cuda")
    if name.startswith("conv2d"):
        n, h, w, co, ci, kh, kw, stride, pad = args
        x = torch.rand(n, ci, h, w, device=dev)
        wt = torch.rand(co, ci, kh, kw, device=dev)
        b = torch.rand(co, device=dev)

        def run():
            return torch.relu(torch.nn.functional.conv2d(x, wt, b, stride, pad))
    else:
        a = torch.rand(args[0], args[0], device=dev)
        bb = torch.rand(args[0], args[0], device=dev)

        def run():
            return a @ bb

    for _ in range(3):
        run()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = 50
    start.record()
    for _ in range(reps):
        run()
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1e3 / reps
    return flop / seconds / 1e9, ""


def _resources(mod: Any) -> list[dict]:
    """ptxas's numbers per kernel (None where no CUDA compiler is installed)."""
    from ansor_lab.codegen.cuda_compile import available_compilers  # noqa: PLC0415

    if not available_compilers():
        return []
    compiled = mod.compiled
    return [
        {
            "kernel": name,
            "registers": r.registers,
            "shared_bytes": r.shared_bytes,
            "spill_stores": r.spill_stores,
            "spill_loads": r.spill_loads,
        }
        for name, r in compiled.resources.items()
    ]


def tune_one(name: str, trials: int, gpu: bool, log_dir: str) -> dict:
    """Tune one workload, then report the best program's resources and GFLOPS."""
    func, args = WORKLOADS[name]
    # on a GPU, the device's own target (its arch, SM count and limits) as the search sees it
    target = tvm.target.target_from_device(0) if gpu else tvm.target.Target("cuda")
    task = auto_scheduler.SearchTask(func=func, args=args, target=target)
    log = os.path.join(log_dir, f"{func.__name__}.json")
    runner = (
        auto_scheduler.LocalRunner(min_repeat_ms=300)
        if gpu
        else auto_scheduler.EmulatedRunner(timeout=120)
    )
    start = time.perf_counter()
    task.tune(
        auto_scheduler.TuningOptions(
            num_measure_trials=trials,
            num_measures_per_round=min(trials, 16),
            runner=runner,
            builder=auto_scheduler.LocalBuilder(timeout=120),
            measure_callbacks=[auto_scheduler.RecordToFile(log)],
            verbose=0,
        )
    )
    tune_s = time.perf_counter() - start
    records = list(auto_scheduler.load_records(log))
    ok = sum(r.error_no == 0 for _, r in records)
    errors = collections.Counter(r.error_kind for _, r in records if r.error_no)
    if not ok:  # nothing to apply: say why each candidate failed, and go on
        first = next(r.error_msg for _, r in records if r.error_no)
        print(f"{name}: no valid candidate in {len(records)} ({dict(errors)}); first error:\n"
              f"  {first[:1500]}")  # fmt: skip
        return {"workload": name, "trials": len(records), "valid": 0, "errors": dict(errors),
                "first_error": first[:4000], "tune_seconds": tune_s}  # fmt: skip
    sch, sargs = task.apply_best(log)
    mod = tvm.build(sch, sargs, target)
    ptxas = _resources(mod)
    est = estimate(mod.kernel_program, target, {r["kernel"]: r["registers"] for r in ptxas})
    row = {
        "workload": name,
        "trials": len(records),
        "valid": ok,
        "errors": dict(errors),
        "tune_seconds": tune_s,
        "timing": "measured" if gpu else "estimated",
        "estimated_gflops": task.flop_ct / est.seconds / 1e9,
        "model": [
            {
                "kernel": k.name,
                "grid": k.grid,
                "block": k.block,
                "registers": k.registers,
                "shared_bytes": k.shared_bytes,
                "occupancy": k.occupancy,
                "bound": k.bound,
                "coalescing": k.coalescing,
                "bank_conflict": k.worst_bank_conflict,
            }
            for k in est.breakdown
        ],
        "ptxas": ptxas,
    }
    if gpu:
        dev = tvm.cuda()
        arrays = [
            tvm.nd.array(np.random.uniform(size=[int(d) for d in t.shape]).astype("float32"), dev)
            for t in sargs
        ]
        timer = mod.time_evaluator(mod.entry_name, dev, min_repeat_ms=300)
        row["measured_gflops"] = task.flop_ct / timer(*arrays).mean / 1e9
    row["torch_gflops"], row["torch_skipped"] = (
        _torch_gflops(name, args, task.flop_ct) if gpu else (None, "no GPU here")
    )
    return row


def tuned_section(trials: int = 16) -> list[dict]:
    """Section "tuned": tune each workload and print what its best program uses and does."""
    why_not = cuda_unavailable_reason()
    gpu = not why_not
    how = "measured on the GPU" if gpu else f"estimated by the GPU model ({why_not})"
    print(f"\n(tuned) auto-scheduled kernels, {trials} trials each, timing: {how}")
    rows = []
    with tempfile.TemporaryDirectory() as log_dir:
        for name in WORKLOADS:
            row = tune_one(name, trials, gpu, log_dir)
            rows.append(row)
            if not row["valid"]:
                continue
            print(f"{name}: {row['valid']}/{row['trials']} valid candidates in "
                  f"{row['tune_seconds']:.0f} s; best {row['estimated_gflops']:.0f} GFLOPS "
                  "estimated" + (f", {row['measured_gflops']:.0f} GFLOPS measured"
                                 if "measured_gflops" in row else ""))  # fmt: skip
            for k in row["model"]:
                print(f"  {k['kernel']}: grid {k['grid']} block {k['block']}, "
                      f"{k['registers']} regs, {k['shared_bytes']} B shared, "
                      f"occupancy {k['occupancy']:.0%}, {k['bound']}-bound, coalescing "
                      f"{k['coalescing']:.0%}, bank conflict {k['bank_conflict']}-way")  # fmt: skip
            for r in row["ptxas"]:
                print(f"  ptxas {r['kernel']}: {r['registers']} regs, {r['shared_bytes']} B "
                      f"shared, spills {r['spill_stores']}/{r['spill_loads']}")  # fmt: skip
            if not row["ptxas"]:
                print("  ptxas: skipped (no CUDA compiler: pip install the cuda extra, or nvcc)")
            if row["torch_gflops"] is not None:
                print(f"  PyTorch (cuDNN/cuBLAS): {row['torch_gflops']:.0f} GFLOPS")
            else:
                print(f"  PyTorch (cuDNN/cuBLAS): skipped ({row['torch_skipped']})")
    return rows
