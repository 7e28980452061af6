"""TVM's per-target TOPI schedules: ``topi.generic``, ``topi.x86``, ``topi.cuda``.

TVM's "Introduction to TOPI" tutorial runs as written after the import swap: every step
but the one that runs on ``tvm.cuda()`` arrays (no GPU here, or ANSOR_LAB_NO_GPU=1: our
GPUUnavailableError), whose built function is checked on the GPU emulator instead. Each
schedule is checked against numpy: the CPU ones built for llvm, the CUDA ones compiled
(NVRTC / nvcc) and run on the emulator. Then TVM's ``topi.testing`` dispatch helpers and
the errors for targets and names the namespaces do not serve.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, topi
from ansor_lab.errors import (
    GPUUnavailableError,
    MissingOperatorError,
    OutOfScopeError,
    ScheduleError,
    TargetError,
)
from ansor_lab.runtime import cuda_support

# TVM's gallery/tutorial/intro_topi.py (0.8-0.12), code as written after the import swap;
# "# step:" lines cut it where its prose does
INTRO_TOPI = """
# step: imports
import ansor_lab as tvm
import ansor_lab.testing
from ansor_lab import te
from ansor_lab import topi
import numpy as np

# step: basic
n = te.var("n")
m = te.var("m")
A = te.placeholder((n, m), name="A")
k = te.reduce_axis((0, m), "k")
B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
s = te.create_schedule(B.op)
print(tvm.lower(s, [A], simple_mode=True))

# step: topi_sum
C = topi.sum(A, axis=1)
ts = te.create_schedule(C.op)
print(tvm.lower(ts, [A], simple_mode=True))

# step: overloading
x, y = 100, 10
a = te.placeholder((x, y, y), name="a")
b = te.placeholder((y, y), name="b")
c = a + b  # same as topi.broadcast_add
d = a * b  # same as topi.broadcast_mul

# step: schedule_reduce
e = topi.elemwise_sum([c, d])
f = e / 2.0
g = topi.sum(f)
with tvm.target.cuda():
    sg = topi.cuda.schedule_reduce(g)
    print(tvm.lower(sg, [a, b], simple_mode=True))

# step: stages
print(sg.stages)

# step: build
func = tvm.build(sg, [a, b, g], "cuda")

# step: run
dev = tvm.cuda(0)
a_np = np.random.uniform(size=(x, y, y)).astype(a.dtype)
b_np = np.random.uniform(size=(y, y)).astype(b.dtype)
g_np = np.sum(np.add(a_np + b_np, a_np * b_np) / 2.0)
a_nd = tvm.nd.array(a_np, dev)
b_nd = tvm.nd.array(b_np, dev)
g_nd = tvm.nd.array(np.zeros(g_np.shape, dtype=g_np.dtype), dev)
func(a_nd, b_nd, g_nd)
tvm.testing.assert_allclose(g_nd.numpy(), g_np, rtol=1e-5)

# step: softmax
tarray = te.placeholder((512, 512), name="tarray")
softmax_topi = topi.nn.softmax(tarray)
with tvm.target.Target("cuda"):
    sst = topi.cuda.schedule_softmax(softmax_topi)
    print(tvm.lower(sst, [tarray], simple_mode=True))

# step: conv
data = te.placeholder((1, 3, 224, 224))
kernel = te.placeholder((10, 3, 5, 5))

with tvm.target.Target("cuda"):
    conv = topi.cuda.conv2d_nchw(data, kernel, 1, 2, 1)
    out = topi.nn.relu(conv)
    sconv = topi.cuda.schedule_conv2d_nchw([out])
    print(tvm.lower(sconv, [data, kernel], simple_mode=True))
