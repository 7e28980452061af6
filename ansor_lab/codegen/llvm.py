"""LLVM code generation (llvmlite): loop IR to native code for the host CPU.

The generated function is ``i32 name(ptr noalias A, ptr noalias B, ...)``: one pointer per
buffer parameter, 0 returned on success and a negative code on failure (an allocation
that failed). A second entry ``name__repeat(i64 n, args...)`` calls it ``n`` times, so
the timer measures the kernel, not Python's call overhead. The statements themselves are
emitted by ``llvm_builder`` (scalar, SIMD and parallel code).

Semantics follow ``dsl.expr``: integer ``/`` truncates, ``//`` and ``%`` floor; float
min/max propagate NaN like numpy (``llvm.minimum`` / ``llvm.maximum``, the sign of a zero
result left open: numpy returns its first argument for max(-0, +0)); ``round`` rounds
half to even; comparisons are ordered except ``!=`` (true for NaN, as in numpy).
Float operations carry LLVM's ``contract`` flag, so a multiply feeding an add may become
one fused multiply-add (as in TVM); ``fast_math=True`` or the target's ``-fast-math``
allows every fast-math rewrite, ``-fast-math-nnan`` (``-ninf``, ``-nsz``, ``-arcp``,
``-reassoc``) the one it names, as TVM's LLVM code generator does.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import functools
import os
import time
from dataclasses import dataclass, field, replace

import llvmlite.binding as llvm
from llvmlite import ir

from ..errors import CodegenError
from ..ir import nodes as N
from ..ir.visitor import post_order_visit, walk_stmts
from .half_support import install_half_support
from .kept_results import KEPT_RESULTS
from .llvm_builder import (
    I32,
    I64,
    PTR,
    CodegenOptions,
    FunctionBuilder,
    LoopReport,
    ModuleContext,
    llvm_type,
    memory_type,
)
from .target import Target, host_cpu

__all__ = [
    "CodegenOptions",
    "CompiledLLVM",
    "LoopReport",
    "compile_func",
    "generate_ir",
    "llvm_type",
    "memory_type",
    "target_machine",
]


@functools.cache
def load_openmp() -> bool:
    """Make libgomp's symbols visible to JIT code; False when it is not installed."""
    # Idle pool threads sleep instead of spinning for good (libgomp reads this when it
    # loads): spinning threads steal the cores of a busy or small machine (2 cores,
    # Binder) and made parallel kernels several times slower there. But a thread that
    # sleeps at once costs every call a futex wake-up (25 us measured on Zen 4: a 7.7 us
    # kernel took 33 us on two threads), so they spin a little first (GOMP_SPINCOUNT,
    # well under a millisecond): back-to-back calls find them awake (4.9 us).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("GOMP_SPINCOUNT", str(_GOMP_SPINS))
    name = ctypes.util.find_library("gomp") or "libgomp.so.1"
    try:
        llvm.load_library_permanently(name)
    except RuntimeError:
        return False
    # libgomp frees its pool at exit while a spinning thread may still read it (a
    # segfault at exit, seen with long spins): let the spin run out first
    atexit.register(time.sleep, _SPIN_OUT_SECONDS)
    return True


#: how long libgomp's idle threads spin before they sleep (iterations of a pause loop)
_GOMP_SPINS = 20000
#: at exit, longer than that spin lasts on any current x86 core
_SPIN_OUT_SECONDS = 0.005


def _emit_kernel(ctx: ModuleContext, func: N.PrimFunc) -> ir.Function:
    fnty = ir.FunctionType(I32, [PTR] * len(func.params))
    fn = ir.Function(ctx.module, fnty, name=func.name)
    fn.attributes.add("noinline")  # the __repeat loop must call it, not absorb it
    fn.attributes.add("nounwind")
    for arg, buf in zip(fn.args, func.params):
        arg.name = buf.name
        arg.add_attribute("noalias")
    buffers = dict(zip(func.params, fn.args))
    fb = FunctionBuilder(ctx, fn, buffers, {})
    fb.kept = frozenset(dict(func.attrs).get(KEPT_RESULTS, ()))
    fb.stmt(func.body)
    fb.finish(ir.Constant(I32, 0))
    return fn


