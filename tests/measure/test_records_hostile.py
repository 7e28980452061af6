"""Records that cannot lie: hostile lines, torn lines, concurrent writers, the resume key.

Every hostile line is written into a log between two good records; every reader must skip
it with a RecordWarning naming the file and the line, keep the good records, and never
choose the bad one as the best.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from workloads import fast_options, fast_policy, make_task, matmul

from ansor_lab import auto_scheduler
from ansor_lab.errors import RecordError, RecordWarning
from ansor_lab.measure.records import (
    MeasureInput,
    MeasureResult,
    decode,
    encode,
    load_records,
)
from ansor_lab.search.cost_model import RandomForestModel

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def task():
    return make_task(matmul(8))


@pytest.fixture(scope="module")
def good(task) -> dict:
    """A valid record (as a dict) for ``task``: cost 2 ms."""
    policy = auto_scheduler.SketchPolicy(task, seed=0, verbose=0)
    inp = policy.next_batch(1)[0]
    return json.loads(encode(inp, MeasureResult([2e-3])))


def _with(rec: dict, **changes) -> str:
    return json.dumps({**rec, **changes})


def hostile_lines(good: dict) -> dict[str, bytes]:
    """name -> a line no reader may take as a measurement."""
    line = json.dumps(good)
    dag = json.loads(json.dumps(good["dag"]))
    dag["ops"][0]["shape"] = [-4, 8]
    huge = json.loads(json.dumps(good["dag"]))
    huge["ops"][0]["shape"] = [2**31 - 1, 2**31 - 1]
    cases = {
        "negative cost": _with(good, costs=[-1e-3]),
        "zero cost": _with(good, costs=[0.0]),
        "NaN cost": line.replace('"costs": [0.002]', '"costs": [NaN]'),
        "Infinity cost": line.replace('"costs": [0.002]', '"costs": [Infinity]'),
        "1e400 cost": line.replace('"costs": [0.002]', '"costs": [1e400]'),
        "1e-30 cost": _with(good, costs=[1e-30]),
        "string cost": _with(good, costs=["fast"]),
        "bool cost": _with(good, costs=[True]),
        "costs not a list": _with(good, costs=0.001),
        "success without costs": _with(good, costs=[]),
        "unknown error code": _with(good, error_no=42),
        "negative error code": _with(good, error_no=-1),
        "string error code": _with(good, error_no="0"),
        "negative sketch": _with(good, sketch=-1),
        "float sketch": _with(good, sketch=1.5),
        "absurd sketch": _with(good, sketch=10**9),
        "negative shape": _with(good, dag=dag),
        "absurd shape": _with(good, dag=huge),
        "missing trace": json.dumps({k: v for k, v in good.items() if k != "trace"}),
        "trace not an object": _with(good, trace=[1, 2]),
        "workload key not a string": _with(good, workload_key=7),
        "NaN timestamp": line.replace('"timestamp": ', '"timestamp": NaN, "x": '),
        "negative flop count": _with(good, flop_ct=-5),
        "huge integer": line.replace('"flop_ct": ', '"flop_ct": ' + "9" * 5000 + ', "x": '),
        "deep nesting": "[" * 100_000 + "]" * 100_000,
        "deep nesting in the trace": line.replace('"trace": ', '"trace": ' + "[" * 50_000, 1),
        "a JSON list": "[1, 2, 3]",
        "a JSON string": '"record"',
        "a JSON number": "12",
        "null": "null",
        "future version": _with(good, v=99),
        "not JSON": "this is not json",
        "torn": line[: len(line) // 2],
    }
    out = {k: v.encode() for k, v in cases.items()}
    out["non-UTF-8 bytes"] = line.encode().replace(b'"error_msg": ""', b'"error_msg": "\xff\xfe"')
    out["NUL bytes"] = b"\x00" * 64
    return out


HOSTILE = list(hostile_lines({"costs": [0.002], "dag": {"ops": [{"shape": [1]}]}}))


def _log(path: Path, good: dict, bad: bytes) -> str:
    fast = dict(good, costs=[1e-3])
    path.write_bytes(json.dumps(good).encode() + b"\n" + bad + b"\n" + json.dumps(fast).encode())
    return str(path)


@pytest.mark.parametrize("name", HOSTILE)
def test_every_reader_skips_a_hostile_line_and_names_it(name, good, task, tmp_path):
    bad = hostile_lines(good)[name]
    log = _log(tmp_path / "h.json", good, bad)
    with pytest.warns(RecordWarning, match=r"h\.json:2: skipping a corrupt record") as caught:
        records = list(load_records(log))
    assert [r.costs for _, r in records] == [[2e-3], [1e-3]]
    assert all(":2:" in str(w.message) for w in caught)
    # the readers built on it: best record, apply_best, merge, resume, the cost model
    with pytest.warns(RecordWarning, match=":2: skipping"):
        assert auto_scheduler.best_records(log)[task.workload_key][1].costs == [1e-3]
    with pytest.warns(RecordWarning, match=":2: skipping"):
        assert auto_scheduler.load_best_record(log, task)[1].costs == [1e-3]
    with pytest.warns(RecordWarning, match=":2: skipping"):
        task.apply_best(log)
    with pytest.warns(RecordWarning, match=":2: skipping"):
        assert auto_scheduler.merge_records([log], str(tmp_path / "m.json")) == 2
    with pytest.warns(RecordWarning, match=":2: skipping"):
        assert RandomForestModel().update_from_file(log, task) == 2
    with pytest.warns(RecordWarning, match=":2: skipping"):
        policy = auto_scheduler.SketchPolicy(
            task,
            seed=0,
            verbose=0,
            init_search_callbacks=[auto_scheduler.PreloadMeasuredStates(log)],
        )
    assert policy.best_cost == 1e-3


def test_decode_raises_our_error_naming_the_field(good):
    with pytest.raises(RecordError, match=r"field 'costs' holds -0.001 s, not a time"):
        decode(_with(good, costs=[-1e-3]))
    with pytest.raises(RecordError, match=r"field 'error_no' is 42, not a known error code"):
        decode(_with(good, error_no=42))
    with pytest.raises(RecordError, match="placeholder 'A' in 'dag' has extent -4"):
        bad = json.loads(json.dumps(good))
        bad["dag"]["ops"][0]["shape"] = [-4, 8]
        decode(json.dumps(bad))
    with pytest.raises(RecordError, match="nested too deeply"):
        decode("[" * 100_000)


def test_widget_readers_skip_bad_lines(good, tmp_path):
    from ansor_lab.jupyter.explain import top_records  # noqa: PLC0415 - the notebook layer

    log = _log(tmp_path / "w.json", good, b"\xff not a record")
    with pytest.warns(RecordWarning, match=r"w\.json:2: skipping .*not UTF-8"):
        top = top_records(log, 5)
    assert len(top) == 2


def test_appending_after_a_torn_line_starts_a_new_line(task, good, tmp_path):
    log = tmp_path / "torn.json"
    line = json.dumps(good)
    log.write_text(line + "\n" + line[:100])  # a writer killed mid-line
    trace = json.loads(line)["trace"]
    inp = MeasureInput(task, trace, 0, [])
    auto_scheduler.save_records(str(log), [inp], [MeasureResult([5e-3])])
    with pytest.warns(RecordWarning, match=":2: skipping"):
        records = list(load_records(str(log)))
    assert [r.costs for _, r in records] == [[2e-3], [5e-3]]  # the new record is whole
    assert log.read_text().splitlines()[2] == encode(inp, records[1][1])


_WRITER = """
import sys
from ansor_lab.measure.records import append_lines
path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
pad = "x" * 6000  # lines well over PIPE_BUF, appended in batches of 5 (30 KB)
for k in range(0, n, 5):
    batch = ['{"who": "%s", "k": %d, "pad": "%s"}' % (who, j, pad) for j in range(k, k + 5)]
    append_lines(path, batch)
