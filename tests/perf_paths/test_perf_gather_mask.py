"""Accesses that are not unit-stride become gathers/scatters, and lane-dependent guards
become masks (masked loads/stores), so a guarded tail never touches memory outside it."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from tiled_matmul import matmul_schedule, tile_matmul

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.codegen.target import Target

HERE = Path(__file__).resolve().parent


def _transpose(n: int, lanes: int):
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[j, i] * 2.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    _, j = sch.get_loops(sch.get_block("B"))
    _, ji = sch.split(j, [None, lanes])
    sch.vectorize(ji)
    return sch


def _tail(m: int, lanes: int, *, parallel: bool = True):
    """``B = A * 3 + 1`` split by ``lanes``, the inner loop vectorized. With ``parallel``
    the outer loop runs on threads, which loop partitioning leaves whole: the last tile's
    guard stays a lane mask (a serial outer loop gets a narrower last vector instead)."""
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] * 3.0 + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    io, ii = sch.split(i, [None, lanes])
    sch.vectorize(ii)
    if parallel:
        sch.parallel(io)
    return sch


def test_strided_read_is_a_gather(rand):
    f = tvm.build(_transpose(48, 16).mod, target="llvm")
    assert "llvm.masked.gather.v16f32" in f.get_source("ll")
    assert "[gathers=1, vector_stores=1]" in f.loop_report()
    a = rand((48, 48))
    b = np.empty_like(a)
    f(a, b)
    np.testing.assert_array_equal(b, a.T * np.float32(2.0))  # exact: one multiply by 2


def test_strided_write_is_a_scatter(rand):
    n = 40
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[i, j] + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.reorder(j, i)  # the vector runs down a column of B: stride n on both sides
    _, ii = sch.split(i, [None, 8])
    sch.vectorize(ii)
    f = tvm.build(sch.mod, target="llvm")
    ll = f.get_source("ll")
    assert "llvm.masked.scatter" in ll and "llvm.masked.gather" in ll
    a = rand((n, n))
    b = np.empty_like(a)
    f(a, b)
    np.testing.assert_array_equal(b, a + np.float32(1.0))


def test_non_divisible_split_uses_masked_load_and_store(rand):
    f = tvm.build(_tail(1000, 16).mod, target="llvm")
    ll = f.get_source("ll")
    assert "llvm.masked.load.v16f32" in ll and "llvm.masked.store.v16f32" in ll
    assert "[masked_loads=1, masked_stores=1]" in f.loop_report()
    a = rand((1000,))
    b = np.full_like(a, np.nan)
    f(a, b)
    np.testing.assert_allclose(b, a * 3 + 1, rtol=1e-6, atol=1e-6)  # FMA-contracted


def test_a_serial_tail_is_a_narrower_vector_not_a_mask(rand):
    """1000 = 62 * 16 + 8: the serial outer loop is partitioned at its last tile, and that
    tile's vector loop keeps the 8 lanes its guard allows: no mask at all."""
    f = tvm.build(_tail(1000, 16, parallel=False).mod, target="llvm")
    report = f.loop_report()
    assert "SIMD x16 [vector_loads=1, vector_stores=1]" in report
    assert "SIMD x8 [vector_loads=1, vector_stores=1]" in report
    assert "masked" not in report and "llvm.masked" not in f.get_source("ll")
    a = rand((1000,))
    b = np.full_like(a, np.nan)
    f(a, b)
    np.testing.assert_allclose(b, a * 3 + 1, rtol=1e-6, atol=1e-6)