def _emit_repeat(ctx: ModuleContext, kernel: ir.Function, n_args: int) -> None:
    """``name__repeat(i64 n, args...)``: call the kernel n times (for the timer)."""
    fnty = ir.FunctionType(I32, [I64] + [PTR] * n_args)
    fn = ir.Function(ctx.module, fnty, name=kernel.name + "__repeat")
    entry, head, body = (fn.append_basic_block(n) for n in ("entry", "head", "body"))
    cont, fail, done = (fn.append_basic_block(n) for n in ("cont", "fail", "done"))
    bld = ir.IRBuilder(entry)
    bld.branch(head)
    bld.position_at_end(head)
    i = bld.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    bld.cbranch(bld.icmp_signed("<", i, fn.args[0]), body, done)
    bld.position_at_end(body)
    rc = bld.call(kernel, list(fn.args[1:]))
    bld.cbranch(bld.icmp_signed("!=", rc, ir.Constant(I32, 0)), fail, cont)
    bld.position_at_end(fail)
    bld.ret(rc)
    bld.position_at_end(cont)
    i.add_incoming(bld.add(i, ir.Constant(I64, 1)), cont)
    bld.branch(head)
    bld.position_at_end(done)
    bld.ret(ir.Constant(I32, 0))


def _loaded_buffers(body: N.Stmt) -> set:
    out: set = set()
    post_order_visit(body, lambda n: out.add(n.buffer) if isinstance(n, N.BufferLoad) else None)
    return out


def _uses_parallel(func: N.PrimFunc) -> bool:
    return any(isinstance(s, N.For) and s.kind == "parallel" for s in walk_stmts(func.body))


def generate_ir(
    func: N.PrimFunc, target: Target, options: CodegenOptions | None = None
) -> tuple[str, list[LoopReport]]:
    """Unoptimized LLVM IR text of ``func`` (plus its ``__repeat`` entry) and loop reports."""
    text, ctx = _generate(func, target, options)
    return text, ctx.reports


def _generate(
    func: N.PrimFunc, target: Target, options: CodegenOptions | None
) -> tuple[str, ModuleContext]:
    options = options or CodegenOptions(num_threads=max(1, target.num_cores))
    if _uses_parallel(func) and not load_openmp():
        # no libgomp: run serially
        options = replace(options, num_threads=1, record_thread_ids=False)
    module = ir.Module(name=func.name)
    module.triple = llvm.get_process_triple()
    ctx = ModuleContext(module, options)
    ctx.scalef = target.vector_bytes >= 64  # AVX-512F
    if "fast" in target.fast_math:
        ctx.float_flags = ("fast",)
    elif target.fast_math and "fast" not in ctx.float_flags:
        ctx.float_flags = tuple(dict.fromkeys(("contract", *target.fast_math)))
    ctx.written = {s.buffer for s in walk_stmts(func.body) if isinstance(s, N.BufferStore)}
    ctx.read = _loaded_buffers(func.body)
    kernel = _emit_kernel(ctx, func)
    _emit_repeat(ctx, kernel, len(func.params))
    return str(module), ctx


def target_machine(mcpu: str, mattr: str):
    """A new LLVM TargetMachine for this host (O3, JIT code model).

    Deliberately not cached: MCJIT takes ownership of the machine it is given and deletes
    it with its engine, so a shared machine would dangle once the first module is freed.
    Creating one costs well under a millisecond.
    """
    name, features = host_cpu()
    triple = llvm.get_process_triple()
    tgt = llvm.Target.from_triple(triple)
    feats = with_tuning(features if mcpu == name and not mattr else mattr, triple)
    return tgt.create_target_machine(cpu=mcpu, features=feats, opt=3, codemodel="jitdefault")


#: x86 tuning added to every target machine: no gathers or scatters. With them allowed,
#: LLVM's loop vectorizer, after fully unrolling a short inner loop, vectorizes the loop
#: around it along a strided axis with gathers and scatters: TVM's GEMM tutorial's blocked
#: step (32x32 tiles, no vectorize) took 4.9 s with them, slower than the unblocked loop,
#: and 0.46 s without on a Zen 4. Our own strided vector accesses then become scalar
#: loads; tuned convolutions and dense layers that had them timed the same or faster.
#: (LLVM already sets this tuning for the Intel cores whose gathers are slow.)
X86_TUNING = "+prefer-no-gather,+prefer-no-scatter"


