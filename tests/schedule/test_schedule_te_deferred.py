"""TE schedules check compute_at placements at lowering time, as TVM's TE does.

TVM's GPU GEMM tutorial computes a cache at a loop before moving the cache that reads
it (``s[AA].compute_at(s[C], ko); s[AL].compute_at(s[C], ki)``): in between, AL reads AA
outside that loop. The TE schedule accepts such intermediate states and lower/build
raise if the final state is still invalid; ``tir.Schedule`` keeps checking every step.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from schedule_helpers import assert_step_fails, matmul, replay_python, run_and_compare

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import LoweringError, ScheduleError

OUTSIDE = (
    r"stage 'A_global' is computed at C\.k_0 but stage 'A_global_local' reads it "
    r"outside that loop"
)


def _cached_matmul():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    AA = s.cache_read(A, "global", [C])
    AL = s.cache_read(AA, "local", [C])
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 8)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=4)
    s[C].reorder(xo, yo, ko, ki, xi, yi)
    return (A, B, C), s, AA, AL, ko, ki


def _replay_on_te(s: te.Schedule, outputs, args, via: str) -> str:
    """Replay ``s.trace`` on a fresh TE schedule's engine; return the lowered text."""
    fresh = te.create_schedule([t.op for t in outputs])
    if via == "json":
        data = json.loads(json.dumps(s.trace.as_json()))
        tir.Trace.from_json(data).apply_to_schedule(fresh.engine)
    else:
        replay_python(s.trace, fresh.engine)
    return tvm.lower(fresh, args).script()


def test_tutorial_order_lowers_and_computes_the_matmul():
    (A, B, C), s, AA, AL, ko, ki = _cached_matmul()
    s[AA].compute_at(s[C], ko)  # AL still reads AA at root: accepted for now
    s[AL].compute_at(s[C], ki)
    text = tvm.lower(s, [A, B, C]).script()
    for snippet in (
        'A_global = T.alloc_buffer((16, 4), "float32")',
        'A_global_local = T.alloc_buffer((16, 1), "float32", scope="local")',
    ):
        assert snippet in text, text
    run_and_compare(tvm.build(s, [A, B, C]), [A, B, C])
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (64, 32)).astype("float32")
    b = rng.uniform(-1, 1, (32, 48)).astype("float32")
    c = np.full((64, 48), np.nan, dtype="float32")
    tvm.build(s, [A, B, C])(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    # the trace replays through the same (TE) engine, as Python and as JSON
    for via in ("python", "json"):
        assert _replay_on_te(s, [C], [A, B, C], via) == text


def test_intermediate_state_then_loop_changes_then_the_fix():
    """Steps on the target's loops while the state is invalid, then the final move."""
    (A, B, C), s, AA, AL, ko, ki = _cached_matmul()
    s[AA].compute_at(s[C], ko)
    xi = s[C].leaf_iter_vars[4]
    xio, xii = s[C].split(xi, factor=4)  # re-infers regions: still invalid, accepted
    s[AL].compute_at(s[C], ki)
    s[AA].compute_root()
    s[AA].compute_at(s[C], ko)
    text = tvm.lower(s, [A, B, C]).script()
    assert 'A_global = T.alloc_buffer((16, 4), "float32")' in text, text
    run_and_compare(tvm.build(s, [A, B, C]), [A, B, C])
    assert _replay_on_te(s, [C], [A, B, C], "json") == text


def test_invalid_final_state_raises_at_lower_and_build():
    (A, B, C), s, AA, AL, ko, ki = _cached_matmul()
    s[AA].compute_at(s[C], ko)  # and AL is never moved
    with pytest.raises(LoweringError, match=OUTSIDE):
        tvm.lower(s, [A, B, C])
    with pytest.raises(LoweringError, match=OUTSIDE):
        tvm.build(s, [A, B, C])
    s[AL].compute_at(s[C], ki)  # fixing it later works
    run_and_compare(tvm.build(s, [A, B, C]), [A, B, C])


def test_block_style_still_checks_each_step():
    A, B, C = matmul()
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    c = sch.get_block("C")
    aa = sch.cache_read(c, 0, "global")
    sch.cache_read(c, 0, "local")
    i, j, k = sch.get_loops(c)
    ko, ki = sch.split(k, [None, 4])
    assert_step_fails(
        sch, lambda: sch.compute_at(aa, ko), "compute_at: block 'A_global': " + OUTSIDE
    )
    # and so does a block-style replay of the TE trace, at that step
    (A2, B2, C2), s, AA, AL, ko2, ki2 = _cached_matmul()
    s[AA].compute_at(s[C2], ko2)
    s[AL].compute_at(s[C2], ki2)
    fresh = tir.Schedule(te.create_prim_func([A2, B2, C2]))
    with pytest.raises(ScheduleError, match=OUTSIDE):
        s.trace.apply_to_schedule(fresh)


def test_gpu_gemm_tutorial_order_lowers():
    """TVM's cuda GEMM recipe (no vthreads): caches moved before their readers."""
    n, num_thread, block_factor = 128, 8, 64
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda ii, jj: te.sum(A[k, jj] * B[k, ii], axis=k), name="C")
    s = te.create_schedule(C.op)
    AA = s.cache_read(A, "shared", [C])
    BB = s.cache_read(B, "shared", [C])
    AL = s.cache_read(AA, "local", [C])
    BL = s.cache_read(BB, "local", [C])
    CC = s.cache_write(C, "local")
    by, yi = s[C].split(C.op.axis[0], factor=block_factor)
    bx, xi = s[C].split(C.op.axis[1], factor=block_factor)
    s[C].bind(by, te.thread_axis("blockIdx.y"))
    s[C].bind(bx, te.thread_axis("blockIdx.x"))
    s[C].reorder(by, bx, yi, xi)
    ty, yi = s[C].split(yi, nparts=num_thread)
    tx, xi = s[C].split(xi, nparts=num_thread)
    s[C].bind(ty, te.thread_axis("threadIdx.y"))
    s[C].bind(tx, te.thread_axis("threadIdx.x"))
    s[C].reorder(by, bx, ty, tx, yi, xi)
    s[CC].compute_at(s[C], tx)
    yo, xo = CC.op.axis
    ko, ki = s[CC].split(k, factor=8)
    kt, ki = s[CC].split(ki, factor=1)
    s[CC].reorder(ko, kt, ki, yo, xo)
    s[AA].compute_at(s[CC], ko)
    s[BB].compute_at(s[CC], ko)
    s[CC].unroll(kt)
    s[AL].compute_at(s[CC], kt)
    s[BL].compute_at(s[CC], kt)
    text = tvm.lower(s, [A, B, C]).script()
    for snippet in (
        # the block's 8x64 tile (shared by its 8x8 threads), not one thread's 8x8
        'A_shared = T.alloc_buffer((8, 64), "float32", scope="shared")',
        'A_shared_local = T.alloc_buffer((1, 8), "float32", scope="local")',
        "for k_1_0 in T.unroll(8):",
    ):
        assert snippet in text, text
    assert text.count('T.tvm_storage_sync("shared")') == 2