def test_lane_dependent_select_is_masked(rand):
    """if_then_else on a lane-dependent condition (zero padding) loads under a mask."""
    n = 48  # the second tile of 32 lanes straddles the padding's edge (the first is
    # partitioned off, unguarded)
    A = te.placeholder((n,), name="A")
    P = te.compute((n + 16,), lambda i: te.if_then_else(i < n, A[i], 0.0), name="P")
    sch = tir.Schedule(te.create_prim_func([A, P]))
    (i,) = sch.get_loops(sch.get_block("P"))
    _, ii = sch.split(i, [None, 32])
    sch.vectorize(ii)
    f = tvm.build(sch.mod, target="llvm")
    assert "[masked_loads=1, vector_stores=1]" in f.loop_report()
    assert "llvm.masked.load" in f.get_source("ll-unopt")
    a = rand((n,))
    p = np.full(n + 16, np.nan, np.float32)
    f(a, p)
    np.testing.assert_array_equal(p, np.concatenate([a, np.zeros(16, np.float32)]))


def test_non_power_of_two_lanes_are_emitted_in_chunks(rand):
    """48 lanes = 32 + 16: masks of odd widths living across blocks make LLVM scalarize."""
    f = tvm.build(_tail(1000, 48).mod, target="llvm")
    # the 32-lane chunk's loads provably stay inside A (tile 20 ends at 991): a plain load
    assert (
        "SIMD x48 [masked_loads=1, masked_stores=2, vector_loads=1, chunks=32+16]"
        in f.loop_report()
    )
    assert "v48" not in f.get_source("ll")
    a = rand((1000,))
    b = np.full_like(a, np.nan)
    f(a, b)
    np.testing.assert_allclose(b, a * 3 + 1, rtol=1e-6, atol=1e-6)