"""


def test_concurrent_appenders_never_interleave_a_line(tmp_path):
    log = tmp_path / "shared.json"
    writers, n = 4, 1500
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(log), f"w{w}", str(n)],
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        for w in range(writers)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * writers
    lines = log.read_bytes().split(b"\n")
    assert lines[-1] == b""
    seen: dict[str, list[int]] = {}
    for raw in lines[:-1]:
        rec = json.loads(raw)  # every line parses: nothing interleaved or torn
        seen.setdefault(rec["who"], []).append(rec["k"])
    assert {w: ks for w, ks in seen.items()} == {f"w{w}": list(range(n)) for w in range(writers)}


def test_resume_checks_the_whole_key_and_says_what_differs(task, good, tmp_path):
    other_target = dict(good, target="llvm -num-cores=7")
    old_version = json.loads(json.dumps(good))
    old_version["versions"]["llvm"] = "3.0"
    log = tmp_path / "k.json"
    log.write_text(
        "\n".join(json.dumps(dict(r, costs=[1e-6])) for r in (other_target, old_version))
        + "\n"
        + json.dumps(good)
        + "\n"
    )
    with pytest.warns(RecordWarning) as caught:
        policy = auto_scheduler.SketchPolicy(
            task,
            seed=0,
            verbose=0,
            init_search_callbacks=[auto_scheduler.PreloadMeasuredStates(str(log))],
        )
    msg = " ".join(str(w.message) for w in caught)
    assert "PreloadMeasuredStates" in msg and "were not used" in msg
    assert "target 'llvm -num-cores=7'" in msg and "llvm version 3.0" in msg
    assert "tune again" in msg
    assert policy.best_cost == 2e-3  # the faster records of other settings are not believed
    with pytest.warns(RecordWarning, match="update_from_file: .*llvm version 3.0"):
        assert RandomForestModel().update_from_file(str(log), task) == 1
    with pytest.warns(RecordWarning, match="update_from_file: .*llvm version 3.0"):
        assert RandomForestModel().update_from_file(str(log)) == 1


def test_resume_names_an_unknown_sketch(task, good, tmp_path):
    log = tmp_path / "s.json"
    log.write_text(_with(good, sketch=999) + "\n")
    with pytest.warns(RecordWarning, match="name a sketch this task does not have"):
        policy = auto_scheduler.SketchPolicy(
            task,
            seed=0,
            verbose=0,
            init_search_callbacks=[auto_scheduler.PreloadMeasuredStates(str(log))],
        )
    assert policy.best_cost == float("inf")


def test_each_record_is_written_as_it_is_measured(task, tmp_path):
    log = tmp_path / "stream.json"
    seen = []

    class Watch(auto_scheduler.LocalRunner):
        def run(self, builds, on_result=None):
            def spy(k, reply):
                on_result(k, reply)
                seen.append(len(log.read_text().splitlines()))

            return super().run(builds, on_result=spy)

    runner = Watch(timeout=10, number=1, min_repeat_ms=1)
    task.tune(fast_options(str(log), trials=4, per_round=4, runner=runner), fast_policy(task))
    assert seen == [1, 2, 3, 4]  # on disk before the next candidate ran
