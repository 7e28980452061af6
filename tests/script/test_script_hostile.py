"""Hostile TVMScript: inputs that used to parse into a silently wrong program.

Loop steps, stores of another dtype, non-bijective block bindings and loop-carried
dependences under vectorized/parallel loops either compute exactly what Python would, or
are refused with a ScriptError that says what to write instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab.errors import AnsorLabError, ScriptError
from ansor_lab.script import from_source


def _func(params: str, body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return f"@T.prim_func\ndef main({params}):\n{lines}\n"


def _run(text: str, *arrays: np.ndarray) -> None:
    tvm.build(from_source(text), target="llvm")(*arrays)


A8_B8 = 'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")'


def _a_b(n: int = 8) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(1, n + 1, dtype="float32"), np.zeros(n, "float32")


# -- 1. loop steps ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "loop, start, stop, step",
    [
        ("range(0, 8, 2)", 0, 8, 2),
        ("range(1, 8, 3)", 1, 8, 3),
        ("T.serial(0, 8, step=2)", 0, 8, 2),
        ("T.parallel(1, 8, step=2)", 1, 8, 2),
        ("T.unroll(0, 7, step=4)", 0, 7, 4),
        ("T.vectorized(0, 8, step=2)", 0, 8, 2),
    ],
)
def test_a_loop_step_visits_exactly_the_python_range(loop, start, stop, step):
    text = _func(A8_B8, f"for i in {loop}:\n    B[i] = A[i]")
    a, b = _a_b()
    _run(text, a, b)
    want = np.zeros(8, "float32")
    want[start:stop:step] = a[start:stop:step]
    np.testing.assert_array_equal(b, want)


def test_a_stepped_loop_prints_as_a_unit_loop_and_parses_back():
    func = from_source(_func(A8_B8, "for i in range(1, 8, 3):\n    B[i] = A[i]"))
    text = func.script()
    assert "range(3)" in text and "i * 3 + 1" in text.replace("1 + i * 3", "i * 3 + 1")
    tvm.ir.assert_structural_equal(func, from_source(text))


def test_a_stepped_loop_with_a_bound_from_an_outer_loop():
    text = _func(
        'A: T.Buffer((3, 8), "float32"), B: T.Buffer((3, 8), "float32")',
        "for i in range(3):\n    for j in range(i, 8, 2):\n        B[i, j] = A[i, j]",
    )
    a = np.arange(24, dtype="float32").reshape(3, 8) + 1
    b = np.zeros((3, 8), "float32")
    _run(text, a, b)
    want = np.zeros((3, 8), "float32")
    for i in range(3):
        want[i, i:8:2] = a[i, i:8:2]
    np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("loop", ["range(0, 8, 1)", "T.serial(0, 8, step=1)", "range(8)"])
def test_a_step_of_one_is_a_plain_loop(loop):
    func = from_source(_func(A8_B8, f"for i in {loop}:\n    B[i] = A[i]"))
    assert "for i in range(8):" in func.script()
    a, b = _a_b()
    tvm.build(func, target="llvm")(a, b)
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize(
    "loop, says",
    [
        ("range(8, 0, -1)", "step -1"),
        ("range(0, 8, 0)", "step 0"),
        ("T.serial(8, 0, step=-2)", "step -2"),
    ],
)
def test_a_negative_or_zero_step_is_refused(loop, says):
    with pytest.raises(ScriptError, match=says) as err:
        from_source(_func(A8_B8, f"for i in {loop}:\n    B[i - 1] = A[i - 1]"))
    assert "count up" in str(err.value)


def test_a_step_that_is_not_a_constant_is_refused():
    text = _func(A8_B8, "for k in range(1, 3):\n    for i in range(0, 8, k):\n        B[i] = A[i]")
    with pytest.raises(ScriptError, match="step must be a constant"):
        from_source(text)


# -- 2. stores of another dtype --------------------------------------------------------


@pytest.mark.parametrize(
    "params, body, buffer, value_dtype, buffer_dtype",
    [
        (
            'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")',
            "B[i] = A[i] * 1.5",
            "B",
            "float32",
            "int32",
        ),
        (
            'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")',
            "B[i] += A[i]",
            "B",
            "float32",
            "int32",
        ),
    ],
)
def test_a_store_of_another_dtype_is_refused(params, body, buffer, value_dtype, buffer_dtype):
    with pytest.raises(ScriptError) as err:
        from_source(_func(params, f"for i in range(8):\n    {body}"))
    message = str(err.value)
    assert f"buffer {buffer!r}" in message
    assert value_dtype in message and buffer_dtype in message
    assert f'T.Cast("{buffer_dtype}", ' in message


@pytest.mark.parametrize(
    ("params", "body", "dtypes", "want"),
    [
        (
            'A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int8")',
            "B[i] = A[i] * 100",
            ("int32", "int8"),
            lambda a: (a * 100).astype("int8"),
        ),
        (
            'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float16")',
            "B[i] = A[i]",
            ("float32", "float16"),
            lambda a: a.astype("float16"),
        ),
        (
            'A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")',
            "B[i] = A[i] * 3",
            ("int32", "float32"),
            lambda a: (a * 3).astype("float32"),
        ),
    ],
)
def test_a_store_that_loses_no_fraction_is_converted_as_tvm_does(params, body, dtypes, want):
    """TVM's script builder casts a stored value to the buffer's dtype (an int64 index
    into an int32 buffer is common in MLC code); only float into int is refused above."""
    a = (np.arange(8) - 3).astype(dtypes[0]) * (2 if dtypes[0] == "int32" else 1)
    b = np.zeros(8, dtypes[1])
    _run(_func(params, f"for i in range(8):\n    {body}"), a, b)
    np.testing.assert_array_equal(b, want(a))


def test_an_explicit_cast_stores_what_numpy_computes():
    text = _func(
        'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")',
        'for i in range(8):\n    B[i] = T.Cast("int32", A[i] * 1.5)',
    )
    a = np.linspace(-3, 4, 8).astype("float32")
    b = np.zeros(8, "int32")
    _run(text, a, b)
    np.testing.assert_array_equal(b, np.trunc(a * np.float32(1.5)).astype("int32"))


@pytest.mark.parametrize(
    "dtype, value, want",
    [
        ("float32", "0", 0.0),
        ("float32", "1", 1.0),
        ("float32", "0.0", 0.0),
        ("float32", "T.float32(0)", 0.0),
        ("float32", "-2", -2.0),
        ("float64", "T.float32(0.5)", 0.5),
        ("int32", "0", 0),
        ("int32", "T.int32(7)", 7),
        ("int32", "2.0", 2),
        ("int8", "-3", -3),
        ("int64", "5", 5),
        ("float16", "1.5", 1.5),
        ("bool", "1", True),
        ("bool", "True", True),
        ("bool", "0", False),
    ],
)
def test_a_number_literal_is_converted_to_the_buffer_dtype(dtype, value, want):
    text = _func(f'B: T.Buffer((4,), "{dtype}")', f"for i in range(4):\n    B[i] = {value}")
    b = np.full(4, 9, dtype)
    _run(text, b)
    np.testing.assert_array_equal(b, np.full(4, want, dtype))


@pytest.mark.parametrize(
    "dtype, value", [("int32", "1.5"), ("int8", "300"), ("int32", "T.float32(0.25)")]
)
def test_a_literal_the_buffer_cannot_hold_is_refused(dtype, value):
    with pytest.raises(ScriptError, match=f"buffer 'B' holds {dtype}") as err:
        from_source(
            _func(f'B: T.Buffer((4,), "{dtype}")', f"for i in range(4):\n    B[i] = {value}")
        )
    assert "T.Cast" in str(err.value)


# -- 3. non-bijective block bindings ---------------------------------------------------

A88_B88 = 'A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")'


@pytest.mark.parametrize(
    "axes",
    [
        'vi, vj = T.axis.remap("SS", [i, i])',
        'vi, vj = T.axis.remap("SR", [j, j])',
        "vi = T.axis.spatial(8, i)\n        vj = T.axis.spatial(8, i)",
    ],
)
def test_one_loop_bound_to_two_block_axes_is_refused(axes):
    text = _func(
        A88_B88,
        f'for i, j in T.grid(8, 8):\n    with T.block("B"):\n        {axes}\n'
        "        B[vi, vj] = A[vi, vj]",
    )
    with pytest.raises(ScriptError, match="bound to both") as err:
        from_source(text)
    assert "one-to-one" in str(err.value)


def test_each_loop_bound_once_still_copies_everything():
    text = _func(
        A88_B88,
        'for i, j in T.grid(8, 8):\n    with T.block("B"):\n'
        '        vi, vj = T.axis.remap("SS", [i, j])\n        B[vi, vj] = A[vi, vj]',
    )
    a = np.arange(64, dtype="float32").reshape(8, 8)
    b = np.zeros((8, 8), "float32")
    _run(text, a, b)
    np.testing.assert_array_equal(b, a)


# -- 4. dependences under vectorized and parallel loops --------------------------------

SUM_PARAMS = 'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")'


@pytest.mark.parametrize(
    "params, body, says",
    [
        (
            SUM_PARAMS,
            "for i in T.vectorized(8):\n    B[0] = B[0] + A[i]",
            "loop i is vectorized but its iterations depend on each other (B[0] written",
        ),
        (
            SUM_PARAMS,
            "for i in T.vectorized(7):\n    B[i + 1] = B[i] + A[i]",
            "loop i is vectorized but its iterations depend on each other "
            "(B[i + 1] written, B[i] read)",
        ),
        (
            'A: T.Buffer((4096,), "float32"), B: T.Buffer((1,), "float32")',
            "for i in T.parallel(4096):\n    B[0] = B[0] + A[i]",
            "loop i is parallel but its iterations depend on each other (B[0] written",
        ),
        (
            SUM_PARAMS,
            "for i in T.parallel(7):\n    B[i] = A[i] + B[i + 1]",
            "loop i is parallel but its iterations depend on each other "
            "(B[i] written, B[i + 1] read)",
        ),
        (
            'A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "float32")',
            "for i in T.parallel(4):\n    for j in range(8):\n        B[j] = A[i, j]",
            "loop i is parallel but its iterations depend on each other (B[j] written",
        ),
        (
            SUM_PARAMS,
            'for i in T.vectorized(8):\n    with T.block("B"):\n'
            "        vi = T.axis.reduce(8, i)\n        with T.init():\n"
            "            B[0] = T.float32(0)\n        B[0] = B[0] + A[vi]",
            "loop i is vectorized but its iterations depend on each other",
        ),
    ],
)
def test_a_loop_carried_dependence_is_refused(params, body, says):
    with pytest.raises(ScriptError) as err:
        from_source(_func(params, body))
    message = str(err.value)
    assert says in message
    assert "use a serial loop (range / T.serial)" in message


@pytest.mark.parametrize("loop", ["T.vectorized(8)", "range(8)"])
def test_a_spatial_axis_that_accumulates_is_refused(loop):
    text = _func(
        SUM_PARAMS,
        f'for i in {loop}:\n    with T.block("B"):\n        vi = T.axis.spatial(8, i)\n'
        "        B[0] = B[0] + A[vi]",
    )
    with pytest.raises(ScriptError, match="axis vi is declared spatial") as err:
        from_source(text)
    assert "T.axis.reduce" in str(err.value) and '"R"' in str(err.value)


def test_a_reduce_axis_under_a_serial_loop_sums():
    text = _func(
        SUM_PARAMS,
        'for i in range(8):\n    with T.block("B"):\n        vi = T.axis.reduce(8, i)\n'
        "        with T.init():\n            B[0] = T.float32(0)\n        B[0] = B[0] + A[vi]",
    )
    a, b = _a_b()
    _run(text, a, b)
    assert b[0] == a.sum() == 36


def test_independent_iterations_still_vectorize_and_parallelize():
    text = _func(
        'A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"), '
        'C: T.Buffer((4, 8), "float32"), D: T.Buffer((4, 8), "float32")',
        """
