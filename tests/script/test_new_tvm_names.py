"""Newer TVM's (>= 0.22) names: tvm.tirx, tvm.s_tir, tvm.compile, tvm.runtime.tensor,
tvm.script.tirx with T.sblock / T.sblock_alloc_buffer, T.cast, tuple shape variables."""

from __future__ import annotations

import importlib

import numpy as np

import ansor_lab as tvm
from ansor_lab.script import ir as I, tirx as T


@I.ir_module
class Doubled:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"tirx.noalias": True})
        n, m = T.int32(), T.int32()
        A = T.match_buffer(a, (n, m), "float32")
        B = T.match_buffer(b, (n, m), "float32")
        with T.sblock("root"):
            T.reads()
            T.writes()
            tmp = T.sblock_alloc_buffer((n, m))
            for i, j in T.grid(n, m):
                with T.sblock("tmp"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    tmp[vi, vj] = T.cast(A[vi, vj], "float32") * T.float32(2)
            for i, j in T.grid(n, m):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = tmp[vi, vj] + T.float32(1)


def test_the_newer_modules_are_the_same_names():
    assert importlib.import_module("ansor_lab.script.tirx") is importlib.import_module(
        "ansor_lab.script.tir"
    )
    assert tvm.tirx.Schedule is tvm.tir.Schedule and tvm.s_tir.Schedule is tvm.tir.Schedule
    assert tvm.tirx.build is tvm.build and tvm.compile is tvm.build
    assert tvm.s_tir.meta_schedule is tvm.meta_schedule
    arr = tvm.runtime.tensor(np.ones((2, 3), "float32"))
    assert arr.numpy().shape == (2, 3)


def test_a_tirx_script_with_sblocks_and_tuple_shape_variables_runs_at_any_shape():
    lib = tvm.compile(Doubled, target="llvm")
    for shape in ((3, 5), (16, 7)):
        a = np.random.rand(*shape).astype("float32")
        b = np.zeros(shape, "float32")
        lib(a, b)
        np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)


def test_s_tir_schedule_get_sblock_is_get_block():
    @T.prim_func
    def add_one(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.sblock("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi] + T.float32(1)

    sch = tvm.s_tir.Schedule(add_one)
    (i,) = sch.get_loops(sch.get_sblock("B"))
    sch.split(i, factors=[None, 16])
    assert "GetBlock" in str(sch.trace) or "get_block" in str(sch.trace)
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    tvm.tirx.build(sch.mod, target="llvm")(a, b)
    np.testing.assert_allclose(b, a + 1)
