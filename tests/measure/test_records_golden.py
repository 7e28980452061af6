"""Golden records: a log written by an earlier version still reads and replays.

``tests/golden/records/*.jsonl`` were written once by make_record_goldens.py (a tiny
tuning run through RecordToFile, and a failed measurement through save_records). Each
record is read with today's records code and replayed from its own DAG JSON, as a builder
worker does, to the IR stored beside the log; the best record is the one it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ansor_lab as tvm
from ansor_lab.measure.records import best_records, decode, load_records
from ansor_lab.measure.workers import rebuild_schedule

RECORDS = Path(__file__).resolve().parents[1] / "golden" / "records"
LOGS = sorted(p.name[: -len(".jsonl")] for p in RECORDS.glob("*.jsonl"))


def test_there_are_golden_logs():
    assert LOGS == ["matmul_relu_16"]


@pytest.mark.parametrize("log", LOGS)
def test_golden_records_read_back_whole(log):
    path = RECORDS / f"{log}.jsonl"
    lines = path.read_text().splitlines()
    records = list(load_records(str(path)))
    assert len(records) == len(lines) == 7
    errors = [res.error_no for _, res in records]
    assert errors == [0] * 6 + [2]
    inp, res = records[-1]
    assert (res.costs, res.error_msg, res.mean_cost) == ([], "golden: a build error", float("inf"))
    for line, (inp, _res) in zip(lines, records):
        assert inp.trace == json.loads(line)["trace"]
        assert decode(line)[0].workload_key == inp.workload_key


@pytest.mark.parametrize("log", LOGS)
def test_golden_records_replay_to_the_same_programs(log, golden):
    path = RECORDS / f"{log}.jsonl"
    for n, (inp, _) in enumerate(load_records(str(path))):
        sch = rebuild_schedule(inp.dag, inp.trace)
        golden.check(f"records/{log}.{n}.ir.txt", tvm.lower(sch.mod).script())
        replayed = sch.trace.as_json()
        # the search's schedules list unit loops, which traces mark now (older ones lack it)
        assert replayed.pop("unit_loops", None) is True
        assert replayed == inp.trace


@pytest.mark.parametrize("log", LOGS)
def test_golden_best_record_replays_to_the_same_program(log, golden):
    path = RECORDS / f"{log}.jsonl"
    ((key, (inp, res)),) = best_records(str(path)).items()
    assert key == inp.workload_key and res.error_no == 0
    sch = rebuild_schedule(inp.dag, inp.trace)
    golden.check(f"records/{log}.best.ir.txt", tvm.lower(sch.mod).script())