"""


def tutorial_steps(text: str) -> list[tuple[str, str]]:
    """(name, code) of each step, line numbers kept."""
    lines = text.splitlines(keepends=True)
    marks = [(k, m.group(1)) for k, ln in enumerate(lines) if (m := re.match(r"# step: (\w+)", ln))]
    bounds = marks + [(len(lines), "")]
    return [
        (name, "\n" * start + "".join(lines[start:end]))
        for (start, name), (end, _) in zip(marks, bounds[1:])
    ]


@pytest.fixture
def no_gpu(monkeypatch):
    """The machine counts as having no GPU (the same test where one exists)."""
    monkeypatch.setenv("ANSOR_LAB_NO_GPU", "1")
    cuda_support.cuda_unavailable_reason.cache_clear()
    yield
    cuda_support.cuda_unavailable_reason.cache_clear()


def test_intro_topi_tutorial_as_written(no_gpu, capsys):
    ns: dict = {"__name__": "__tutorial__"}
    outcome: dict = {}
    printed: dict = {}
    for name, code in tutorial_steps(INTRO_TOPI):
        try:
            exec(compile(code, "intro_topi.py", "exec"), ns)
            outcome[name] = None
        except Exception as err:  # noqa: BLE001 - recorded, asserted below
            outcome[name] = err
        printed[name] = capsys.readouterr().out
    assert list(outcome) == [
        "imports", "basic", "topi_sum", "overloading", "schedule_reduce", "stages", "build",
        "run", "softmax", "conv",
    ]  # fmt: skip
    failed = {k: v for k, v in outcome.items() if v is not None}
    # only the step that runs on tvm.cuda() arrays needs a GPU
    assert list(failed) == ["run"], failed
    assert isinstance(failed["run"], GPUUnavailableError)
    assert "emulate" in str(failed["run"])

    assert "for k in range(m):" in printed["basic"]
    assert "T_sum[i0] = T_sum[i0] + A[i0, k1]" in printed["topi_sum"]
    # schedule_reduce: everything inlined into one cross-thread reduction over the
    # target's 1024 threads, thread 0 storing the scalar
    ir = printed["schedule_reduce"]
    assert 'T.thread_binding(1024, thread="threadIdx.x")' in ir
    assert 'T_sum_red_shared = T.alloc_buffer((1024,), "float32", scope="shared")' in ir
    assert ir.count('T.tvm_storage_sync("shared")') == 11  # after the partials, 10 steps
    assert "elemwise_sum" not in ir and "T_divide" not in ir  # inlined
    assert "T_sum[] = T_sum_red_shared[0]" in ir
    assert "stage(T_sum_rf, loops=[" in printed["stages"]
    assert "stage(T_sum, loops=[k0_k1_k2_fused_1_v:1024])" in printed["stages"]
    # the built function, on the emulator, against the tutorial's own reference
    got = np.zeros((), "float32")
    ns["func"].emulate(ns["a_np"], ns["b_np"], got)
    np.testing.assert_allclose(got, ns["g_np"], rtol=1e-5)
    assert "__global__" in ns["func"].imported_modules[0].get_source()
    # softmax: a block per row, both reductions across 64 threads
    ir = printed["softmax"]
    assert ir.count('T.thread_binding(512, thread="blockIdx.x")') == 4
    assert ir.count('T.thread_binding(64, thread="threadIdx.x")') == 4
    assert "cross_thread_reduction" in ir and "T_softmax_expsum_red_shared" in ir
    # conv2d + relu: padding inlined, one thread per output element, conv in a register
    ir = printed["conv"]
    for tag, extent in [("blockIdx.z", 5), ("blockIdx.y", 28), ("blockIdx.x", 14),
                        ("threadIdx.z", 2), ("threadIdx.y", 8), ("threadIdx.x", 16)]:  # fmt: skip
        assert f'T.thread_binding({extent}, thread="{tag}")' in ir
    assert 'conv2d_nchw = T.alloc_buffer((1, 1, 1, 1), "float32", scope="local")' in ir
    assert "pad_temp" not in ir and "T.max(conv2d_nchw[0, 0, 0, 0], T.float32(0.0))" in ir


# -- helpers -----------------------------------------------------------------------------


def shape_of(t) -> tuple:
    return tuple(int(d) for d in t.shape)


def run_schedule(target: str, schedule, outs, inputs: list) -> tuple[list, list, str]:
    """Schedule ``outs`` under ``target``, build, run (CUDA: on the emulator) on random
    data; (input arrays, output arrays, lowered IR text)."""
    outs = outs if isinstance(outs, list) else [outs]
    with tvm.target.Target(target):
        s = schedule(outs if len(outs) > 1 else outs[0])
    ir = str(tvm.lower(s, inputs + outs, simple_mode=True))
    func = tvm.build(s, inputs + outs, target)
    rng = np.random.default_rng(7)  # the same data whatever order the tests run in
    ins = [rng.uniform(-1, 1, size=shape_of(t)).astype(t.dtype) for t in inputs]
    res = [np.zeros(shape_of(t), t.dtype) for t in outs]
    (func.emulate if target == "cuda" else func)(*ins, *res)
    return ins, res, ir


def softmax_ref(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# -- injective and reduction -------------------------------------------------------------

INJECTIVE = [
    ("llvm", topi.generic.schedule_injective, "T.thread_binding"),
    ("llvm", topi.x86.schedule_injective, "T.vectorized"),
    ("cuda", topi.cuda.schedule_injective, 'thread="threadIdx.x"'),
    ("llvm", topi.generic.schedule_broadcast, None),
    ("cuda", topi.cuda.schedule_elemwise, 'thread="blockIdx.x"'),
]


@pytest.mark.parametrize(("target", "schedule", "marker"), INJECTIVE)
def test_injective_schedules(target, schedule, marker):
    A = te.placeholder((3, 5, 37), name="A")
    B = te.placeholder((5, 37), name="B")
    C = topi.exp(A + B) * 2.0
    (a, b), (c,), ir = run_schedule(target, schedule, C, [A, B])
    np.testing.assert_allclose(c, np.exp(a + b) * 2.0, rtol=1e-5)
    assert "T_add" not in ir  # the producer inlined
    if marker == "T.thread_binding":  # generic: one fused serial loop, nothing bound
        assert marker not in ir and "for i0_i1_i2_fused in range(555):" in ir
    elif marker:
        assert marker in ir
    if schedule is topi.x86.schedule_injective:
        assert "T.parallel(15)" in ir and "T.vectorized(16)" in ir


REDUCE_TARGETS = [
    ("llvm", topi.generic.schedule_reduce),
    ("llvm", topi.x86.schedule_reduce),
    ("cuda", topi.cuda.schedule_reduce),
]
REDUCTIONS = {
    "row_sum_then_divide": (lambda A: topi.sum(topi.exp(A), axis=1) / 3.0,
                            lambda a: np.exp(a).sum(1) / 3.0),
    "all_max": (lambda A: topi.max(A), lambda a: a.max()),
    "column_sum_keepdims": (lambda A: topi.sum(A, axis=0, keepdims=True),
                            lambda a: a.sum(0, keepdims=True)),
    "argmax": (lambda A: topi.argmax(A, axis=1), lambda a: a.argmax(1)),
}  # fmt: skip


@pytest.mark.parametrize("case", list(REDUCTIONS))
@pytest.mark.parametrize(("target", "schedule"), REDUCE_TARGETS)
def test_reduce_schedules(target, schedule, case):
    A = te.placeholder((5, 21), name="A")
    build, ref = REDUCTIONS[case]
    (a,), (r,), ir = run_schedule(target, schedule, build(A), [A])
    np.testing.assert_allclose(r, ref(a), rtol=1e-5, atol=1e-6)
    if target == "cuda":
        assert "cross_thread_reduction" in ir and 'thread="threadIdx.x"' in ir
        if case in ("row_sum_then_divide", "column_sum_keepdims"):
            # TVM's 32 rows of a block on threadIdx.y, the ones past the end guarded
            assert 'T.thread_binding(32, thread="threadIdx.y")' in ir
    elif schedule is topi.x86.schedule_reduce and case == "row_sum_then_divide":
        assert "T.parallel(5)" in ir


# -- softmax -----------------------------------------------------------------------------

SOFTMAX = [
    ("llvm", topi.generic.schedule_softmax, "softmax", -1, (2, 24)),
    ("llvm", topi.x86.schedule_softmax, "softmax", -1, (2, 24)),
    ("llvm", topi.x86.schedule_softmax, "log_softmax", 1, (2, 3, 8)),
    ("cuda", topi.cuda.schedule_softmax, "softmax", -1, (2, 24)),
    ("cuda", topi.cuda.schedule_softmax, "log_softmax", -1, (2, 24)),
    ("cuda", topi.cuda.schedule_softmax, "fast_softmax", 0, (24, 2)),
    ("cuda", topi.cuda.schedule_softmax, "softmax", -1, (2, 3, 8)),
]


@pytest.mark.parametrize(("target", "schedule", "kind", "axis", "shape"), SOFTMAX)
def test_softmax_schedules(target, schedule, kind, axis, shape):
    X = te.placeholder(shape, name="X")
    S = getattr(topi.nn, kind)(X, axis=axis)
    (x,), (o,), ir = run_schedule(target, schedule, S, [X])
    ref = softmax_ref(x, axis)
    np.testing.assert_allclose(o, np.log(ref) if kind == "log_softmax" else ref, rtol=1e-4)
    if target == "cuda" and len(shape) == 2:
        assert ir.count("cross_thread_reduction") == 2  # the max and the sum
        assert ir.count('T.thread_binding(64, thread="threadIdx.x")') == 3 + (kind == "softmax")
    if schedule is topi.x86.schedule_softmax:  # the axes before the softmax axis parallel
        assert f"T.parallel({int(np.prod(shape[: axis % len(shape)]))})" in ir


# -- convolution, dense, pools -----------------------------------------------------------

CONV = [
    ("llvm", topi.nn.conv2d_nchw, topi.generic.schedule_conv2d_nchw),
    ("llvm", topi.x86.conv2d_nchw, topi.x86.schedule_conv2d_nchw),
    ("cuda", topi.cuda.conv2d_nchw, topi.cuda.schedule_conv2d_nchw),
]


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize(("target", "compute", "schedule"), CONV)
def test_conv2d_nchw_schedules(target, compute, schedule, relu):
    D = te.placeholder((1, 3, 12, 10), name="D")
    K = te.placeholder((5, 3, 3, 3), name="K")
    with tvm.target.Target(target):
        out = compute(D, K, 1, 1, 1)
        out = topi.nn.relu(out) if relu else out
    (d, k), (o,), ir = run_schedule(target, schedule, out, [D, K])
    ref = topi.testing.conv2d_nchw_python(d, k, 1, 1)
    np.testing.assert_allclose(o, np.maximum(ref, 0) if relu else ref, rtol=1e-4, atol=1e-5)
    if schedule is not topi.generic.schedule_conv2d_nchw:
        assert "pad_temp" not in ir  # inlined
    if target == "cuda":
        assert 'scope="local"' in ir and 'thread="threadIdx.z"' in ir


DENSE = [
    ("llvm", topi.nn.dense, topi.generic.schedule_dense),
    ("llvm", topi.x86.dense_nopack, topi.x86.schedule_dense_nopack),
    ("llvm", topi.x86.dense_pack, topi.x86.schedule_dense_pack),
    ("cuda", topi.cuda.dense_small_batch, topi.cuda.schedule_dense_small_batch),
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(("target", "compute", "schedule"), DENSE)
def test_dense_schedules(target, compute, schedule, bias):
    X = te.placeholder((2, 70), name="X")
    W = te.placeholder((6, 70), name="W")
    Bias = te.placeholder((6,), name="Bias")
    out = compute(X, W, Bias if bias else None)
    ins, (o,), ir = run_schedule(target, schedule, out, [X, W] + ([Bias] if bias else []))
    ref = ins[0] @ ins[1].T + (ins[2] if bias else 0)
    np.testing.assert_allclose(o, ref, rtol=1e-4, atol=1e-5)
    if target == "cuda":
        assert 'T.thread_binding(6, thread="blockIdx.x")' in ir and "cross_thread" in ir


@pytest.mark.parametrize(("target", "pool", "adaptive"), [
    ("llvm", topi.generic.schedule_pool, topi.generic.schedule_adaptive_pool),
    ("cuda", topi.cuda.schedule_pool, topi.cuda.schedule_adaptive_pool),
])  # fmt: skip
def test_pool_schedules(target, pool, adaptive):
    P = te.placeholder((1, 2, 9, 9), name="P")
    for kind in ("max", "avg"):
        out = topi.nn.pool2d(P, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), kind)
        (p,), (o,), ir = run_schedule(target, pool, out, [P])
        ref = topi.testing.pool2d_python(p, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), kind)
        np.testing.assert_allclose(o, ref, rtol=1e-5, atol=1e-6)
    out = topi.nn.adaptive_pool(P, (3, 3), "avg")
    (p,), (o,), ir = run_schedule(target, adaptive, out, [P])
    np.testing.assert_allclose(o, topi.testing.adaptive_pool(p, (3, 3), "avg", "NCHW"), rtol=1e-5)
    if target == "cuda":
        assert 'scope="local"' in ir and 'thread="threadIdx.x"' in ir


def test_other_generic_schedules_are_the_default_schedule():
    X = te.placeholder((2, 4, 4, 3), name="X")
    K = te.placeholder((3, 3, 3, 5), name="K")
    out = topi.nn.conv2d_nhwc(X, K, 1, 1, 1)
    (x, k), (o,), _ = run_schedule("llvm", topi.generic.schedule_conv2d_nhwc, out, [X, K])
    np.testing.assert_allclose(o, topi.testing.conv2d_nhwc_python(x, k, 1, 1), rtol=1e-4)
    D = te.placeholder((1, 3, 6, 6), name="D")
    W = te.placeholder((3, 1, 3, 3), name="W")
    out = topi.nn.depthwise_conv2d_nchw(D, W, 1, 1, 1)
    (d, w), (o,), _ = run_schedule("llvm", topi.generic.schedule_depthwise_conv2d_nchw, out, [D, W])
    ref = topi.testing.depthwise_conv2d_python_nchw(d, w, 1, 1)
    np.testing.assert_allclose(o, ref, rtol=1e-4)
    A = te.placeholder((2, 3, 4), name="A")
    B = te.placeholder((2, 5, 4), name="B")
    (a, b), (o,), _ = run_schedule(
        "llvm", topi.generic.schedule_batch_matmul, topi.nn.batch_matmul(A, B), [A, B]
    )
    np.testing.assert_allclose(o, a @ b.transpose(0, 2, 1), rtol=1e-5)
    with tvm.target.Target("llvm"):
        s = topi.generic.schedule_extern(topi.nn.relu(A))
        s2 = topi.generic.default_schedule(topi.nn.relu(A), False)
    assert [st.name for st in s.stages] == [st.name for st in s2.stages] == ["T_relu"]


# -- topi.testing helpers, errors --------------------------------------------------------


def test_testing_dispatch_helpers():
    T = topi.testing
    assert T.get_injective_schedule("llvm") is topi.x86.schedule_injective
    assert T.get_injective_schedule(tvm.target.Target("cuda")) is topi.cuda.schedule_injective
    assert T.get_broadcast_schedule("cuda") is T.get_elemwise_schedule("cuda")
    assert T.get_reduce_schedule("llvm") is topi.x86.schedule_reduce
    assert T.get_reduce_schedule("cuda") is topi.cuda.schedule_reduce
    assert T.get_conv2d_nchw_implement("cuda") == (
        topi.cuda.conv2d_nchw, topi.cuda.schedule_conv2d_nchw
    )  # fmt: skip
    assert T.dispatch("cuda", {"generic": 1, "cpu": 2}) == 1  # no key of the map: generic
    assert T.dispatch("llvm", {"generic": 1, "cpu": 2}) == 2
    # TVM's test_topi_broadcast idiom, on both targets
    A = te.placeholder((4, 1), name="A")
    B = te.placeholder((4, 6), name="B")
    C = topi.add(A, B)
    for target in ("llvm", "cuda"):
        (a, b), (c,), _ = run_schedule(target, T.get_broadcast_schedule(target), C, [A, B])
        np.testing.assert_allclose(c, a + b, rtol=1e-6)


def test_wrong_or_missing_target_says_what_to_call():
    A = te.placeholder((4, 4), name="A")
    B = topi.exp(A)
    with tvm.target.Target("cuda"), pytest.raises(TargetError, match=r"topi\.cuda\.schedule_inj"):
        topi.generic.schedule_injective(B)
    with pytest.raises(TargetError, match=r"with tvm\.target\.Target\('cuda'\)"):
        topi.cuda.schedule_injective(B)
    with pytest.raises(TargetError, match="needs a target"):
        topi.generic.schedule_reduce(topi.sum(A))
    # x86 schedules, as TVM's, need none
    assert topi.x86.schedule_injective(B).stages[0].name == "T_exp"
    # a scalar has no loop to bind (TVM makes up a unit loop): say what to write
    scalar = topi.exp(te.placeholder((), name="S"))
    with tvm.target.Target("cuda"), pytest.raises(ScheduleError, match=r"0-d.*shape \(1,\)"):
        topi.cuda.schedule_injective(scalar)
    # a reduction the recipe does not know (dense) under the sum: named, with the way out
    dense = topi.nn.dense(te.placeholder((4, 8), name="X"), te.placeholder((8, 8), name="W"))
    with (
        tvm.target.Target("cuda"),
        pytest.raises(ScheduleError, match=r"operator 'T_dense' \(tag 'dense'\).*create_sch"),
    ):
        topi.cuda.schedule_reduce(topi.sum(dense, axis=1))


def test_names_the_namespaces_lack_explain():
    with pytest.raises(MissingOperatorError, match=r"topi\.cuda\.schedule_lrn: .*te\.create_sch"):
        topi.cuda.schedule_lrn  # noqa: B018 - the access itself must raise
    with pytest.raises(AttributeError, match="schedule_reduce, schedule_softmax"):
        topi.x86.conv2d_nchwc  # noqa: B018
    assert not hasattr(topi.generic, "__wrapped__")
    with pytest.raises(OutOfScopeError, match=r"topi\.arm_cpu\.schedule_injective: "):
        topi.arm_cpu.schedule_injective  # noqa: B018
    # `from tvm.topi.cuda import ...` after the swap
    from ansor_lab.topi.cuda import schedule_reduce  # noqa: PLC0415

    assert schedule_reduce is topi.cuda.schedule_reduce


def test_symbolic_shapes():
    """Over ``te.var`` shapes (the tutorial's first DAG): scheduled on the probe, built per
    call shape."""
    n = te.var("n")
    A = te.placeholder((n, 8), name="A")
    B = topi.exp(A) + 1.0
    C = topi.sum(A, axis=1)
    a = np.random.default_rng(3).random((5, 8), dtype="float32")
    with tvm.target.Target("cuda"):
        sb, sc = topi.cuda.schedule_injective(B), topi.cuda.schedule_reduce(C)
    assert 'T.thread_binding(512, thread="threadIdx.x")' in str(tvm.lower(sb, [A, B]))
    b, c, c_cpu = np.zeros_like(a), np.zeros(5, "float32"), np.zeros(5, "float32")
    tvm.build(sb, [A, B], "cuda").emulate(a, b)
    tvm.build(sc, [A, C], "cuda").emulate(a, c)
    tvm.build(topi.x86.schedule_reduce(C), [A, C], "llvm")(a, c_cpu)
    np.testing.assert_allclose(b, np.exp(a) + 1.0, rtol=1e-6)
    np.testing.assert_allclose(c, a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(c_cpu, a.sum(1), rtol=1e-5)