_GUARD_PAGE_SCRIPT = textwrap.dedent(
    """
    import ctypes, mmap, sys
    sys.path[:0] = sys.argv[2:]  # tests/perf_paths and tests: the shared schedule
    import numpy as np
    import ansor_lab as tvm
    from ansor_lab import te, tir
    from tiled_matmul import matmul_schedule, tile_matmul

    page = mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    keep = []

    def at_page_end(shape):
        # a float32 array ending exactly where a PROT_NONE page begins
        n = int(np.prod(shape))
        pages = -(-4 * n // page) + 1
        buf = mmap.mmap(-1, pages * page, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        assert libc.mprotect(base + (pages - 1) * page, page, 0) == 0
        keep.append(buf)
        return np.frombuffer(buf, np.float32, n, (pages - 1) * page - 4 * n).reshape(shape)

    if sys.argv[1].startswith("tail"):
        m = 1000
        A = te.placeholder((m,), name="A")
        B = te.compute((m,), lambda i: A[i] * 3.0 + 1.0, name="B")
        sch = tir.Schedule(te.create_prim_func([A, B]))
        (i,) = sch.get_loops(sch.get_block("B"))
        io, ii = sch.split(i, [None, 16])
        sch.vectorize(ii)
        if sys.argv[1] == "tail_masked":  # on threads: the last tile stays a lane mask
            sch.parallel(io)
        a, b = at_page_end((m,)), at_page_end((m,))
        a[:] = np.arange(m, dtype=np.float32)
        args, expect = [a, b], lambda: a * np.float32(3) + np.float32(1)
    else:  # a register-tiled matmul whose tiles overhang both M and N
        m, n, k = 100, 100, 70
        sch = tile_matmul(matmul_schedule(m, n, k), 3, 32)
        a, b, out = at_page_end((m, k)), at_page_end((k, n)), at_page_end((m, n))
        a[:] = np.arange(m * k).reshape(m, k) % 7
        b[:] = np.arange(k * n).reshape(k, n) % 5
        args, expect = [a, b, out], lambda: a @ b  # small integers: exact
    f = tvm.build(sch.mod, target="llvm", num_threads=1)
    f(*args)
    assert np.array_equal(args[-1], expect()), "wrong values"
    print("OK")
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="uses mmap/mprotect guard pages (Linux)")
@pytest.mark.parametrize("workload", ["tail", "tail_masked", "matmul_overhanging_tiles"])
def test_guarded_code_never_touches_memory_past_the_end(workload):
    """Every array ends right before an inaccessible page: an unmasked tail load or store,
    or a row of A read for a tile row past the end, would crash the (separate) process
    with SIGSEGV. (A lane-invariant load under a lane-dependent guard once did.)"""
    proc = subprocess.run(
        [sys.executable, "-c", _GUARD_PAGE_SCRIPT, workload, str(HERE), str(HERE.parent)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", (
        f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr[-2000:]}"
    )


def test_overhanging_register_tile_stays_in_registers(rand):
    """Guards on a thread-private tile whose elements all exist need no masked memory
    operations: loads are plain and stores blend, so LLVM keeps the tile in registers."""
    m, n, k = 50, 40, 30
    # j0 on threads: its guard (the last 16-wide tile holds 8 columns) stays a lane mask
    sch = tile_matmul(
        matmul_schedule(m, n, k), 3, 16, vectorize_write_back=False, pack=False, parallel=True
    )
    f = tvm.build(sch.mod, target="llvm", num_threads=1)
    report = f.loop_report()
    assert "blend_stores=1" in report and "masked_loads=1" in report, report
    assert not re.search(r"= alloca ", f.get_source("ll")), "the tile stayed in memory"
    a, b = rand((m, k)), rand((k, n))
    out = np.empty((m, n), np.float32)
    f(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_branch_free_odd_width_is_one_vector(rand):
    """A 7-wide row (a 7x7 feature map) without guards is one <7 x float> vector, which
    LLVM keeps in one register, not three chunks of 4 + 2 + 1. Where AVX-512 masks
    loads and stores, the input's load and the output's store are one masked access of
    8 lanes each (a plain one is split into 4 + 2 + 1 and reassembled)."""
    A = te.placeholder((8, 7), name="A")
    B = te.compute((8, 7), lambda i, j: A[i, j] * 3.0 + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    _, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    f = tvm.build(sch.mod, target="llvm")
    masked = Target("llvm").vector_bytes >= 64
    access = "padded_loads=1, padded_stores=1" if masked else "vector_loads=1, vector_stores=1"
    assert f"j (extent 7): vectorized -> SIMD x7 [{access}]" in f.loop_report(), f.loop_report()
    assert "<7 x float>" in f.get_source("ll-unopt")
    if masked:
        ll = f.get_source("ll-unopt")
        assert "llvm.masked.load.v8f32" in ll and "llvm.masked.store.v8f32" in ll
        # one masked move per row each way: no 4 + 2 + 1 pieces
        asm = f.get_source("asm")
        assert not re.search(r"vinsertps|vextractps|vmovq\s+%xmm", asm), asm
    a = rand((8, 7))
    b = np.full_like(a, np.nan)
    f(a, b)
    np.testing.assert_allclose(b, a * 3 + 1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("width", [3, 5, 6, 7, 12, 14, 28])
def test_odd_widths_masked_access_matches_numpy(dtype, width):
    """Every odd width and masked element type computes what numpy does; the last row's
    masked load and store touch nothing past the row (the buffers are exactly the rows)."""
    rows = 5
    A = te.placeholder((rows, width), name="A", dtype=dtype)
    B = te.compute((rows, width), lambda i, j: A[i, j] * 3 + A[i, width - 1 - j], name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    _, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    f = tvm.build(sch.mod, target="llvm")
    if Target("llvm").vector_bytes >= 64:
        # the row is cut into zmm-sized chunks first (float32 28: 16 + 12); only a last
        # chunk that is no power of two is padded (float64 12 = 8 + 4 needs none)
        per_zmm = 64 // np.dtype(dtype).itemsize
        last = width % per_zmm or per_zmm
        padded = last >= 3 and last & (last - 1) != 0
        assert ("padded_stores=" in f.loop_report()) == padded, f.loop_report()
    a = (np.arange(rows * width).reshape(rows, width) % 17 - 8).astype(dtype)
    b = np.zeros_like(a)
    f(a, b)
    np.testing.assert_array_equal(b, a * 3 + a[:, ::-1])
