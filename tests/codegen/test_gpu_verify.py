"""GPU legality checks: each illegal schedule is a GPUScheduleError saying why and what to do."""

import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.gpu_verify import check_gpu_program
from ansor_lab.codegen.pipeline import prepare
from ansor_lab.dsl import expr as E
from ansor_lab.errors import GPUScheduleError
from ansor_lab.ir import nodes as N


def elementwise(n, threads):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=threads)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    return tvm.lower(s, [A, B])["main"]


def test_legal_program_passes_and_returns_its_kernels():
    prog = check_gpu_program(elementwise(4096, 256), tvm.target.Target("nvidia/tesla-t4"))
    (k,) = prog.kernels
    assert (k.grid, k.block) == ((16, 1, 1), (256, 1, 1))


def test_too_many_threads_per_block():
    f = elementwise(4096, 2048)
    with pytest.raises(
        GPUScheduleError,
        match=r"2048 threads per block.*max_threads_per_block 1024.*smaller factors",
    ):
        check_gpu_program(f, "cuda")
    with pytest.raises(GPUScheduleError, match="max_threads_per_block 128"):
        check_gpu_program(elementwise(4096, 256), "cuda -max_num_threads=128")
    # build's pipeline runs the same check for cuda targets
    with pytest.raises(GPUScheduleError, match="2048 threads"):
        prepare(f, "cuda")


def shared_window(n, threads):
    A = te.placeholder((n + 2,), name="A")
    B = te.compute((n,), lambda i: A[i] + A[i + 1] + A[i + 2], name="B")
    s = te.create_schedule(B.op)
    AA = s.cache_read(A, "shared", [B])
    bx, tx = s[B].split(B.op.axis[0], factor=threads)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    s[AA].compute_at(s[B], tx)
    return tvm.lower(s, [A, B])["main"]


def test_too_much_shared_memory():
    f = shared_window(4096, 1024)  # A_shared: 1026 floats = 4104 bytes per block
    check_gpu_program(f, "cuda")
    with pytest.raises(
        GPUScheduleError, match=r"4104 bytes of shared memory.*A_shared \(1026,\).*4096"
    ):
        check_gpu_program(f, "cuda -max_shared_memory_per_block=4096")


def test_unbound_stage():
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    f = tvm.lower(s, [A, B])["main"]
    with pytest.raises(GPUScheduleError, match="not bound to GPU threads.*bind"):
        check_gpu_program(f, "cuda")


G = N.Buffer("G", (64,), "float32")
S = N.Buffer("S", (64,), "float32", "shared")


def loop(var, extent, body, tag=""):
    kind = "thread_binding" if tag else "serial"
    return N.For(var, E.IntImm(0), E.IntImm(extent), kind, body, tag)


def test_thread_axis_bound_twice_on_one_path():
    i, j = E.Var("i"), E.Var("j")
    store = N.BufferStore(G, E.FloatImm(1.0), (E.Add(E.Mul(i, E.IntImm(8), "int32"), j, "int32"),))
    body = loop(i, 8, loop(j, 8, store, "threadIdx.x"), "threadIdx.x")
    f = N.PrimFunc((G,), N.Block("G", loop(E.Var("b"), 1, body, "blockIdx.x")), "f")
    with pytest.raises(GPUScheduleError, match=r"binds threadIdx.x twice on one path.*fuse"):
        check_gpu_program(f, "cuda")
    # a stage computed inside another's thread loop may bind to the same tag (cooperative fetch)
    inner = N.Block("fill", loop(j, 8, store, "threadIdx.x"))
    ok = N.PrimFunc(
        (G,), N.Block("G", loop(E.Var("b"), 1, loop(i, 8, inner, "threadIdx.x"), "blockIdx.x")), "f"
    )
    check_gpu_program(ok, "cuda")


def test_reduction_raced_across_threads():
    i, t = E.Var("i"), E.Var("t")
    acc = N.BufferStore(
        G, E.Add(N.BufferLoad(G, (i,), "float32"), E.FloatImm(1.0), "float32"), (i,)
    )
    body = loop(E.Var("b"), 1, loop(t, 32, loop(i, 64, acc), "threadIdx.x"), "blockIdx.x")
    f = N.PrimFunc((G,), N.Block("G", body), "f")
    with pytest.raises(
        GPUScheduleError, match=r"accumulates into G\[i\].*threadIdx.x.*raced across threads"
    ):
        check_gpu_program(f, "cuda")


def test_shared_reduction_under_thread_loop_is_raced():
    # a shared reduction computed at a thread loop covers the whole block: every thread
    # would accumulate every element at once
    n = 64
    A = te.placeholder((n, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    R = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="R")
    B = te.compute((n,), lambda i: R[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    s[R].set_scope("shared")
    bx, tx = s[B].split(B.op.axis[0], factor=16)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    s[R].compute_at(s[B], tx)
    f = tvm.lower(s, [A, B])["main"]
    with pytest.raises(GPUScheduleError, match=r"stage 'R' accumulates into R.*raced"):
        check_gpu_program(f, "cuda")


def test_shared_buffer_outside_every_kernel():
    t = E.Var("t")
    body = N.Allocate(
        S,
        N.Block(
            "G",
            loop(
                E.Var("b"),
                1,
                loop(t, 64, N.BufferStore(G, E.FloatImm(0.0), (t,)), "threadIdx.x"),
                "blockIdx.x",
            ),
        ),
    )
    with pytest.raises(GPUScheduleError, match="allocated outside every kernel.*compute_at"):
        check_gpu_program(N.PrimFunc((G,), body, "f"), "cuda")
