"""TVM's math functions and integer bit operations on the CUDA backend: the generated C
compiles (nvcc and NVRTC, plain and fast math), and the kernels run on the GPU emulator
equal to numpy, shifts out of range and float specials included."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.codegen.cuda_compile import compile_cuda, nvcc_path, nvrtc_available
from ansor_lab.codegen.emulator import emulate

N = 128
RNG = np.random.default_rng(5)
FLOAT_UNARY = (
    "exp2 exp10 log2 log10 log1p sin cos tan sinh cosh asin acos atan asinh acosh atanh "
    "trunc nearbyint"
).split()
FLOAT_BINARY = ("atan2", "fmod", "hypot", "copysign", "nextafter")
INT_OPS = {
    "and": lambda x, y: x & y,
    "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y,
    "not": lambda x, y: ~x,
    "shl": lambda x, y: x << y,
    "shr": lambda x, y: x >> y,
    "popcount": lambda x, y: tir.popcount(x),
    "clz": lambda x, y: tir.clz(x),
}


def _bind(s, t) -> None:
    bo, ti = s[t].split(t.op.axis[0], factor=32)
    s[t].bind(bo, te.thread_axis("blockIdx.x"))
    s[t].bind(ti, te.thread_axis("threadIdx.x"))


def _float_outputs(x, y, dtype: str) -> list:
    """One output per float intrinsic (the classifications as 0/1 in ``dtype``)."""
    outs = [te.compute((N,), lambda i, n=n: getattr(te, n)(x[i]), name=n) for n in FLOAT_UNARY]
    names = [n for n in FLOAT_BINARY if not (n == "nextafter" and dtype == "float16")]
    outs += [te.compute((N,), lambda i, n=n: getattr(te, n)(x[i], y[i]), name=n) for n in names]
    one, zero = tvm.tir.const(1, dtype), tvm.tir.const(0, dtype)
    for n in ("isnan", "isinf", "isfinite"):
        cond = lambda i, n=n: te.if_then_else(getattr(te, n)(x[i]), one, zero)  # noqa: E731
        outs.append(te.compute((N,), cond, name=n))
    return outs


@functools.cache
def kernels(dtype: str):
    """(schedule args, lowered function, CUDA source) of every intrinsic in ``dtype``."""
    x, y = te.placeholder((N,), dtype, name="x"), te.placeholder((N,), dtype, name="y")
    if dtype.startswith("float"):
        outs = _float_outputs(x, y, dtype)
    else:
        outs = [
            te.compute((N,), lambda i, fn=fn: fn(x[i], y[i]), name=n) for n, fn in INT_OPS.items()
        ]
    s = te.create_schedule([o.op for o in outs])
    for o in outs:
        _bind(s, o)
    args = [x, y, *outs]
    mod = tvm.build(s, args, target="cuda")
    return args, tvm.lower(s, args)["main"], mod.get_source("cuda")


def _inputs(dtype: str) -> list:
    if dtype.startswith("float"):
        a = RNG.uniform(-0.95, 0.95, N)  # inside every domain (asin, atanh...)
        a[:4] = [np.nan, np.inf, -np.inf, -0.0]
        b = RNG.uniform(-2, 2, N)
        b[4:7] = [0.0, -0.0, np.nan]
        return [a.astype(dtype), b.astype(dtype)]
    info, bits = np.iinfo(dtype), np.dtype(dtype).itemsize * 8
    a = RNG.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    b = RNG.integers(-3, bits + 3, N).astype(dtype)
    b[:3] = [-1, bits, bits - 1]
    return [a, b]


DTYPES = ["float32", "float64", "float16", "int8", "int32", "int64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_on_the_emulator_equal_to_the_reference(dtype):
    args, func, _ = kernels(dtype)
    arrays = _inputs(dtype)
    outs = [np.zeros(N, o.dtype) for o in args[2:]]
    emulate(func, [*arrays, *outs])
    reference = te.evaluate(args[2:], dict(zip(args[:2], arrays)))
    tol = {"float16": 3e-3, "float32": 3e-6, "float64": 1e-12}.get(dtype, 0)
    for o, got in zip(args[2:], outs):
        want = reference[o]
        if dtype.startswith("float"):
            np.testing.assert_allclose(
                got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=o.name
            )
        else:
            np.testing.assert_array_equal(got, want, err_msg=o.name)
    if dtype == "int32":  # the out-of-range shifts: 0, and the sign for >>
        shl, shr = outs[list(INT_OPS).index("shl")], outs[list(INT_OPS).index("shr")]
        assert shl[:2].tolist() == [0, 0]
        assert shr[:2].tolist() == [-1 if v < 0 else 0 for v in arrays[0][:2]]


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_source_names_the_cuda_functions(dtype):
    _, _, source = kernels(dtype)
    if dtype == "float32":
        for name in ("sinf(", "atan2f(", "nearbyintf(", "isnan(", "log1pf(", "fmodf("):
            assert name in source, name
    elif dtype == "float64":
        assert "acosh(" in source and "acoshf(" not in source
    elif dtype == "float16":
        assert "__half2float" in source and "__float2half_rn(sinf(" in source
    else:
        assert "shl_<" in source and "shr_<" in source
        assert ("__popcll(" if dtype == "int64" else "__popc(") in source


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not on this machine")
@pytest.mark.parametrize("dtype", DTYPES)
def test_nvcc_compiles_them(dtype):
    _, func, source = kernels(dtype)
    out = compile_cuda(source, "sm_80", "nvcc")
    assert out.cubin[:4] == b"\x7fELF" and ".entry" in out.ptx


@pytest.mark.skipif(not nvrtc_available(), reason="NVRTC is not installed")
@pytest.mark.parametrize("fast_math", [False, True])
def test_nvrtc_compiles_them_with_and_without_fast_math(fast_math):
    for dtype in ("float32", "float16", "int64"):
        out = compile_cuda(kernels(dtype)[2], "sm_80", "nvrtc", fast_math=fast_math)
        assert out.cubin[:4] == b"\x7fELF"


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not on this machine")
def test_tensors_named_like_cpp_keywords_or_called_functions_compile():
    # CUDA C is C++: "and", "new", "default" are keywords; "sinf", "isnan", "shl_" are
    # functions the generated code calls, which a parameter of that name would shadow
    names = ["and", "new", "default", "class", "sinf", "isnan", "shl_", "floordiv_"]
    x = te.placeholder((N,), "int32", name="x")
    outs = [te.compute((N,), lambda i, k=k: (x[i] << 1) + k, name=n) for k, n in enumerate(names)]
    y = te.compute((N,), lambda i: te.sin(x[i].astype("float32")), name="sin")
    s = te.create_schedule([o.op for o in [*outs, y]])
    for o in [*outs, y]:
        _bind(s, o)
    source = tvm.build(s, [x, *outs, y], target="cuda").get_source("cuda")
    assert "__restrict__ and_)" in source and "__restrict__ new_)" in source
    assert "__restrict__ sinf_)" in source and "__restrict__ isnan_)" in source
    assert compile_cuda(source, "sm_80", "nvcc").cubin[:4] == b"\x7fELF"
