"""The emulator's pieces that need no compiler: intervals, uniformity, the SPMD form,
the fission of a block at its barriers."""

from __future__ import annotations

import numpy as np
from emu_programs import block_sum, i32, tiled_matmul

from ansor_lab.codegen.emulator.fission import Fission
from ansor_lab.codegen.emulator.intervals import in_bounds, interval
from ansor_lab.codegen.emulator.spmd import Indices, has_barrier, to_spmd, unlinear
from ansor_lab.codegen.emulator.uniform import static_values, thread_dependent
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.dsl import expr as E
from ansor_lab.ir import nodes as N
from ansor_lab.ir.visitor import walk_stmts


def test_interval_of_a_fused_index():
    f, t = E.Var("f", "int32"), E.Var("t", "int32")
    ranges = {f: (0, 13), t: (0, 48)}
    fused = f * 49 + t
    assert interval(fused, ranges) == (0, 685)
    assert interval(E.FloorDiv(fused, i32(81), "int32"), ranges) == (0, 8)
    assert interval(E.FloorMod(fused, i32(9), "int32"), ranges) == (0, 8)
    assert interval(E.FloorMod(t, i32(64), "int32"), ranges) == (0, 48)
    assert interval(E.FloorDiv(fused, f, "int32"), ranges) is None  # not a constant
    assert in_bounds((E.FloorDiv(t, i32(7), "int32") + 2,), (9,), ranges)
    assert not in_bounds((E.FloorDiv(t, i32(7), "int32") + 3,), (9,), ranges)


def test_static_values_over_the_threads():
    idx = Indices.make((1, 1, 1), (8, 2, 1))
    tx, ty, _ = idx.thread
    t = np.arange(16)
    values = {tx: t % 8, ty: t // 8, idx.thread[2]: t * 0}
    assert list(static_values(E.LT(tx, i32(4), "bool"), values)) == [x % 8 < 4 for x in t]
    assert static_values(tx + E.Var("other", "int32"), values) is None
    assert thread_dependent(tx + 1, idx.thread)
    assert not thread_dependent(idx.block[0] * 2, idx.thread)
    assert unlinear(13, (8, 2, 1)) == (5, 1, 0)


def test_spmd_form_takes_the_shared_tiles_out_and_replaces_bound_loops():
    kernel = split_kernels(tiled_matmul(32, 8)).kernels[0]
    idx = Indices.make(kernel.grid, kernel.block)
    body, shared = to_spmd(kernel.body, idx, kernel.name, check=False)
    assert [b.name for b in shared] == ["A_shared", "B_shared"]
    assert not any(isinstance(s, N.For) and s.kind == "thread_binding" for s in walk_stmts(body))
    assert has_barrier(body)


def test_fission_makes_one_thread_loop_per_phase():
    """The tree reduction: 1 + 5 barriers, so 7 regions; the per-thread program's
    statements each run inside a loop over the 32 threads."""
    kernel = split_kernels(block_sum()).kernels[0]
    idx = Indices.make(kernel.grid, kernel.block)
    body, _ = to_spmd(kernel.body, idx, kernel.name, check=False)
    out = Fission(idx, kernel.name, None, None).level(body)
    tx = idx.thread[0]
    loops = [s for s in walk_stmts(out) if isinstance(s, N.For) and s.loop_var is tx]
    assert len(loops) == 7 and all(loop.extent.value == 32 for loop in loops)
    assert not has_barrier(out)
