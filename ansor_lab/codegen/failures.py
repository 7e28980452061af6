"""What a compiled kernel's return code means.

A kernel returns 0, or a negative code saying why it stopped: code generation never
lets a bad value crash the calling process (an integer division by zero traps with
SIGFPE on x86; an access out of bounds may segfault), it returns the code instead and
``Module`` raises the matching error. Out-of-bounds codes carry the number of the check
that failed (checks exist in builds with ``instrument_bound_checkers=True``), whose
description the code generator keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import KernelBoundsError, KernelDivisionByZeroError, KernelRuntimeError

#: A buffer allocation (aligned_alloc) returned NULL.
ALLOC_FAILED = -1
#: An integer division or modulo met a zero divisor at run time.
DIVISION_BY_ZERO = -2
#: The program wrote its own report and stopped (the GPU emulator's checks: the caller
#: reads the report buffer it passed and raises the error it describes).
REPORTED = -3
#: The intrinsic that stops a kernel with ``REPORTED``: ``Evaluate(Call(FAIL_OP, (), "int32"))``.
FAIL_OP = "ansor_lab.fail"
#: ``BOUNDS_BASE - k``: run-time bound check number ``k`` failed.
BOUNDS_BASE = -1000


def bounds_code(k: int) -> int:
    """The return code of failed bound check ``k``."""
    return BOUNDS_BASE - k


def failure(rc: int, entry: str, checks: Sequence[str] = ()) -> KernelRuntimeError:
    """The error to raise for a kernel that returned ``rc`` (non-zero)."""
    where = f"kernel {entry!r}"
    if rc == DIVISION_BY_ZERO:
        return KernelDivisionByZeroError(
            f"{where}: integer division or modulo by zero (a divisor was 0 at run time); "
            "guard the divisor, e.g. te.if_then_else(b != 0, a // b, 0)"
        )
    if rc <= BOUNDS_BASE:
        k = BOUNDS_BASE - rc
        what = checks[k] if 0 <= k < len(checks) else f"bound check #{k}"
        return KernelBoundsError(
            f"{where}: out-of-bounds access: {what}; fix the index expression, or guard "
            "the access with te.if_then_else (the check comes from "
            "instrument_bound_checkers=True)"
        )
    if rc == REPORTED:
        return KernelRuntimeError(f"{where} stopped on a check whose report was not read")
    if rc == ALLOC_FAILED:
        return KernelRuntimeError(
            f"{where} failed with code {rc} (a buffer allocation failed: out of memory); "
            "use smaller cache buffers or tiles"
        )
    return KernelRuntimeError(f"{where} failed with unknown code {rc}; please report it")
