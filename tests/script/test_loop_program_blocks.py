"""tir.Schedule's block primitives on hand-written loop programs (compute_at,
reverse_compute_at, compute_inline, reverse_compute_inline, cache_read, cache_write,
decompose_reduction, the getters, the trace), each checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from loop_program_fuzz import random_schedule
from loop_programs import ELEMWISE, MM_RELU, STENCIL, inputs
from script_corpus import HAND_FUSED

import ansor_lab as tvm
from ansor_lab.errors import OutOfScopeError, ScheduleError
from ansor_lab.ir import nodes as N
from ansor_lab.schedule.loop_program import LoopProgramSchedule
from ansor_lab.schedule.trace import Trace
from ansor_lab.script import from_source

PROGRAMS = {"ELEMWISE": ELEMWISE, "MM_RELU": MM_RELU, "STENCIL": STENCIL,
            "HAND_FUSED": HAND_FUSED}  # fmt: skip


def _check(sch, name: str) -> None:
    args, want = inputs(name)
    tvm.build(sch.mod, target="llvm")(*args)
    np.testing.assert_allclose(args[-1], want, rtol=1e-4, atol=1e-4)


def _replays(sch, name: str) -> None:
    """The trace, and its JSON, replay onto a fresh schedule of the parsed module."""
    fresh = tvm.tir.Schedule(from_source(PROGRAMS[name]))
    sch.trace.apply_to_schedule(fresh)
    assert fresh.mod.script() == sch.mod.script()
    again = tvm.tir.Schedule(from_source(PROGRAMS[name]))
    again.replay(Trace.from_json(sch.trace.dumps()))
    assert again.mod.script() == sch.mod.script()


def _blocks(sch) -> list[str]:
    return [s.name for s in sch.get_child_blocks(sch.get_loops(sch.get_block("D"))[0])]


def test_the_mlc_article_module_takes_every_block_primitive():
    sch = tvm.tir.Schedule(from_source(HAND_FUSED))
    assert isinstance(sch, LoopProgramSchedule)
    c = sch.get_block("C")
    c_local = sch.cache_write(c, 0, "local")
    m0, l0, *_ = sch.get_loops(c)
    # the write-back goes between C and its reader D, under the loops they share
    assert [sch.get(b).name for b in sch.get_child_blocks(l0)] == ["C", "C_local", "D"]
    sch.reverse_compute_at(c_local, l0)
    # one 8 x 8 tile written back per iteration of l_0_m (was the whole 32 x 32)
    assert [lp.extent.value for lp in map(sch.get, sch.get_loops(c_local))] == [4, 4, 8, 8]
    init = sch.decompose_reduction(c, l0)
    assert sch.get(init).name == "C_init" and sch.get(c).name == "C_update"
    # D is computed inside F's reduction loop, over the 8 x 8 tile of D it reads there
    f = sch.get_block("F")
    sch.compute_at(sch.get_block("D"), sch.get_loops(f)[2])
    assert [lp.extent.value for lp in map(sch.get, sch.get_loops("D"))] == [4, 6, 4, 8, 8]
    *_, li = sch.get_loops(c)
    sch.vectorize(li)
    *_, ni = sch.get_loops(f)
    sch.vectorize(ni)
    sch.parallel(sch.get_loops(f)[0])  # every block under m_0_m touches its own rows
    text = sch.mod.script()
    assert text.count("T.vectorized(8)") == 2 and "T.parallel(4)" in text
    assert "if v_rk == 0" not in text  # the init is its own block now
    _check(sch, "HAND_FUSED")
    assert "sch.decompose_reduction(block=b" in str(sch.trace)
    _replays(sch, "HAND_FUSED")


def test_compute_at_infers_a_stencils_region_and_guards_the_domain():
    sch = tvm.tir.Schedule(from_source(STENCIL))
    io, _ = sch.get_loops("C")
    sch.compute_at(sch.get_block("B"), io)
    (_, ax0) = sch.get_loops("B")
    # each tile of 8 outputs reads 10 inputs; the last tile's region passes B's end
    assert sch.get(ax0).extent.value == 10
    block = sch.get(sch.get_block("B"))
    assert block.has_where and [a.extent for a in block.axes] == [64]
    _check(sch, "STENCIL")
    _replays(sch, "STENCIL")


def test_an_elementwise_chain_moves_and_inlines():
    sch = tvm.tir.Schedule(from_source(ELEMWISE))
    i, _ = sch.get_loops("D")
    sch.compute_at(sch.get_block("C"), i)
    sch.compute_at(sch.get_block("B"), sch.get_loops("C")[0])
    # a region of one row makes no loop of one iteration (preserve_unit_loops=False)
    assert [sch.get(lp).extent.value for lp in sch.get_loops("B")] == [64, 16]
    _check(sch, "ELEMWISE")
    _replays(sch, "ELEMWISE")
    sch = tvm.tir.Schedule(from_source(ELEMWISE))
    sch.compute_inline(sch.get_block("B"))
    sch.reverse_compute_inline(sch.get_block("D"))
    text = sch.mod.script()
    assert "T.alloc_buffer" not in text and "A[vi, vj] * T.float32(2.0) + T.float32(1.0)" in text
    _check(sch, "ELEMWISE")
    _replays(sch, "ELEMWISE")


def test_caches_and_the_reductions_init_on_matmul_relu():
    sch = tvm.tir.Schedule(from_source(MM_RELU))
    c = sch.get_block("C")
    i, j, _ = sch.get_loops(c)
    c_local = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(c_local, i)
    sch.decompose_reduction(c, j)
    a_shared = sch.cache_read(c, 1, "shared")  # C_update reads C_local, A, B
    assert sch.get(a_shared).name == "A_shared"
    sch.compute_at(a_shared, sch.get_loops(c)[1])
    assert [sch.get(lp).extent.value for lp in sch.get_loops(a_shared)] == [32, 32, 64]
    text = sch.mod.script()
    assert 'A_shared = T.alloc_buffer((32, 64), "float32", scope="shared")' in text
    assert "C_local[vi, vj] + A_shared[vi, vk] * B[vk, vj]" in text
    _check(sch, "MM_RELU")
    _replays(sch, "MM_RELU")


def test_getters_name_blocks_in_program_order():
    sch = tvm.tir.Schedule(from_source(HAND_FUSED))
    d = sch.get_block("D")
    assert [sch.get(b).name for b in sch.get_producers(d)] == ["C"]
    assert [sch.get(b).name for b in sch.get_consumers(d)] == ["F"]
    m0 = sch.get_loops(d)[0]
    assert [sch.get(b).name for b in sch.get_child_blocks(m0)] == ["C", "D", "F"]
    assert isinstance(sch.get(m0), N.For) and sch.get(m0).loop_var.name == "m_0_m"
    assert isinstance(sch.get(d), N.Block) and [a.kind for a in sch.get(d).axes] == ["S", "S"]


@pytest.mark.parametrize(
    ("program", "step", "message"),
    [
        (MM_RELU, lambda s: s.compute_inline(s.get_block("C")), "'C' is a reduction"),
        (MM_RELU, lambda s: s.compute_inline(s.get_block("D")), "an argument of the function"),
        (MM_RELU, lambda s: s.reverse_compute_inline(s.get_block("D")), "producer block 'C'"),
        (HAND_FUSED, lambda s: s.compute_at(s.get_block("D"), s.get_loops("C")[1]),
         "consumer block 'F' of 'D' is not under loop l_0_m"),
        (ELEMWISE, lambda s: s.compute_at(s.get_block("C"), s.get_loops("C")[0]),
         "one of block 'C''s own loops"),
        (HAND_FUSED, lambda s: s.reverse_compute_at(s.get_block("D"), s.get_loops("C")[2]),
         "runs the reduction v_rk of block 'C'"),
        (HAND_FUSED, lambda s: s.reverse_compute_at(s.get_block("F"), s.get_loops("D")[1]),
         "along its reduction variable v_rl"),
        (HAND_FUSED, lambda s: s.decompose_reduction(s.get_block("C"), s.get_loops("C")[2]),
         "loop rk_0 runs the reduction"),
        (ELEMWISE, lambda s: s.decompose_reduction(s.get_block("C"), s.get_loops("C")[0]),
         "has no T.init"),
        (ELEMWISE, lambda s: s.cache_read(s.get_block("C"), 3, "shared"),
         "reads 1 buffers \\(B\\); read_buffer_index 3"),
        (ELEMWISE, lambda s: s.cache_write(s.get_block("C"), 0, "texture"), "unknown storage"),
    ],
)  # fmt: skip
def test_refusals_say_why_and_change_nothing(program, step, message):
    sch = tvm.tir.Schedule(from_source(program))
    sch.get_block("C")
    before, steps = sch.func, len(sch.trace.insts)
    with pytest.raises(ScheduleError, match=message):
        step(sch)
    assert sch.func is before
    assert [i.kind for i in sch.trace.insts[steps:]] in ([], ["GetBlock"]) or all(
        i.kind.startswith("Get") for i in sch.trace.insts[steps:]
    )


def test_parallel_refuses_a_race_between_blocks_and_allows_disjoint_rows():
    sch = tvm.tir.Schedule(from_source(STENCIL))
    io, _ = sch.get_loops("C")
    sch.compute_at(sch.get_block("B"), io)
    # neighbouring tiles both write B[8 * io + 8] and B[8 * io + 9]: C may read either
    with pytest.raises(ScheduleError, match="block 'C' reads 'B', which block 'B' writes"):
        sch.parallel(io)
    with pytest.raises(ScheduleError, match="would nest with parallel loop"):
        sch = tvm.tir.Schedule(from_source(HAND_FUSED))
        m0, l0, *_ = sch.get_loops("C")
        sch.parallel(m0)  # each m_0_m touches its own 8 rows of C, D and F
        sch.parallel(l0)
    _check(sch, "HAND_FUSED")


TRIANGLE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        for k in range(i + 1):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                vk = T.axis.reduce(16, k)
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + B[vk]
"""


