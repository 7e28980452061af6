"""The records log: corrupt lines, merging, and why a record does not apply to a task."""

from __future__ import annotations

import json

import pytest
from workloads import TARGET, matmul

from ansor_lab import auto_scheduler
from ansor_lab.measure.records import MeasureInput, MeasureResult, RecordMismatch

NAME = "search_records_matmul"


def _matmul(n, dtype="float32"):
    # the registered function's own signature: records store (n, dtype) arguments
    return matmul(n, dtype=dtype)


def _register(fn=_matmul):
    auto_scheduler.register_workload(NAME, fn, override=True)


def task_of(n=16, target=TARGET):
    _register()
    return auto_scheduler.SearchTask(func=NAME, args=(n,), target=target)


def write_log(path, task, costs, errors=None):
    """One record per cost (the default schedule's trace); returns the path."""
    trace = task.make_schedule().trace.as_json()
    errors = errors or [0] * len(costs)
    inputs = [MeasureInput(task, trace, 0, ((k,),)) for k in range(len(costs))]
    results = [
        MeasureResult([c] if e == 0 else [], e, "boom" if e else "") for c, e in zip(costs, errors)
    ]
    auto_scheduler.save_records(str(path), inputs, results)
    return str(path)


def test_round_trip_keeps_every_field(tmp_path):
    task = task_of()
    log = write_log(tmp_path / "a.json", task, [3e-3, 1e-3, 2e-3], [0, 0, 5])
    records = list(auto_scheduler.load_records(log))
    assert [r.costs for _, r in records] == [[3e-3], [1e-3], []]
    assert [r.error_kind for _, r in records] == ["NO_ERROR", "NO_ERROR", "WRONG_ANSWER"]
    inp = records[0][0]
    assert inp.workload_key == task.workload_key == json.dumps([NAME, 16])
    assert inp.structure_key == task.structure_key and inp.target == str(task.target)
    assert inp.sketch == 0 and inp.decisions == [[0]]
    assert inp.flop_ct == task.flop_ct == 2 * 16**3
    assert set(inp.versions) == {"ansor_lab", "llvmlite", "llvm"}
    for line in open(log):
        assert json.loads(line)["v"] == 1  # one JSON object per line, versioned


