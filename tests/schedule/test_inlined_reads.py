"""inlined_reads: a stage's body with inlined producers substituted, cached across states."""

import threading

from ansor_lab import te, tir
from ansor_lab.schedule import inlined_reads
from ansor_lab.schedule.inlined_reads import effective_consumers, effective_reads, inlined_body


def _chain():
    A = te.placeholder((8, 4), name="A")
    B = te.compute((8, 4), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((8, 4), lambda i, j: B[i, j] + B[i, 3 - j], name="C")
    D = te.compute((8,), lambda i: C[i, 0] - C[i, 1], name="D")
    return A, D


def test_the_answer_follows_the_set_of_inlined_stages():
    A, D = _chain()
    sch = tir.Schedule(te.create_prim_func([A, D]))
    state0 = sch.state.copy()
    st = state0.stage("D")
    assert [tuple(map(str, ix)) for ix in effective_reads(state0, st, state0.stage("C"))] == [
        ("i", "0"),
        ("i", "1"),
    ]
    assert effective_reads(state0, st, state0.stage("A")) == []
    sch.compute_inline(sch.get_block("C"))
    sch.compute_inline(sch.get_block("B"))
    state2 = sch.state
    # D now reads A four times (two reads of C, each two reads of B; unsimplified)
    reads = effective_reads(state2, state2.stage("D"), state2.stage("A"))
    assert sorted(tuple(map(str, ix)) for ix in reads) == [
        ("i", "0"),
        ("i", "1"),
        ("i", "3 - 0"),
        ("i", "3 - 1"),
    ]
    assert [s.name for s in effective_consumers(state2, "A")] == ["D"]
    assert [s.name for s in effective_consumers(state0, "A")] == ["B"]
    # the earlier state still gets its own answer from the shared cache
    assert effective_reads(state0, state0.stage("D"), state0.stage("A")) == []
    assert "A[" in str(inlined_body(state2, state2.stage("D")))
    assert "A[" not in str(inlined_body(state0, state0.stage("D")))


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(inlined_reads, "_CACHE_SIZE", 3)
    inlined_reads._CACHE.clear()
    for _ in range(4):
        A, D = _chain()  # new ops each time: new entries
        sch = tir.Schedule(te.create_prim_func([A, D]))
        inlined_body(sch.state, sch.state.stage("D"))
        inlined_body(sch.state, sch.state.stage("C"))
    assert len(inlined_reads._CACHE) == 3


def test_a_stage_rewritten_under_its_old_name_is_a_different_answer():
    # cache_read gives B a new op (reading the copy) under the name "B": D's body with
    # B inlined must follow the op, not the name
    A, D = _chain()
    plain = tir.Schedule(te.create_prim_func([A, D]))
    plain.compute_inline(plain.get_block("C"))
    plain.compute_inline(plain.get_block("B"))
    cached = tir.Schedule(te.create_prim_func([A, D]))
    cached.cache_read(cached.get_block("B"), 0, "global")
    cached.compute_inline(cached.get_block("C"))
    cached.compute_inline(cached.get_block("B"))
    for sch in (plain, cached, plain):  # each answer is asked after the other is cached
        state = sch.state
        reads = {
            s.name for s in state.stages.values() if effective_reads(state, state.stage("D"), s)
        }
        assert reads == ({"A"} if sch is plain else {"A_global"})


def test_threads_share_the_cache_safely(monkeypatch):
    # the tune widget searches in a background thread while the main one lowers: a tiny
    # cache makes every lookup race an eviction
    monkeypatch.setattr(inlined_reads, "_CACHE_SIZE", 2)
    errors = []

    def work():
        try:
            for _ in range(30):
                A, D = _chain()
                sch = tir.Schedule(te.create_prim_func([A, D]))
                sch.compute_inline(sch.get_block("C"))
                st = sch.state
                assert [s.name for s in effective_consumers(st, "B")] == ["D"]
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(inlined_reads._CACHE) <= 2
