"""The GPU half, measured: compiling the generated CUDA C (NVRTC vs nvcc) and what ptxas
says each kernel uses. Other sections (emulator speed, tuned kernels, GFLOPS on a GPU)
are added beside these as functions of their own.

    .venv/bin/python bench/bench_gpu.py [--section compile resources] [--arch sm_80 ...]
        [--repeat 3] [--json out.json]

(a) ``compile``: seconds per program (all its kernels in one translation unit) to compile
    with NVRTC (in process, cuda-python) and with nvcc (a subprocess: cudafe, cicc,
    ptxas, fatbinary), median of ``--repeat``, for each ``--arch``.
(b) ``resources``: registers per thread, static shared bytes, spills and stack of every
    kernel of the hand-scheduled workloads (tests/codegen/cuda_workloads.py) and the
    tutorial's conv2d (ResNet-50's last layer, 7x7x512, 3x3, pad 1, + bias + relu) with a
    hand GPU schedule, for each ``--arch``.
Not part of the test suite: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.cuda_compile import compile_cuda, nvcc_path, nvrtc_available

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "codegen"))
from cuda_workloads import WORKLOADS, bind_flat  # noqa: E402
from gpu_tuned_bench import tuned_section  # noqa: E402 - this directory: the tuned section


def tutorial_conv2d():
    """The GPU tutorial's conv2d (N=1, H=W=7, CI=CO=512, 3x3, pad 1) + bias + relu, with
    a plain GPU schedule: one output pixel per thread, 7x7 threads, a block per channel."""
    n, ci, h, w, co, k = 1, 512, 7, 7, 512, 3
    X = te.placeholder((n, ci, h, w), name="data")
    W = te.placeholder((co, ci, k, k), name="kernel")
    bias = te.placeholder((1, co, 1, 1), name="bias")
    P = te.compute(
        (n, ci, h + 2, w + 2),
        lambda a, b, y, x: te.if_then_else(
            te.all(y >= 1, y <= h, x >= 1, x <= w), X[a, b, y - 1, x - 1], 0.0
        ),
        name="pad",
    )
    rc = te.reduce_axis((0, ci), name="rc")
    ry = te.reduce_axis((0, k), name="ry")
    rx = te.reduce_axis((0, k), name="rx")
    conv = te.compute(
        (n, co, h, w),
        lambda a, o, y, x: te.sum(P[a, rc, y + ry, x + rx] * W[o, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv",
    )
    out = te.compute(
        (n, co, h, w),
        lambda a, o, y, x: te.max(conv[a, o, y, x] + bias[0, o, 0, 0], 0.0),
        name="relu",
    )
    s = te.create_schedule(out.op)
    bind_flat(s, P, 128)
    cl = s.cache_write(conv, "local")
    s[conv].compute_inline()
    a, o, y, x = out.op.axis
    s[out].bind(s[out].fuse(a, o), te.thread_axis("blockIdx.x"))
    s[out].bind(s[out].fuse(y, x), te.thread_axis("threadIdx.x"))
    s[cl].compute_at(s[out], s[out].leaf_iter_vars[-1])
    rc_o, rc_i = s[cl].split(s[cl].op.reduce_axis[0], factor=4)
    s[cl].unroll(rc_i)
    s[cl].unroll(s[cl].op.reduce_axis[2])
    return s, [X, W, bias, out]


def programs() -> dict:
    """name -> CUDAModule of every program measured here."""
    out = {}
    for name, make in WORKLOADS.items():
        s, args = make()
        out[name] = tvm.build(s, args, target="cuda")
    s, args = tutorial_conv2d()
    out["tutorial_conv2d"] = tvm.build(s, args, target="cuda")
    return out


def compile_times(mods: dict, archs: list, repeat: int) -> list[dict]:
    """Section (a): median compile seconds per program and compiler."""
    compilers = [c for c, ok in (("nvrtc", nvrtc_available()), ("nvcc", nvcc_path())) if ok]
    rows = []
    for arch in archs:
        for name, mod in mods.items():
            row = {"program": name, "arch": arch, "kernels": len(mod.kernel_program.kernels)}
            for c in compilers:
                times = [compile_cuda(mod.get_source(), arch, c).seconds for _ in range(repeat)]
                row[c] = statistics.median(times)
            rows.append(row)
    print(f"\n(a) compile time per program, median of {repeat} (seconds)")
    print(f"{'program':20s} {'arch':6s} {'kernels':>7s} " + " ".join(f"{c:>8s}" for c in compilers)
          + ("  nvcc/nvrtc" if len(compilers) == 2 else ""))  # fmt: skip
    for r in rows:
        ratio = f"  {r['nvcc'] / r['nvrtc']:9.1f}x" if len(compilers) == 2 else ""
        print(f"{r['program']:20s} {r['arch']:6s} {r['kernels']:7d} "
              + " ".join(f"{r[c]:8.3f}" for c in compilers) + ratio)  # fmt: skip
    for c in compilers:
        per_kernel = sum(r[c] for r in rows) / sum(r["kernels"] for r in rows)
        print(f"mean {c} seconds per kernel: {per_kernel:.3f}")
    return rows


def resource_usage(mods: dict, archs: list) -> list[dict]:
    """Section (b): what ptxas reports per kernel (NVRTC, else nvcc)."""
    rows = []
    print("\n(b) resources per kernel (registers/thread, static shared bytes, spills, stack)")
    print(f"{'kernel':34s} {'arch':6s} {'threads':>7s} {'regs':>5s} {'smem':>6s} "
          f"{'spill st/ld':>11s} {'stack':>5s}")  # fmt: skip
    for arch in archs:
        for name, mod in mods.items():
            compiled = mod.compile("auto", arch=arch)
            for k in mod.kernel_program.kernels:
                res = compiled.resources[k.name]
                rows.append({"program": name, "arch": arch, "kernel": k.name,
                             "threads": k.threads_per_block, **res.__dict__})  # fmt: skip
                spills = f"{res.spill_stores:5d}/{res.spill_loads:<5d}"
                label = f"{name}/{k.name[-7:]}"
                print(f"{label:34s} {arch:6s} {k.threads_per_block:7d} {res.registers:5d} "
                      f"{res.shared_bytes:6d} {spills} {res.stack_bytes:5d}")  # fmt: skip
    return rows


SECTIONS = {"compile": compile_times, "resources": resource_usage, "tuned": tuned_section}


def main(argv: list | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--section", nargs="*", default=list(SECTIONS), choices=list(SECTIONS))
    ap.add_argument("--arch", nargs="*", default=["sm_80"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default="")
    ap.add_argument("--trials", type=int, default=16, help="candidates per tuned workload")
    args = ap.parse_args(argv)
    mods = programs()
    results = {}
    if "compile" in args.section:
        results["compile"] = compile_times(mods, args.arch, args.repeat)
    if "resources" in args.section:
        results["resources"] = resource_usage(mods, args.arch)
    if "tuned" in args.section:
        results["tuned"] = tuned_section(args.trials)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