def with_tuning(features: str, triple: str) -> str:
    """``features`` plus ``X86_TUNING`` on x86 (a target machine's feature string)."""
    if not triple.startswith(("x86_64", "i686", "i386")):
        return features
    return f"{features},{X86_TUNING}" if features else X86_TUNING


def optimize(mod: llvm.ModuleRef, tm, level: int = 3) -> None:
    """Run LLVM's O3 pipeline (loop and SLP vectorizers on) over ``mod`` in place
    (``level`` 1 or 2: a cheaper pipeline, without the vectorizers at 1)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = level >= 2
    pto.slp_vectorization = level >= 2
    pto.loop_unrolling = level >= 2
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(mod, pb)


@dataclass
class CompiledLLVM:
    """A JIT-compiled module: the engine (kept alive), entry addresses and sources."""

    engine: object
    entry_address: int
    repeat_address: int
    ir_text: str
    optimized_ir: str
    target_machine: object
    module_ref: object
    reports: list = field(default_factory=list)
    thread_ids_address: int = 0
    #: what each run-time bound check tests (``instrument_bound_checkers``), by number
    bound_checks: tuple = ()

    def assembly(self) -> str:
        """Assembly of the optimized module."""
        return self.target_machine.emit_assembly(self.module_ref)

    def threads_seen(self) -> list[int]:
        """Thread numbers that ran parallel code (needs ``record_thread_ids``)."""
        if not self.thread_ids_address:
            return []
        table = (ctypes.c_int32 * 64).from_address(self.thread_ids_address)
        return [k for k in range(64) if table[k]]


def compile_func(
    func: N.PrimFunc, target: Target, options: CodegenOptions | None = None
) -> CompiledLLVM:
    """Generate, optimize and JIT-compile ``func`` for ``target``."""
    text, ctx = _generate(func, target, options)
    try:
        mod = llvm.parse_assembly(text)
        mod.verify()
    except RuntimeError as err:  # an internal bug: show the IR that LLVM rejected
        raise CodegenError(f"LLVM rejected the generated IR: {err}\n{text[:4000]}") from err
    tm = target_machine(target.mcpu, target.mattr)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    optimize(mod, tm, (options or CodegenOptions()).opt_level)
    optimized = str(mod)
    install_half_support()  # float16 casts may call compiler-rt functions
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    entry = engine.get_function_address(func.name)
    repeat = engine.get_function_address(func.name + "__repeat")
    if not entry:
        raise CodegenError(f"JIT compilation produced no function {func.name!r}")
    ids = 0
    if "__ansor_thread_ids" in text:
        ids = engine.get_global_value_address("__ansor_thread_ids")
    return CompiledLLVM(
        engine, entry, repeat, text, optimized, tm, mod, ctx.reports, ids, tuple(ctx.bound_checks)
    )


def emit_object(func: N.PrimFunc, target: Target, options: CodegenOptions | None = None) -> bytes:
    """Generate and optimize ``func``; return a relocatable object file (for another process)."""
    text, _ = generate_ir(func, target, options)
    mod = llvm.parse_assembly(text)
    mod.verify()
    tm = target_machine(target.mcpu, target.mattr)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    optimize(mod, tm)
    return tm.emit_object(mod)


@dataclass
class LoadedObject:
    """An object file linked into this process: keep it alive while calling its code."""

    engine: object
    entry_address: int
    repeat_address: int


def load_object(obj: bytes, entry: str, target: Target) -> LoadedObject:
    """Link an object made by ``emit_object`` into this process."""
    load_openmp()
    install_half_support()
    tm = target_machine(target.mcpu, target.mattr)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    addr = engine.get_function_address(entry)
    if not addr:
        raise CodegenError(f"object file has no function {entry!r}")
    return LoadedObject(engine, addr, engine.get_function_address(entry + "__repeat"))
