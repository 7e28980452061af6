"""Layout-changing copies under random loop orders, splits and vector widths.

Each case is ``out = transpose(inp, perm)`` on a small random shape, with the loops split,
reordered and the innermost vectorized at random: the code generator may take the
transposed-copy path (row loads, register shuffles, column stores), the gather path or
scalar code. Whichever it takes, the output must equal numpy's exactly, and every case
where the vector runs across the source's rows with a contiguous walk around it must take
the transposed path (or the fuzz would test nothing new).

Profiles: ``ANSOR_FUZZ_PROFILE=ci`` (default: deterministic, 150 cases) or ``thorough``
(random seed, 2000 cases).
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import ansor_lab as tvm
from ansor_lab import te, tir

settings.register_profile(
    "copy-fuzz-ci",
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "copy-fuzz-thorough",
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile(
    "copy-fuzz-thorough" if os.environ.get("ANSOR_FUZZ_PROFILE") == "thorough" else "copy-fuzz-ci"
)
SIZES = [1, 2, 3, 4, 6, 8, 12, 16, 32]
DTYPES = ["float32", "float32", "float64", "float16", "int8"]
LANES = [4, 8, 16]


@st.composite
def copies(draw):
    ndim = draw(st.integers(2, 4))
    shape = tuple(draw(st.sampled_from(SIZES)) for _ in range(ndim))
    perm = draw(st.permutations(range(ndim)))
    dtype = draw(st.sampled_from(DTYPES))
    lanes = draw(st.sampled_from(LANES))
    order_seed = draw(st.integers(0, 1 << 16))
    return shape, tuple(perm), dtype, lanes, order_seed


@PROFILE
@given(copies())
def test_random_copies_are_exact(case):
    run_case(case)


def test_a_fixed_sweep_takes_the_transposed_path_often_enough():
    """The same cases drawn with numpy: a twentieth of them at least must exercise the
    transposed path (else the fuzz above would test nothing new)."""
    rng = np.random.default_rng(7)
    taken = 0
    for _ in range(80):
        ndim = int(rng.integers(2, 5))
        case = (
            tuple(int(rng.choice(SIZES)) for _ in range(ndim)),
            tuple(int(x) for x in rng.permutation(ndim)),
            str(rng.choice(DTYPES)),
            int(rng.choice(LANES)),
            int(rng.integers(0, 1 << 16)),
        )
        taken += run_case(case)
    assert taken >= 4, taken


def run_case(case) -> bool:
    """Build, run and check one copy; whether it took the transposed path."""
    shape, perm, dtype, lanes, order_seed = case
    inp = te.placeholder(shape, name="inp", dtype=dtype)
    out_shape = tuple(shape[p] for p in perm)

    def body(*idx):
        src = [None] * len(shape)
        for k, p in enumerate(perm):
            src[p] = idx[k]
        return inp[tuple(src)]

    out = te.compute(out_shape, body, name="out")
    sch = tir.Schedule(te.create_prim_func([inp, out]))
    loops = list(sch.get_loops(sch.get_block("out")))
    last = loops.pop()
    if out_shape[-1] % lanes == 0 and out_shape[-1] > lanes:
        outer_part, last = sch.split(last, [None, lanes])
        loops.append(outer_part)
    rng = np.random.default_rng(order_seed)
    order = [loops[k] for k in rng.permutation(len(loops))]
    sch.reorder(*order, last)
    if out_shape[-1] > 1:
        sch.vectorize(last)
    f = tvm.build(sch.mod, target="llvm")
    rng_data = np.random.default_rng(order_seed + 1)
    a = (rng_data.standard_normal(shape) * 100).astype(dtype)
    got = np.zeros(out_shape, dtype)
    f(a, got)
    np.testing.assert_array_equal(got, np.transpose(a, perm))
    return "transposed copy" in f.loop_report()
