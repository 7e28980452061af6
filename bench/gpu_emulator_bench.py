"""The GPU emulator's speed on the GPU tutorial's conv2d (the "emulator" section of
bench/bench_gpu.py; also runs on its own).

    .venv/bin/python bench/gpu_emulator_bench.py [--repeat 3] [--json out.json]

The workload is ResNet-50's last layer (N=1, 7x7, CI=CO=512, 3x3, pad 1) + bias + relu,
0.231 GFLOP, with two hand GPU schedules:

- ``shared``: a block per 8 output channels, a thread per output pixel (49), each thread
  accumulating its 8 channels in a "local" cache; per 8 input channels the block fetches
  the padded input tile (8x9x9) and the weights (8x8x3x3) into shared memory
  cooperatively, between two barriers (64 tiles: 128 barriers per block);
- ``local``: the same without shared tiles (each thread reads global memory).

For each: compile seconds and run seconds (wall, and CPU seconds of this process) of
``check=False`` on one core, ``check=False`` with blocks on every core, and
``check=True`` (bounds, races, barriers, uninitialised shared reads), each run checked
against ``topi.testing.conv2d_nchw_python``. Not part of the test suite: the numbers
depend on the machine and its load (CPU seconds are the steadier number on a shared one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

import ansor_lab as tvm
from ansor_lab import te, topi
from ansor_lab.codegen.emulator import EmulatedProgram
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.topi.testing import conv2d_nchw_python

SHAPE = dict(N=1, H=7, W=7, CO=512, CI=512, KH=3, KW=3)
FLOP = 2 * 512 * 7 * 7 * 512 * 9


def conv2d_layer() -> list:
    """The tutorial's workload: data, kernel, bias, relu(conv2d + bias)."""
    n, h, w, co, ci, kh, kw = (SHAPE[k] for k in ("N", "H", "W", "CO", "CI", "KH", "KW"))
    data = te.placeholder((n, ci, h, w), name="data")
    kernel = te.placeholder((co, ci, kh, kw), name="kernel")
    bias = te.placeholder((1, co, 1, 1), name="bias")
    conv = topi.nn.conv2d_nchw(data, kernel, (1, 1), (1, 1), dilation=1, out_dtype="float32")
    out = topi.nn.relu(conv + bias)
    return [data, kernel, bias, out]


def conv2d_schedule(shared: bool = True):
    """(schedule, args) of the hand GPU schedule (see the module doc)."""
    data, kernel, bias, out = args = conv2d_layer()
    s = te.create_schedule(out.op)
    add = out.op.input_tensors[0]
    conv = add.op.input_tensors[0]
    pad = conv.op.input_tensors[0]
    CL = s.cache_write(conv, "local")
    tiles = []
    if shared:
        tiles = [s.cache_read(pad, "shared", [CL]), s.cache_read(kernel, "shared", [CL])]
    s[pad].compute_inline()
    s[add].compute_inline()
    s[conv].compute_inline()
    n, f, y, x = s[out].op.axis
    fo, fi = s[out].split(f, factor=8)
    yx = s[out].fuse(y, x)
    s[out].reorder(n, fo, yx, fi)
    s[out].bind(s[out].fuse(n, fo), te.thread_axis("blockIdx.x"))
    s[out].bind(yx, te.thread_axis("threadIdx.x"))
    s[CL].compute_at(s[out], yx)
    rc, ry, rx = s[CL].op.reduce_axis
    rco, rci = s[CL].split(rc, factor=8)
    s[CL].reorder(rco, rci, ry, rx, s[CL].op.axis[1])
    for T in tiles:
        s[T].compute_at(s[CL], rco)
        _, inner = s[T].split(s[T].fuse(*s[T].op.axis), factor=49)
        s[T].bind(inner, te.thread_axis("threadIdx.x"))
    return s, args


def _inputs() -> tuple[list, np.ndarray]:
    rng = np.random.default_rng(0)
    d = rng.uniform(-1, 1, (1, 512, 7, 7)).astype("float32")
    k = rng.uniform(-1, 1, (512, 512, 3, 3)).astype("float32")
    b = rng.uniform(-1, 1, (1, 512, 1, 1)).astype("float32")
    ref = np.maximum(conv2d_nchw_python(d, k, 1, 1) + b, 0)
    return [d, k, b], ref


def _time(prog: EmulatedProgram, inputs: list, ref: np.ndarray, repeat: int) -> dict:
    walls, cpus = [], []
    for _ in range(repeat):
        out = np.full(ref.shape, np.nan, "float32")
        w0, c0 = time.perf_counter(), time.process_time()
        prog([*inputs, out])
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    return {"run_s": statistics.median(walls), "run_cpu_s": statistics.median(cpus)}


MODES = {
    "unchecked, 1 core": dict(check=False, parallel=False),
    "unchecked, all cores": dict(check=False, parallel=True),
    "checked": dict(check=True, parallel=False),
}


def emulator_speed(repeat: int = 3) -> list[dict]:
    """The emulator section: one row per schedule and mode (printed as a table)."""
    inputs, ref = _inputs()
    rows = []
    print(f"\nemulator: tutorial conv2d ({FLOP / 1e9:.3f} GFLOP), median of {repeat} runs")
    print(f"{'schedule':8s} {'mode':22s} {'compile s':>9s} {'run s':>7s} "
          f"{'cpu s':>7s} {'GFLOP/s':>8s}")  # fmt: skip
    for shared in (True, False):
        s, args = conv2d_schedule(shared)
        program = split_kernels(tvm.lower(s, args)["main"])
        for mode, opts in MODES.items():
            c0 = time.perf_counter()
            prog = EmulatedProgram(program, **opts)
            row = {
                "schedule": "shared" if shared else "local",
                "mode": mode,
                "compile_s": time.perf_counter() - c0,
                **_time(prog, inputs, ref, repeat),
            }
            row["gflops"] = FLOP / row["run_s"] / 1e9
            rows.append(row)
            print(f"{row['schedule']:8s} {mode:22s} {row['compile_s']:9.2f} {row['run_s']:7.3f} "
                  f"{row['run_cpu_s']:7.3f} {row['gflops']:8.2f}")  # fmt: skip
    return rows


def main(argv: list | None = None) -> None:
    """Run the section on its own."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    rows = emulator_speed(args.repeat)
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"emulator": rows}, f, indent=1)


if __name__ == "__main__":
    main()
