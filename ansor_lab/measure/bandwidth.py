"""This machine's read bandwidth: what a memory-bound program can reach at best.

A GEMV, a bias + GELU or a column sum reads each input element once and does a few
operations with it: its time is its bytes over the rate the core (or cores) can stream
them in. ``measure_read_bandwidth`` times a read-sum kernel of ours, written in LLVM IR
for this CPU: ``CHAINS`` independent vector accumulators (so no add latency limits the
loop), aligned full-vector loads, the buffer split into one contiguous slice per thread,
each thread on its own core (ctypes releases the GIL). The figure is the median of
``repeats`` timings, each of ``passes`` passes over the buffer (the first pass, which
faults the pages in, is never timed).

``read_bandwidth(threads)`` is the same measurement over a buffer far larger than the
last-level cache (``default_nbytes``), cached per machine and thread count in
``~/.cache/ansor_lab/bandwidth.json`` (or ``$ANSOR_LAB_CACHE_DIR``), as the roofline caches
its peaks: the roofline's memory roof and the search's analytic prior read it from there.
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from ..codegen.llvm import optimize, target_machine
from ..codegen.target import Target, host_cpu
from ..errors import BandwidthError
from .peak import multiply_add_peak_gflops

__all__ = [
    "BandwidthMeasurement",
    "cache_path",
    "default_nbytes",
    "bandwidth_levels",
    "machine_balance",
    "measure_read_bandwidth",
    "read_bandwidth",
]

#: independent vector accumulators per thread: enough to cover the add latency twice over
CHAINS = 8
#: what the cached figures were measured with (a change of method measures again)
METHOD = f"LLVM read-sum, {CHAINS} vector accumulators, median, CPU clock"
#: the largest buffer that stands for a cache level (a VM may report its host's whole L3,
#: 480 MiB on the development machine, where a 64 MiB buffer already streams at half the
#: rate of a 9 MiB one)
MAX_LEVEL_BYTES = 16 << 20


@dataclass(frozen=True)
class BandwidthMeasurement:
    """Reading ``nbytes`` with ``threads`` threads ran at ``gbs`` GB/s (median of the
    repeats; ``best_gbs`` the fastest repeat)."""

    nbytes: int
    threads: int
    gbs: float
    best_gbs: float
    repeats: int
    method: str = METHOD
    cpu: str = ""
    measured_at: float = 0.0


_KERNELS: dict = {}


def _kernel_ir(lanes: int) -> str:
    """``void read_sum(float* a, i64 nvec, i64 passes, float* out)``: sums ``nvec`` vectors of
    ``lanes`` floats (``nvec`` a multiple of ``CHAINS``) ``passes`` times into ``*out``."""
    f32, i64 = ir.FloatType(), ir.IntType(64)
    vec = ir.VectorType(f32, lanes)
    mod = ir.Module("read_sum")
    fty = ir.FunctionType(ir.VoidType(), [f32.as_pointer(), i64, i64, f32.as_pointer()])
    fn = ir.Function(mod, fty, "read_sum")
    a, nvec, passes, out = fn.args
    names = ("entry", "outer", "body", "latch", "done")
    entry, outer, body, latch, done = (fn.append_basic_block(x) for x in names)
    b = ir.IRBuilder(entry)
    base = b.bitcast(a, vec.as_pointer())
    zero = ir.Constant(vec, [0.0] * lanes)
    b.branch(outer)
    b.position_at_end(outer)
    p = b.phi(i64)
    outer_accs = [b.phi(vec) for _ in range(CHAINS)]
    b.branch(body)
    b.position_at_end(body)
    i = b.phi(i64)
    accs = [b.phi(vec) for _ in range(CHAINS)]
    nxt = []
    for k, acc in enumerate(accs):
        ptr = b.gep(base, [b.add(i, ir.Constant(i64, k))], inbounds=True)
        nxt.append(b.fadd(acc, b.load(ptr, align=64)))
    i_next = b.add(i, ir.Constant(i64, CHAINS))
    b.cbranch(b.icmp_signed("<", i_next, nvec), body, latch)
    b.position_at_end(latch)
    p_next = b.add(p, ir.Constant(i64, 1))
    b.cbranch(b.icmp_signed("<", p_next, passes), outer, done)
    p.add_incoming(ir.Constant(i64, 0), entry)
    p.add_incoming(p_next, latch)
    i.add_incoming(ir.Constant(i64, 0), outer)
    i.add_incoming(i_next, body)
    for oacc, acc, x in zip(outer_accs, accs, nxt, strict=True):
        oacc.add_incoming(zero, entry)
        oacc.add_incoming(x, latch)
        acc.add_incoming(oacc, outer)
        acc.add_incoming(x, body)
    b.position_at_end(done)
    total = nxt[0]
    for x in nxt[1:]:
        total = b.fadd(total, x)
    s = b.extract_element(total, ir.Constant(ir.IntType(32), 0))
    for k in range(1, lanes):
        s = b.fadd(s, b.extract_element(total, ir.Constant(ir.IntType(32), k)))
    b.store(s, out)
    b.ret_void()
    return str(mod)


def _kernel():
    """(the compiled read_sum as a ctypes function, lanes, its engine) for this CPU."""
    if "read_sum" not in _KERNELS:
        host = Target("llvm")
        lanes = host.vector_lanes_f32
        mod = llvm.parse_assembly(_kernel_ir(lanes))
        tm = target_machine(host.mcpu, host.mattr)
        mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
        optimize(mod, tm)
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        fn = ctypes.CFUNCTYPE(
            None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p
        )(engine.get_function_address("read_sum"))
        _KERNELS["read_sum"] = (fn, lanes, engine)  # the code lives as long as its engine
    return _KERNELS["read_sum"]


def _aligned_zeros(n_floats: int) -> np.ndarray:
    raw = np.zeros(n_floats + 16, dtype=np.float32)
    off = (-raw.ctypes.data % 64) // 4
    return raw[off : off + n_floats]


def measure_read_bandwidth(
    nbytes: int,
    threads: int = 1,
    repeats: int = 7,
    passes: int | None = None,
    clock=time.perf_counter,
) -> BandwidthMeasurement:
    """Read ``nbytes`` (rounded down to whole vector blocks) with ``threads`` threads,
    ``repeats`` times; GB/s as the median and the best repeat. ``passes`` per repeat
    defaults to enough passes for a repeat of about 20 ms (at least one).

    ``clock=time.process_time`` times on the process's CPU clock (all its threads, so
    divided by ``threads``): on a machine whose load exceeds its cores, it leaves out the
    time the threads waited for a core (as ``bench_tune``'s CPU-clock columns do)."""
    if threads < 1 or repeats < 1 or nbytes <= 0:
        raise BandwidthError(
            f"measure_read_bandwidth(nbytes={nbytes}, threads={threads}, repeats={repeats}): "
            "write a positive size in bytes, threads >= 1 and repeats >= 1"
        )
    fn, lanes, _engine = _kernel()
    block = lanes * CHAINS  # floats one iteration of the kernel reads
    per_thread = max(1, nbytes // 4 // block // threads)
    buf = _aligned_zeros(per_thread * block * threads)
    buf += 1.0  # touch every page before timing (and give the sum a known value)
    sinks = _aligned_zeros(16 * threads)  # one cache line per thread: no false sharing
    slices = [
        (buf.ctypes.data + k * per_thread * block * 4, sinks.ctypes.data + 64 * k)
        for k in range(threads)
    ]
    nvec = per_thread * CHAINS

    def run(n_passes: int) -> float:
        workers = [
            threading.Thread(target=fn, args=(ptr, nvec, n_passes, sink)) for ptr, sink in slices
        ]
        t0 = clock()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        spent = clock() - t0
        return spent / threads if clock is time.process_time else spent

    once = run(1)
    if passes is None:
        passes = max(1, int(0.02 / max(once, 1e-7)))
    if sinks[0] != per_thread * block:
        raise AssertionError(f"read_sum summed {sinks[0]}, not {per_thread * block}")
    rates = [buf.nbytes * passes / run(passes) / 1e9 for _ in range(repeats)]
    return BandwidthMeasurement(
        nbytes=int(buf.nbytes),
        threads=threads,
        gbs=statistics.median(rates),
        best_gbs=max(rates),
        repeats=repeats,
        cpu=host_cpu()[0],
        measured_at=time.time(),
    )


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG") or 0) * scale


def _last_level_cache_bytes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> int:
    sizes = []
    for index in Path(root).glob("index*"):
        try:
            if (index / "type").read_text().strip() == "Instruction":
                continue
            sizes.append(_parse_size((index / "size").read_text()))
        except (OSError, ValueError):
            continue
    return max(sizes, default=32 << 20)


def default_nbytes() -> int:
    """The buffer ``read_bandwidth`` streams: 4x the last-level cache, between 256 MiB and
    512 MiB (a virtual machine may report its host's whole L3: the bound keeps it sane)."""
    return int(min(max(4 * _last_level_cache_bytes(), 256 << 20), 512 << 20))


def cache_path() -> Path:
    """Where measured bandwidths are cached (next to the roofline's peaks)."""
    root = os.environ.get("ANSOR_LAB_CACHE_DIR")
    base = (
        Path(root)
        if root
        else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ansor_lab"
    )
    return base / "bandwidth.json"


def _machine_key(threads: int) -> str:
    return f"{host_cpu()[0]}|{os.cpu_count()}|threads={threads}"


def read_bandwidth(
    threads: int = 1,
    force: bool = False,
    path: str | os.PathLike | None = None,
    nbytes: int | None = None,
) -> BandwidthMeasurement:
    """The streaming read bandwidth of ``threads`` cores of this machine: from the cache,
    or measured over ``nbytes`` (default ``default_nbytes()``; about a second) and cached."""
    file = Path(path) if path is not None else cache_path()
    key = _machine_key(threads)
    data = _read(file)
    cached = data.get(key)
    if not force and isinstance(cached, dict) and cached.get("method") == METHOD:
        try:
            return BandwidthMeasurement(**cached)
        except TypeError:
            pass
    got = measure_read_bandwidth(nbytes or default_nbytes(), threads, 5, clock=time.process_time)
    _write(file, key, asdict(got))
    return got


def bandwidth_levels() -> list[tuple[str, int]]:
    """(level, buffer bytes) the balance is measured at: half of each cache level from L2
    up (at most ``MAX_LEVEL_BYTES``), then ``("memory", default_nbytes())``."""
    out = []
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            if (index / "type").read_text().strip() == "Instruction":
                continue
            level = int((index / "level").read_text())
            size = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if level >= 2 and size > 0:
            out.append((f"L{level}", min(size // 2, MAX_LEVEL_BYTES)))
    return sorted(out, key=lambda x: x[1]) + [("memory", default_nbytes())]


def machine_balance(
    threads: int = 1,
    measure: bool = False,
    path: str | os.PathLike | None = None,
    nbytes: int | None = None,
) -> float | None:
    """Bytes per float32 flop this machine's ``threads`` cores can stream at their peak,
    for a working set of ``nbytes`` (None: one far past the caches): the read bandwidth
    of the smallest level of ``bandwidth_levels`` that holds it, over the multiply-add
    peak (``multiply_add_peak_gflops``), both on the CPU clock. From the cache; when it
    holds no figure, measured and cached if ``measure``, else None (the search never
    measures: it reads what ``bench/bench_bandwidth.py --cache``, the roofline or
    ``machine_balance(measure=True)`` stored)."""
    levels = bandwidth_levels()
    name, size = next(((n, s) for n, s in levels if nbytes is not None and nbytes <= s), levels[-1])
    file = Path(path) if path is not None else cache_path()
    key = f"{_machine_key(threads)}|balance|{name}"
    cached = _read(file).get(key)
    if (
        isinstance(cached, dict)
        and cached.get("method") == METHOD
        and cached.get("nbytes") == (default_nbytes() if name == "memory" else size)
    ):
        try:
            return float(cached["gbs"]) / float(cached["peak_gflops"])
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            pass
    if not measure:
        return None
    if name == "memory":
        gbs = read_bandwidth(threads, path=file, nbytes=size).gbs
    else:
        gbs = measure_read_bandwidth(size, threads, 5, clock=time.process_time).gbs
    peak = multiply_add_peak_gflops(threads=threads, clock=time.process_time)
    _write(file, key, {"gbs": gbs, "peak_gflops": peak, "nbytes": size, "method": METHOD})
    return gbs / peak


def _read(file: Path) -> dict:
    try:
        data = json.loads(file.read_text()) if file.exists() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(file: Path, key: str, value: dict) -> None:
    data = _read(file)  # read again: another process may have added its figures
    data[key] = value
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(file)
    except OSError:
        pass  # a read-only home: the figure is still returned
