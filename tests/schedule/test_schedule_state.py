"""The typed State: attachments, their queries on ``State``, loop kinds and annotations."""

from __future__ import annotations

import dataclasses

import pytest
from schedule_helpers import chain, elementwise3, matmul_exp, schedule

from ansor_lab.schedule.attachment import INLINE, ROOT, After, At, Inline, Nested, Root
from ansor_lab.schedule.loop_kinds import IterKind, LoopKind, ThreadBinding, annotation


def test_compute_at_answers_its_target_block_and_loop():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    i, _ = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 8])
    sch.compute_at(sch.get_block("B"), io)
    state = sch.state
    b = state.stage("B")
    assert b.attach == At("C", "i_0")
    assert isinstance(b.attach, Nested) and (b.attach.block, b.attach.loop) == ("C", "i_0")
    assert b.nested == At("C", "i_0") and not b.is_root and not b.is_inlined
    assert [s.name for s in state.attached_to("C", "i_0")] == ["B"]
    assert [s.name for s in state.attached_to("C")] == ["B"]
    assert state.attached_to("C", "i_1") == []
    assert [s.name for s in state.attach_chain("B")] == ["B", "C"]
    assert state.enclosing_loops("B") == [("C", "i_0")]
    # the placement follows its loop through a split (to the innermost part); the
    # schedule adopts a changed copy of the state, the old one stays as it was
    sch.split(io, [2, None])
    assert sch.state.stage("B").attach == At("C", "i_0_1")
    assert state.stage("B").attach == At("C", "i_0")
    assert sch.state.enclosing_loops("B") == [("C", "i_0_0"), ("C", "i_0_1")]


def test_compute_inline_and_root_answer_inlined_and_root():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    assert sch.state.stage("B").attach == ROOT and sch.state.stage("B").is_root
    sch.compute_inline(sch.get_block("B"))
    assert sch.state.is_inlined("B") and not sch.state.is_inlined("C")
    assert sch.state.stage("B").attach == INLINE == Inline()
    assert sch.state.stage("B").nested is None
    assert sch.get(sch.get_block("C")).attach == Root()


def test_reverse_compute_at_answers_after_and_a_two_level_chain():
    A, B, E, C, D, F = chain()
    sch = schedule([A, B, E, F])
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.reverse_compute_at(sch.get_block("D"), i)
    assert sch.state.stage("D").attach == After("C", "i")
    assert sch.state.stage("D").attach != At("C", "i")  # before and after differ
    assert [s.name for s in sch.state.attached_to("C", "i")] == ["D"]
    assert [s.name for s in sch.state.attach_chain("D")] == ["D", "C"]
    assert sch.state.enclosing_loops("D") == [("C", "i")]
    assert sch.state.enclosing_loops("C") == []
    assert str(sch.state.stage("D").attach) == "after C.i"


def test_attachments_are_frozen_values():
    at = At("C", "i")
    with pytest.raises(dataclasses.FrozenInstanceError):
        at.loop = "j"  # type: ignore[misc]
    assert at.moved_to("j") == At("C", "j") and at == At("C", "i")
    assert After("C", "i").retargeted("D", "k") == After("D", "k")
    assert {ROOT, Root(), INLINE, Inline()} == {ROOT, INLINE}
    assert (str(ROOT), str(INLINE), str(At("C", "i"))) == ("root", "inline", "at C.i")


def test_stage_copy_is_independent_and_keeps_every_field():
    A, B, C, D = matmul_exp(16, 16, 8)
    sch = schedule([A, B, D])
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    sch.compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("D"))[0])
    st = sch.state.stage("C")
    copy = st.copy()
    assert copy == st and copy.attach == At("D", "i")
    copy.leaves.append("x")
    copy.annotations.clear()
    assert "x" not in st.leaves and st.annotations  # the original is untouched
    state_copy = sch.state.copy()
    state_copy.stage("C").attach = ROOT
    assert sch.state.stage("C").attach == At("D", "i")


def test_loop_kinds_and_annotations_are_typed_but_read_as_strings():
    A, B, C, D = matmul_exp(16, 16, 8)
    sch = schedule([A, B, D])
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.vectorize(j)
    st = sch.state.stage("C")
    assert [st.iters[n].kind for n in st.leaves] == [
        IterKind.SPATIAL,
        IterKind.SPATIAL,
        IterKind.REDUCE,
    ]
    assert st.iters["k"].kind == "reduce" and f"{st.iters['k'].kind}" == "reduce"
    assert st.annotations == {"j": LoopKind.VECTORIZE}
    info = sch.get(j)
    assert (info.kind, info.annotation) == ("spatial", "vectorize")
    assert type(info.annotation) is str
    assert repr(info) == "Loop(C.j, extent=16, spatial, vectorize)"
    assert annotation("parallel") is LoopKind.PARALLEL
    assert annotation("threadIdx.x") == ThreadBinding("threadIdx.x")
    assert str(ThreadBinding("blockIdx.y")) == "blockIdx.y"