def test_corrupt_and_truncated_lines_are_skipped_with_a_warning(tmp_path):
    task = task_of()
    log = write_log(tmp_path / "a.json", task, [3e-3, 1e-3])
    lines = open(log).read().splitlines()
    with open(log, "w") as f:
        f.write(lines[0] + "\n")
        f.write("this is not json\n")
        f.write(json.dumps({"v": 99}) + "\n")  # a future format
        f.write("\n")
        f.write(lines[1] + "\n")
        f.write(lines[1][: len(lines[1]) // 2])  # a write cut short by a kill
    with pytest.warns(UserWarning, match="skipping a corrupt record") as caught:
        records = list(auto_scheduler.load_records(log))
    assert [r.costs for _, r in records] == [[3e-3], [1e-3]]
    where = sorted(str(w.message).split(":")[1] for w in caught)
    assert where == ["2", "3", "6"]  # line numbers of the bad lines
    # the best record is still found, and merging keeps only the valid lines
    with pytest.warns(UserWarning):
        _, res = auto_scheduler.load_best_record(log, task)
    assert res.costs == [1e-3]
    merged = str(tmp_path / "merged.json")
    with pytest.warns(UserWarning, match="skipping a corrupt record") as caught:
        assert auto_scheduler.merge_records([log, log], merged) == 4
    assert len(caught) == 6  # each bad line of each source, named


def test_best_record_ignores_failures_and_other_workloads(tmp_path):
    task, other = task_of(16), task_of(8)
    log = write_log(tmp_path / "a.json", task, [3e-3, 1e-4, 2e-3], [0, 4, 0])
    write_log(tmp_path / "a.json", other, [1e-6])
    _register()
    _, res = auto_scheduler.load_best_record(log, task)
    assert res.costs == [2e-3]
    best = auto_scheduler.best_records(log)
    assert set(best) == {task.workload_key, other.workload_key}
    assert best[other.workload_key][1].costs == [1e-6]


def test_missing_or_empty_log_says_so(tmp_path):
    task = task_of()
    with pytest.raises(RecordMismatch, match="holds no records"):
        auto_scheduler.load_best_record(str(tmp_path / "none.json"), task)


def test_mismatch_names_a_different_target(tmp_path):
    log = write_log(tmp_path / "a.json", task_of(16, "llvm -num-cores=1"), [1e-3, 2e-3])
    task = task_of(16, "llvm -num-cores=2")
    with pytest.raises(RecordMismatch) as err:
        task.apply_best(log)
    msg = str(err.value)
    assert "num-cores=1" in msg and "num-cores=2" in msg and "target" in msg
    assert "(2 records)" in msg and "Re-tune" in msg


def test_mismatch_names_a_different_shape(tmp_path):
    log = write_log(tmp_path / "a.json", task_of(16), [1e-3])
    task = task_of(32)
    with pytest.raises(RecordMismatch) as err:
        task.apply_best(log)
    msg = str(err.value)
    # the message shows both workload keys, i.e. the arguments that differ
    assert f'none for workload ["{NAME}", 32]' in msg
    assert f'["{NAME}", 16] (1 records)' in msg


def test_mismatch_names_a_changed_computation_under_the_same_key(tmp_path):
    log = write_log(tmp_path / "a.json", task_of(16), [1e-3])
    # same name and arguments, but the function now computes in float64
    auto_scheduler.register_workload(NAME, lambda n: _matmul(n, "float64"), override=True)
    task = auto_scheduler.SearchTask(func=NAME, args=(16,), target=TARGET)
    _register()
    with pytest.raises(
        RecordMismatch,
        match=r"workload structure \(same key, different "
        r"computation\) \(1 records\)",
    ):
        auto_scheduler.load_best_record(log, task)


def test_mismatch_names_versions_and_cpu_features(tmp_path):
    task = task_of()
    log = write_log(tmp_path / "a.json", task, [1e-3])
    rec = json.loads(open(log).read())
    rec["versions"]["ansor_lab"] = "0.0.1"
    rec["target_digest"] = "0" * 16
    open(log, "w").write(json.dumps(rec) + "\n")
    with pytest.raises(RecordMismatch) as err:
        auto_scheduler.load_best_record(log, task)
    msg = str(err.value)
    assert "ansor_lab version 0.0.1" in msg and "CPU features of the target" in msg


def test_only_failed_measurements(tmp_path):
    task = task_of()
    log = write_log(tmp_path / "a.json", task, [1e-3, 1e-3], [6, 7])
    with pytest.raises(RecordMismatch, match="only failed measurements"):
        auto_scheduler.load_best_record(log, task)


def test_best_record_by_workload_key_string_as_in_tvm(tmp_path):
    task = task_of()
    other = task_of(n=8)
    log = write_log(tmp_path / "k.json", task, [3e-3, 1e-3, 2e-3])
    write_log(log, other, [5e-4])  # another workload, faster: never picked for `task`
    inp, res = auto_scheduler.load_best_record(log, task.workload_key)
    assert inp.workload_key == task.workload_key and res.costs == [1e-3]
    inp, res = auto_scheduler.load_best_record(log, task.workload_key, target=TARGET)
    assert res.costs == [1e-3]
    # no key: the fastest record of the log, as TVM does
    inp, res = auto_scheduler.load_best_record(log)
    assert inp.workload_key == other.workload_key and res.costs == [5e-4]
    with pytest.raises(RecordMismatch, match=r"differ in: target 'llvm"):
        auto_scheduler.load_best_record(log, task.workload_key, target="llvm -num-cores=7")
    with pytest.raises(RecordMismatch, match=r"none for workload \[\"nope\"\]"):
        auto_scheduler.load_best_record(log, '["nope"]')
    with pytest.raises(TypeError, match="SearchTask or its workload_key string"):
        auto_scheduler.load_best_record(log, 42)


def test_search_task_from_a_workload_key(tmp_path):
    task = task_of(n=16)
    again = auto_scheduler.SearchTask(workload_key=task.workload_key, target=TARGET)
    assert again.workload_key == task.workload_key
    assert again.structure_key == task.structure_key and again.flop_ct == 2 * 16**3
    log = write_log(tmp_path / "w.json", task, [2e-3, 1e-3])
    sch, args = again.apply_best(log)  # the records of the original task apply
    assert [a.name for a in args] == ["A", "B", "C"]
    # tuple arguments (strides, padding) come back as tuples after the JSON round trip
    seen = []

    def conv_like(n, strides):
        seen.append(strides)
        return _matmul(n)

    auto_scheduler.register_workload("search_records_conv_like", conv_like, override=True)
    t = auto_scheduler.SearchTask(func="search_records_conv_like", args=(8, (1, 1)), target=TARGET)
    auto_scheduler.SearchTask(workload_key=t.workload_key, target=TARGET)
    assert seen == [(1, 1), (1, 1)]
    with pytest.raises(ValueError, match="not registered in this process"):
        auto_scheduler.SearchTask(workload_key='["never_registered", 1]', target=TARGET)
    with pytest.raises(ValueError, match="not a registered workload's key"):
        auto_scheduler.SearchTask(workload_key="abc123", target=TARGET)
