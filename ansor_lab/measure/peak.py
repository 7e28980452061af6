"""The float32 multiply-add peak of this machine's cores, measured with a kernel of ours.

A loop of independent vector multiply-adds at the host's vector width, compiled with LLVM
for this CPU, run on ``threads`` cores at once (ctypes releases the GIL). The roofline's
compute roof and the analytic prior's machine balance (``measure.bandwidth``) use it.
"""

from __future__ import annotations

import ctypes
import threading
import time

import llvmlite.binding as llvm
from llvmlite import ir

from ..codegen.llvm import optimize, target_machine
from ..codegen.target import Target

__all__ = ["multiply_add_peak_gflops"]


# Independent multiply-add chains per core: enough to cover the FMA latency (4 cycles) on
# every pipe (2 on current x86 cores) with room to spare, and few enough to stay in the
# vector registers (16 below AVX-512, 32 with it).
_CHAINS = {16: 12, 32: 12, 64: 24}


def _fma_loop_ir(lanes: int, chains: int) -> str:
    """``void fma_loop(i64 n, float* out)``: n rounds of ``chains`` vector multiply-adds."""
    f32, i64 = ir.FloatType(), ir.IntType(64)
    vec = ir.VectorType(f32, lanes)
    mod = ir.Module("fma_peak")
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i64, f32.as_pointer()]), "fma_loop")
    n, out = fn.args
    entry, body, done = (fn.append_basic_block(x) for x in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    b.branch(body)
    b.position_at_end(body)
    i = b.phi(i64)
    accs = [b.phi(vec) for _ in range(chains)]
    # constants that keep every value finite and near 1 for any n
    scale = ir.Constant(vec, [0.9999999] * lanes)
    bias = ir.Constant(vec, [1e-7] * lanes)
    nxt = [b.fadd(b.fmul(a, scale, flags=("contract",)), bias, flags=("contract",)) for a in accs]
    i_next = b.add(i, ir.Constant(i64, 1))
    b.cbranch(b.icmp_signed("<", i_next, n), body, done)
    i.add_incoming(ir.Constant(i64, 0), entry)
    i.add_incoming(i_next, body)
    for a, x in zip(accs, nxt):
        a.add_incoming(ir.Constant(vec, [float(k % 7) for k in range(lanes)]), entry)
        a.add_incoming(x, body)
    b.position_at_end(done)
    total = nxt[0]
    for x in nxt[1:]:
        total = b.fadd(total, x)
    b.store(b.extract_element(total, ir.Constant(ir.IntType(32), 0)), out)  # keep it live
    b.ret_void()
    return str(mod)


def multiply_add_peak_gflops(
    threads: int | None = None, seconds: float = 0.2, repeats: int = 3, clock=time.perf_counter
) -> float:
    """Float32 multiply-add throughput of ``threads`` cores running at once (GFLOPS).

    ``clock=time.process_time`` times on the process CPU clock (divided by the thread
    count): on a machine loaded past its cores, the rate of a core while it runs."""
    host = Target("llvm")
    lanes, chains = host.vector_lanes_f32, _CHAINS.get(host.vector_bytes, 12)
    mod = llvm.parse_assembly(_fma_loop_ir(lanes, chains))
    tm = target_machine(host.mcpu, host.mattr)
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    optimize(mod, tm)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    loop = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(
        engine.get_function_address("fma_loop")
    )
    flops_per_round = 2.0 * lanes * chains
    threads = threads or host.num_cores
    sink = (ctypes.c_float * threads)()
    slots = [ctypes.addressof(sink) + 4 * k for k in range(threads)]

    def rate(n_threads: int, rounds: int) -> float:
        # ctypes releases the GIL during the call: the threads run on separate cores
        workers = [threading.Thread(target=loop, args=(rounds, slots[k])) for k in range(n_threads)]
        t0 = clock()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        spent = clock() - t0
        spent = spent / n_threads if clock is time.process_time else spent
        return n_threads * rounds * flops_per_round / spent / 1e9

    rounds = 1 << 12
    while True:  # calibrate: one call lasts about `seconds`
        t0 = time.perf_counter()
        loop(rounds, slots[0])
        elapsed = time.perf_counter() - t0
        if elapsed > seconds / 8:
            rounds = max(1, int(rounds * seconds / elapsed))
            break
        rounds *= 8
    best = max(rate(threads, rounds) for _ in range(repeats))
    del engine  # the code lives as long as its engine: free it only now
    return best
