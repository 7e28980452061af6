"""Half-precision conversions for JIT code on CPUs that lack the instructions.

LLVM lowers a ``float16`` conversion the CPU cannot do in one instruction to a call into
compiler-rt: ``__extendhfsf2`` (half -> float) and ``__truncsfhf2`` (float -> half)
without F16C (e.g. ``-mcpu=x86-64``), ``__truncdfhf2`` (double -> half) on every x86 CPU
without AVX512-FP16 (AMD Zen 3 and most Intel servers). A JIT process has no compiler-rt:
the call would jump to address 0 and kill the Python process. This module compiles the
three functions once per process from the LLVM IR below (integer and float32 operations
only, so they need no libcall themselves) and registers them with ``llvm.add_symbol``,
where MCJIT's linker finds them for every module compiled or object file loaded after.

All three round to nearest, ties to even, like numpy's ``astype``: float -> half with
Fabian Giesen's branch-free method (a float add does the rounding of subnormal halves;
the normal range rounds with an integer add of 0xfff plus the kept LSB), double -> half
by rounding to float with round-to-odd first (a float keeps 13 more bits than a half, so
the second rounding is exact: no double rounding). NaN stays NaN (quiet), infinities and
overflow give infinity, signs (of zero too) are kept.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm

from .target import host_cpu

#: The compiler-rt names LLVM calls for half conversions, defined below.
HALF_LIBCALLS = ("__extendhfsf2", "__truncsfhf2", "__truncdfhf2")

_HALF_IR = r"""
define float @__extendhfsf2(half %h) {
  %b = bitcast half %h to i16
  %w = zext i16 %b to i32
  %sign = and i32 %w, 32768
  %sign32 = shl i32 %sign, 16
  %e0 = lshr i32 %w, 10
  %e = and i32 %e0, 31
  %m = and i32 %w, 1023
  %m13 = shl i32 %m, 13
  %eb = add i32 %e, 112                 ; rebias 15 -> 127
  %eb23 = shl i32 %eb, 23
  %normal = or i32 %eb23, %m13
  %infnan0 = or i32 2139095040, %m13    ; 0x7f800000
  %nan = icmp ne i32 %m, 0
  %quiet = select i1 %nan, i32 4194304, i32 0
  %infnan = or i32 %infnan0, %quiet
  %mf = uitofp i32 %m to float          ; subnormal (or zero): m * 2^-24, exact
  %sub = fmul float %mf, 0x3E70000000000000
  %subbits = bitcast float %sub to i32
  %is_sub = icmp eq i32 %e, 0
  %is_max = icmp eq i32 %e, 31
  %t = select i1 %is_max, i32 %infnan, i32 %normal
  %u = select i1 %is_sub, i32 %subbits, i32 %t
  %r = or i32 %u, %sign32
  %f = bitcast i32 %r to float
  ret float %f
}

define half @__truncsfhf2(float %x) {
  %u = bitcast float %x to i32
  %sign = and i32 %u, 2147483648
  %a = xor i32 %u, %sign
  %huge = icmp uge i32 %a, 1199570944   ; >= 65536.0 (143 << 23): inf, NaN or overflow
  %isnan = icmp ugt i32 %a, 2139095040
  %big = select i1 %isnan, i32 32256, i32 31744   ; 0x7e00 quiet NaN, 0x7c00 inf
  %tiny = icmp ult i32 %a, 947912704    ; < 2^-14 (113 << 23): a subnormal half or zero
  %af = bitcast i32 %a to float
  %d = fadd float %af, 5.000000e-01     ; the float add rounds to the half's subnormal grid
  %db = bitcast float %d to i32
  %dr = sub i32 %db, 1056964608         ; bits of 0.5
  %lsb0 = lshr i32 %a, 13
  %lsb = and i32 %lsb0, 1
  %n1 = add i32 %a, -939520001          ; rebias 127 -> 15, plus 0xfff
  %n2 = add i32 %n1, %lsb               ; ties to even
  %nr = lshr i32 %n2, 13
  %r1 = select i1 %tiny, i32 %dr, i32 %nr
  %r2 = select i1 %huge, i32 %big, i32 %r1
  %s16 = lshr i32 %sign, 16
  %r3 = or i32 %r2, %s16
  %r4 = trunc i32 %r3 to i16
  %h = bitcast i16 %r4 to half
  ret half %h
}

declare double @llvm.fabs.f64(double)

define half @__truncdfhf2(double %x) {
  %r = fptrunc double %x to float       ; nearest float, then make the rounding odd
  %back = fpext float %r to double
  %inexact = fcmp one double %back, %x  ; false for NaN: a NaN is left as it is
  %rb = bitcast float %r to i32
  %lsb = and i32 %rb, 1
  %even = icmp eq i32 %lsb, 0
  %fix = and i1 %inexact, %even
  %ax = call double @llvm.fabs.f64(double %x)
  %ar = call double @llvm.fabs.f64(double %back)
  %up = fcmp ogt double %ax, %ar        ; the odd neighbour is away from zero
  %delta = select i1 %up, i32 1, i32 -1
  %adj = add i32 %rb, %delta
  %rodd = select i1 %fix, i32 %adj, i32 %rb
  %ro = bitcast i32 %rodd to float
  %h = call half @__truncsfhf2(float %ro)
  ret half %h
}
"""


@functools.cache
def install_half_support() -> dict[str, int]:
    """Compile the half conversions and make them visible to JIT code; returns
    {name: address}. Idempotent: the engine lives as long as the process."""
    from .llvm import target_machine  # noqa: PLC0415 - llvm imports this module

    mod = llvm.parse_assembly(_HALF_IR)
    mod.verify()
    tm = target_machine(host_cpu()[0], "")
    mod.triple = tm.triple
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    addresses = {name: engine.get_function_address(name) for name in HALF_LIBCALLS}
    for name, address in addresses.items():
        llvm.add_symbol(name, address)
    _ENGINES.append(engine)  # the code must outlive every module that calls it
    return addresses


_ENGINES: list = []
