"""ComputeDAG: topological order, FLOP counts, workload keys, JSON round trip, analyses."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ansor_lab import te
from ansor_lab.dsl.reference import evaluate
from ansor_lab.dsl.serialize import dag_from_json, dag_to_json
from ansor_lab.errors import DSLError


def matmul_exp_relu(M=8, N=7, K=6, dtype="float32"):
    A = te.placeholder((M, K), dtype, name="A")
    B = te.placeholder((K, N), dtype, name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((M, N), lambda i, j: te.exp(C[i, j]), name="D")
    E = te.compute((M, N), lambda i, j: te.max(D[i, j], 0.0), name="E")
    return A, B, C, D, E


def conv1d(N=2, C=3, F=4, W=10, R=3):
    data = te.placeholder((N, C, W), name="data")
    weight = te.placeholder((F, C, R), name="weight")
    c = te.reduce_axis((0, C), name="c")
    r = te.reduce_axis((0, R), name="r")
    out = te.compute(
        (N, F, W - R + 1),
        lambda n, f, x: te.sum(data[n, c, x + r] * weight[f, c, r], axis=[c, r]),
        name="conv",
    )
    return data, weight, out


def test_topological_order_puts_producers_first():
    A, B, C, D, E = matmul_exp_relu()
    dag = te.ComputeDAG([A, B, E])
    assert [op.name for op in dag.ops] == ["A", "B", "C", "D", "E"]
    assert [op.name for op in dag.placeholders] == ["A", "B"]
    assert [op.name for op in dag.compute_ops] == ["C", "D", "E"]
    assert [op.name for op in dag.output_ops] == ["E"]
    # from the output alone, the same DAG
    assert [op.name for op in te.ComputeDAG(E).ops] == ["A", "B", "C", "D", "E"]


def test_topological_order_of_a_diamond_is_deterministic():
    X = te.placeholder((4,), name="X")
    L = te.compute((4,), lambda i: X[i] * 2.0, name="L")
    R = te.compute((4,), lambda i: X[i] + 1.0, name="R")
    Y = te.compute((4,), lambda i: L[i] + R[i], name="Y")
    names = [op.name for op in te.ComputeDAG([Y]).ops]
    assert names == ["X", "L", "R", "Y"]
    # each op exactly once, every producer before its consumers
    assert len(set(names)) == len(names)
    assert te.ComputeDAG([Y]).op("R") is R.op
    with pytest.raises(DSLError, match="no op named 'Z'; ops: X, L, R, Y"):
        te.ComputeDAG([Y]).op("Z")


@pytest.mark.parametrize("M,N,K", [(8, 7, 6), (64, 32, 16), (1, 1, 1)])
def test_flop_count_of_matmul_is_2mnk(M, N, K):
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    assert te.ComputeDAG([A, B, C]).flop_ct == 2 * M * N * K


def test_flop_count_adds_elementwise_ops():
    A, B, C, D, E = matmul_exp_relu(8, 7, 6)
    # matmul 2*8*7*6, exp 1 per element, max 1 per element
    assert te.ComputeDAG([A, B, E]).flop_ct == 2 * 8 * 7 * 6 + 8 * 7 + 8 * 7


def test_flop_count_of_conv1d_ignores_index_arithmetic():
    data, weight, out = conv1d(N=2, C=3, F=4, W=10, R=3)
    # the x + r inside the load is index arithmetic: not counted
    assert te.ComputeDAG([data, weight, out]).flop_ct == 2 * (2 * 4 * 8) * (3 * 3)


def test_workload_key_is_stable_and_shape_sensitive():
    keys = [te.ComputeDAG(list(matmul_exp_relu(8, 7, 6))[::4]).workload_key() for _ in range(2)]
    assert keys[0] == keys[1]
    assert len(keys[0]) == 32 and all(c in "0123456789abcdef" for c in keys[0])
    other_shape = te.ComputeDAG(list(matmul_exp_relu(8, 7, 5))[::4]).workload_key()
    other_dtype = te.ComputeDAG(list(matmul_exp_relu(8, 7, 6, "float64"))[::4]).workload_key()
    assert len({keys[0], other_shape, other_dtype}) == 3


def test_workload_key_sees_the_body():
    X = te.placeholder((4,), name="X")
    add = te.compute((4,), lambda i: X[i] + 1.0, name="Y")
    sub = te.compute((4,), lambda i: X[i] - 1.0, name="Y")
    assert te.ComputeDAG([add]).workload_key() != te.ComputeDAG([sub]).workload_key()


def test_json_round_trip_rebuilds_an_equivalent_dag():
    data, weight, conv = conv1d()
    bias = te.placeholder((4,), name="bias")
    out = te.compute(
        conv.shape,
        lambda n, f, x: te.if_then_else(
            x > 0, te.sigmoid(conv[n, f, x] + bias[f]), conv[n, f, x - 0]
        ).astype("float64"),
        name="out",
    )
    text = json.dumps(dag_to_json([data, weight, bias, out]))  # plain JSON data
    rebuilt = dag_from_json(json.loads(text))
    assert [t.name for t in rebuilt] == ["data", "weight", "bias", "out"]
    assert [t.shape for t in rebuilt] == [(2, 3, 10), (4, 3, 3), (4,), (2, 4, 8)]
    assert rebuilt[-1].dtype == "float64"
    original = te.ComputeDAG([data, weight, bias, out])
    again = te.ComputeDAG(rebuilt)
    assert str(again) == str(original)
    assert again.workload_key() == original.workload_key()
    assert again.flop_ct == original.flop_ct
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, t.shape).astype("float32") for t in (data, weight, bias)]
    want = evaluate(original, arrays)[out]
    got = evaluate(again, arrays)[rebuilt[-1]]
    np.testing.assert_array_equal(got, want)


def test_json_with_another_version_is_refused():
    X = te.placeholder((4,), name="X")
    data = dag_to_json([te.compute((4,), lambda i: X[i] * 2.0, name="Y")])
    data["version"] = 99
    with pytest.raises(DSLError, match="format version 99; this ansor_lab reads version 1"):
        dag_from_json(data)


def test_str_of_a_dag():
    A, B, C, D, E = matmul_exp_relu()
    assert str(te.ComputeDAG([A, B, E])) == "\n".join(
        [
            "A = PLACEHOLDER [8, 6] float32",
            "B = PLACEHOLDER [6, 7] float32",
            "C[i, j] = sum(A[i, k] * B[k, j]) over [k:6]",
            "D[i, j] = T.exp(C[i, j])",
            "E[i, j] = T.max(D[i, j], T.float32(0.0))",
        ]
    )


def test_str_of_a_reduction_with_where():
    X = te.placeholder((5, 5), "int32", name="X")
    k = te.reduce_axis((0, 5), name="k")
    Y = te.compute((5,), lambda i: te.max(X[i, k], axis=k, where=k <= i), name="Y")
    assert str(te.ComputeDAG([Y])).splitlines()[-1] == "Y[i] = max(X[i, k]) over [k:5] where k <= i"


def test_access_analysis_flags():
    A, B, C, D, E = matmul_exp_relu()
    dag = te.ComputeDAG([A, B, E])
    acc = dag.access
    # matmul: a reduction with data reuse (A ignores j, B ignores i)
    assert acc.needs_multi_level_tiling[C.op] is True
    assert acc.is_injective[C.op] is False
    assert acc.is_strictly_inlineable[C.op] is False
    # exp: elementwise but expensive, so not inlined blindly
    assert acc.is_injective[D.op] is True
    assert acc.has_expensive_op[D.op] is True
    assert acc.is_strictly_inlineable[D.op] is False
    # relu: cheap elementwise with simple access, the output
    assert acc.is_strictly_inlineable[E.op] is True
    assert acc.is_simple_access[E.op] is True
    assert acc.needs_multi_level_tiling[E.op] is False
    assert acc.is_output[E.op] is True and acc.is_output[C.op] is False
    assert list(acc.read_by[C.op]) == [D.op]
    assert list(acc.read_from[C.op]) == [A.op, B.op]


def test_elementwise_with_shifted_access_is_not_simple():
    X = te.placeholder((5,), name="X")
    Y = te.compute((4,), lambda i: X[i + 1] * 2.0, name="Y")
    acc = te.ComputeDAG([Y]).access
    assert acc.is_simple_access[Y.op] is False
    assert acc.is_strictly_inlineable[Y.op] is True


def test_sum_over_rows_does_not_need_multi_level_tiling():
    X = te.placeholder((8, 8), name="X")
    k = te.reduce_axis((0, 8), name="k")
    Y = te.compute((8,), lambda i: te.sum(X[i, k], axis=k), name="Y")
    assert te.ComputeDAG([Y]).access.needs_multi_level_tiling[Y.op] is False
