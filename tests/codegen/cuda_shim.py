"""Run generated CUDA C on the CPU: g++ with a small CUDA shim, real threads, real barriers.

A test oracle for the CUDA C *text* (the GPU emulator checks the loop IR; this checks
what the generator printed). Each block runs its threads as std::threads meeting at a
std::barrier for ``__syncthreads()``; blocks run one after another, so ``__shared__``
arrays are function-level statics (one copy, used by one block at a time).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

import numpy as np

SHIM = r"""
#include <barrier>
#include <cmath>
#include <cstdint>
#include <climits>
#include <algorithm>
#include <thread>
#include <vector>
#include <cstring>
using std::max; using std::min;
struct uint3_ { unsigned x, y, z; };
thread_local uint3_ threadIdx, blockIdx;
thread_local std::barrier<>* shim_barrier;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
inline void __syncthreads() { shim_barrier->arrive_and_wait(); }
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(8) int2 { int x, y; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline float2 make_float2(float a, float b) { return {a, b}; }
inline int4 make_int4(int a, int b, int c, int d) { return {a, b, c, d}; }
inline int2 make_int2(int a, int b) { return {a, b}; }
inline float __int_as_float(unsigned v) { float f; std::memcpy(&f, &v, 4); return f; }
inline double __longlong_as_double(long long v) { double f; std::memcpy(&f, &v, 8); return f; }
template <class R, class F> inline R sat_(F x) {
  if (std::isnan(x)) return 0;
  if (x >= (F)std::numeric_limits<R>::max()) return std::numeric_limits<R>::max();
  if (x <= (F)std::numeric_limits<R>::min()) return std::numeric_limits<R>::min();
  return (R)x;
}
inline int __float2int_rz(float x) { return sat_<int>(x); }
inline long long __float2ll_rz(float x) { return sat_<long long>(x); }
inline int __double2int_rz(double x) { return sat_<int>(x); }
inline long long __double2ll_rz(double x) { return sat_<long long>(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
typedef _Float16 __half;  // GCC's IEEE half stands in for cuda_fp16.h's
inline float __half2float(__half h) { return (float)h; }
inline __half __float2half_rn(float f) { return (__half)f; }
"""


def shim_available() -> bool:
    """g++ with C++20 (std::barrier) is here."""
    return shutil.which("g++") is not None


def _driver(plan) -> str:
    """``extern "C" void run_all(void** args)``: every launch of the plan, in order."""
    names = list(plan.params) + [t[0] for t in plan.temporaries]
    out = ['extern "C" void run_all(void** args) {']
    for i, name in enumerate(names):
        out.append(f"  void* buf_{i} = args[{i}];  // {name}")
    for launch in plan.launches:
        gx, gy, gz = launch.grid
        bx, by, bz = launch.block
        nthreads = bx * by * bz
        call_args = ", ".join(f"buf_{names.index(a)}" for a in launch.args)
        out.append(f"  for (unsigned b = 0; b < {gx * gy * gz}u; ++b) {{")
        out.append(f"    std::barrier<> bar({nthreads});")
        out.append("    std::vector<std::thread> ts;")
        out.append(f"    for (unsigned t = 0; t < {nthreads}u; ++t) ts.emplace_back([&, b, t] {{")
        out.append(f"      blockIdx = {{b % {gx}u, (b / {gx}u) % {gy}u, b / {gx * gy}u}};")
        out.append(f"      threadIdx = {{t % {bx}u, (t / {bx}u) % {by}u, t / {bx * by}u}};")
        out.append("      shim_barrier = &bar;")
        out.append(f"      call_{launch.name}({call_args});")
        out.append("    });")
        out.append("    for (auto& th : ts) th.join();")
        out.append("  }")
    out.append("}")
    return "\n".join(out)


_CACHE: dict = {}


def _translation(source: str, plan, prefix: str) -> str:
    """One program as C++ in its own namespace, with ``extern "C" <prefix>_run``."""
    body = source.replace('extern "C" __global__', "__global__")
    body = body.replace("#include <cuda_fp16.h>", "")
    wrappers = []
    for launch in plan.launches:
        params = ", ".join(f"void* a{i}" for i in range(len(launch.args)))
        args = ", ".join(f"a{i}" for i in range(len(launch.args)))
        wrappers.append(
            f"static void call_{launch.name}({params}) {{ invoke_({launch.name}, {args}); }}"
        )
    driver = _driver(plan).replace('extern "C" void run_all', "void run_all")
    return "\n".join(
        [
            f"namespace {prefix} {{",
            body,
            *wrappers,
            driver,
            "}",
            f'extern "C" void {prefix}_run(void** a) {{ {prefix}::run_all(a); }}',
        ]
    )


_INVOKE = (
    "template <class... P, class... A> void invoke_(void (*f)(P...), A... a) { f(((P)a)...); }"
)


def compile_many(mods: dict) -> None:
    """Build the sources of several CUDAModules into one library (one g++ run), cached."""
    todo = {}
    for mod in mods.values():
        key = hashlib.sha256(mod.get_source("cuda").encode()).hexdigest()
        if key not in _CACHE:
            todo[key] = mod
    if not todo:
        return
    units = [SHIM, _INVOKE]
    prefixes = {}
    for n, (key, mod) in enumerate(todo.items()):
        prefixes[key] = f"p{n}"
        units.append(_translation(mod.get_source("cuda"), mod.launch_plan, f"p{n}"))
    tmp = tempfile.mkdtemp(prefix="cuda_shim_")
    src = os.path.join(tmp, "k.cpp")
    lib_path = os.path.join(tmp, "k.so")
    with open(src, "w") as f:
        f.write("\n".join(units))
    proc = subprocess.run(
        ["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", "-w", src, "-o", lib_path],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"g++ could not build the CUDA C on the CPU:\n{proc.stderr[-4000:]}")
    lib = ctypes.CDLL(lib_path)
    for key, prefix in prefixes.items():
        _CACHE[key] = getattr(lib, f"{prefix}_run")


def run_on_cpu(mod, arrays: list[np.ndarray]) -> None:
    """Run a CUDAModule's source on the CPU over ``arrays`` (outputs written in place)."""
    compile_many({"m": mod})
    entry = _CACHE[hashlib.sha256(mod.get_source("cuda").encode()).hexdigest()]
    plan = mod.launch_plan
    temps = [np.zeros(size, dtype=np.dtype(dt)) for _, dt, size in plan.temporaries]
    bufs = [np.ascontiguousarray(a) for a in arrays] + temps
    ptrs = (ctypes.c_void_p * len(bufs))(*[b.ctypes.data for b in bufs])
    entry(ptrs)
    for a, b in zip(arrays, bufs):
        if a is not b:
            a[...] = b
