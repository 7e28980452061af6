"""A CPU oracle for GPU-scheduled loop IR: every thread-bound loop run as a serial loop.

In the kernel form a loop bound to a thread index runs its body once per index value; run
serially, one thread after another, the same statements compute the same values, provided
no thread reads what another writes between two barriers (the emulator checks that).
Lowered and built with LLVM under ``instrument_bound_checkers``, a serialised program is
checked against the numpy reference on any machine: a wrong index, a region sized for one
thread where the block needs more, a missing element — all show up as a mismatch or a
bounds error.
"""

from __future__ import annotations

import numpy as np

import ansor_lab as tvm
from ansor_lab.dsl import expr as E
from ansor_lab.dsl.reference import reference_outputs
from ansor_lab.dsl.tensor import PlaceholderOp
from ansor_lab.ir import gpu, nodes as N
from ansor_lab.ir.visitor import IRMutator
from ansor_lab.measure.workers import random_inputs
from ansor_lab.schedule.lower import lower_state


class _Serialize(IRMutator):
    def stmt_For(self, s: N.For) -> N.Stmt:
        s = self.default_stmt(s)
        # thread loops become serial; unroll budgets go (the values stay, the build is fast)
        kind = "serial" if s.kind in ("thread_binding", "unrolled") else s.kind
        return N.For(s.loop_var, s.min, s.extent, kind, s.body, "", ())

    def stmt_Evaluate(self, s: N.Evaluate) -> N.Stmt:
        return N.Evaluate(E.IntImm(0)) if gpu.is_barrier(s) else s


def serial_check(sch, seed: int = 0) -> None:
    """Run ``sch``'s program with its thread loops serial on the CPU; compare outputs."""
    func = lower_state(sch.state, sch.args)
    func = func.with_body(_Serialize().visit_stmt(func.body))
    f = tvm.build(func, target="llvm", instrument_bound_checkers=True)
    args = sch.args
    params = [(t.name, list(t.shape), t.dtype) for t in args]
    arrays = random_inputs(params, seed)
    for t, a in zip(args, arrays):
        if not isinstance(t.op, PlaceholderOp):
            a[...] = 99.0
    f(*arrays)
    want = reference_outputs(args, arrays)
    for t, got, exp in zip(args, arrays, want):
        if not isinstance(t.op, PlaceholderOp):
            np.testing.assert_allclose(
                got, exp, rtol=1e-4, atol=1e-4, err_msg=f"output {t.name} of\n{sch.trace}"
            )