for i in T.parallel(4):
    for j in T.vectorized(8):
        B[i, j] = B[i, j] + A[i, j]
    C[i, 0] = A[i, 0]
    for j in range(1, 8):
        C[i, j] = C[i, j - 1] + A[i, j]
for f in T.parallel(32):
    for k in range(2):
        with T.block("D"):
            vi = T.axis.spatial(4, f // 8)
            vj = T.axis.spatial(8, f % 8)
            vk = T.axis.reduce(2, k)
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = D[vi, vj] + A[vi, vj]
""",
    )
    a = np.arange(32, dtype="float32").reshape(4, 8)
    b, c, d = np.ones((4, 8), "float32"), np.zeros((4, 8), "float32"), np.zeros((4, 8), "float32")
    _run(text, a, b, c, d)
    np.testing.assert_array_equal(b, a + 1)
    np.testing.assert_array_equal(c, np.cumsum(a, axis=1))
    np.testing.assert_array_equal(d, 2 * a)


def test_a_decomposed_reduction_under_a_parallel_loop_is_independent():
    text = _func(
        'A: T.Buffer((16, 8), "float32"), B: T.Buffer((16,), "float32")',
        """
for i0 in T.parallel(4):
    for i1 in range(4):
        with T.block("B_init"):
            vi = T.axis.spatial(16, i0 * 4 + i1)
            B[vi] = T.float32(0)
    for k, i1 in T.grid(8, 4):
        with T.block("B_update"):
            vi = T.axis.spatial(16, i0 * 4 + i1)
            vk = T.axis.reduce(8, k)
            B[vi] = B[vi] + A[vi, vk]
""",
    )
    a = np.arange(128, dtype="float32").reshape(16, 8)
    b = np.full(16, 7, "float32")
    _run(text, a, b)
    np.testing.assert_array_equal(b, a.sum(axis=1))


def test_errors_are_ansor_lab_errors():
    assert issubclass(ScriptError, AnsorLabError)


def test_a_scratch_buffer_shared_by_the_lanes_is_refused():
    body = """
tmp = T.alloc_buffer((1,), "float32")
for i in T.vectorized(8):
    tmp[0] = A[i] * T.float32(2)
    B[i] = tmp[0] + T.float32(1)
"""
    with pytest.raises(ScriptError, match=r"\(tmp\[0\] written, tmp\[0\] read\)") as err:
        from_source(_func(A8_B8, body))
    assert "or allocate tmp inside the loop" in str(err.value)


def test_a_scratch_buffer_allocated_in_the_loop_is_private():
    body = """
for i in T.vectorized(8):
    tmp = T.alloc_buffer((1,), "float32")
    tmp[0] = A[i] * T.float32(2)
    B[i] = tmp[0] + T.float32(1)
"""
    a, b = _a_b()
    _run(_func(A8_B8, body), a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)


def test_a_stage_every_parallel_iteration_recomputes_alike_is_allowed():
    # what compute_at under a parallel loop prints: each iteration writes the same values
    body = """
P = T.alloc_buffer((8,), "float32")
for f in T.parallel(4):
    for j in range(8):
        P[j] = A[j] * T.float32(2)
    for j in range(8):
        B[f, j] = P[j] + T.Cast("float32", f)
"""
    text = _func('A: T.Buffer((8,), "float32"), B: T.Buffer((4, 8), "float32")', body)
    a, b = np.arange(8, dtype="float32"), np.zeros((4, 8), "float32")
    _run(text, a, b)
    np.testing.assert_array_equal(b, 2 * a[None, :] + np.arange(4, dtype="float32")[:, None])


def test_overlapping_regions_recomputed_alike_by_parallel_iterations_are_allowed():
    # compute_at of a stencil's input: iterations y and y + 1 both write P[y + 1], alike
    body = """
P = T.alloc_buffer((10,), "float32")
for y in T.parallel(8):
    for r in range(3):
        with T.block("P"):
            v = T.axis.spatial(10, y + r)
            P[v] = A[v] * T.float32(2)
    with T.block("B"):
        vy = T.axis.spatial(8, y)
        B[vy] = P[vy] + P[vy + 1] + P[vy + 2]
"""
    text = _func('A: T.Buffer((10,), "float32"), B: T.Buffer((8,), "float32")', body)
    a, b = np.arange(10, dtype="float32"), np.zeros(8, "float32")
    _run(text, a, b)
    np.testing.assert_array_equal(b, 2 * (a[:-2] + a[1:-1] + a[2:]))