def test_a_region_whose_extent_follows_an_outer_loop_is_refused():
    sch = tvm.tir.Schedule(from_source(TRIANGLE))
    i, k = sch.get_loops("C")
    with pytest.raises(ScheduleError, match=r"region \[0, i\] has an extent that depends"):
        sch.compute_at(sch.get_block("B"), i)
    sch.compute_at(sch.get_block("B"), k)  # one element per iteration of k: static
    a, c = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    tvm.build(sch.mod, target="llvm")(a, c)
    np.testing.assert_allclose(c, np.cumsum(2 * a))


def test_block_primitives_need_every_store_in_a_block():
    text = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] + T.float32(1)
    for i in range(8):
        C[i] = C[i] * T.float32(3)
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = C[vi]
"""
    sch = tvm.tir.Schedule(from_source(text))
    with pytest.raises(ScheduleError, match="stores to 'C' outside any block"):
        sch.compute_at(sch.get_block("C"), sch.get_loops("B")[0])
    with pytest.raises(ScheduleError, match="outside any block"):
        sch.compute_inline(sch.get_block("C"))


def test_blockize_stays_out_of_scope():
    sch = tvm.tir.Schedule(from_source(ELEMWISE))
    with pytest.raises(OutOfScopeError, match="blockize is out of scope"):
        sch.blockize(sch.get_loops("C")[0])


@pytest.mark.parametrize("seed", range(30))
def test_random_schedules_build_and_match_numpy(seed):
    name = ("ELEMWISE", "MM_RELU", "STENCIL")[seed % 3]
    sch = tvm.tir.Schedule(from_source(PROGRAMS[name]))
    random_schedule(sch, seed, 6)
    _check(sch, name)
    _replays(sch, name)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(30, 130))
def test_random_schedules_build_and_match_numpy_slow(seed):
    name = list(PROGRAMS)[seed % 4]
    sch = tvm.tir.Schedule(from_source(PROGRAMS[name]))
    random_schedule(sch, seed, 10)
    _check(sch, name)
    _replays(sch, name)
