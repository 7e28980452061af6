"""Estimated records: marked in the log, read back, shown, and never mixed with measured ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from workloads import fast_policy, make_task, matmul

from ansor_lab import auto_scheduler
from ansor_lab.errors import MixedTimingError, RecordWarning
from ansor_lab.measure.records import MeasureResult, encode, task_records
from ansor_lab.search.cost_model import RandomForestModel

GOLDEN = Path(__file__).parent.parent / "golden" / "records" / "matmul_relu_16.jsonl"


@pytest.fixture(scope="module")
def task():
    return make_task(matmul(16))


@pytest.fixture(scope="module")
def inputs(task):
    return fast_policy(task).next_batch(4)


def write(log: Path, task, inputs, kinds: list[bool], costs=None) -> None:
    costs = costs or [1e-3 * (k + 1) for k in range(len(kinds))]
    with open(log, "a") as f:
        for inp, est, c in zip(inputs, kinds, costs):
            f.write(encode(inp, MeasureResult([c], estimated=est)) + "\n")


def test_the_timing_is_written_read_back_and_old_logs_read_as_measured(task, inputs, tmp_path):
    log = tmp_path / "a.json"
    write(log, task, inputs[:2], [True, True])
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x.get("timing") for x in lines] == ["estimated", "estimated"]
    assert [r.estimated for _, r in auto_scheduler.load_records(str(log))] == [True, True]
    # a measured record is written as before (no new field), and golden logs read as measured
    write(log, task, inputs[2:3], [False])
    assert "timing" not in json.loads(log.read_text().splitlines()[-1])
    old = list(auto_scheduler.load_records(str(GOLDEN)))
    assert old and not any(r.estimated for _, r in old)


def test_an_unknown_timing_is_a_skipped_line(task, inputs, tmp_path):
    log = tmp_path / "bad.json"
    write(log, task, inputs[:1], [True])
    rec = json.loads(log.read_text())
    rec["timing"] = "guessed"
    log.write_text(json.dumps(rec) + "\n")
    with pytest.warns(RecordWarning, match="field 'timing' is 'guessed'"):
        assert list(auto_scheduler.load_records(str(log))) == []


def test_apply_best_resume_and_the_cost_model_refuse_a_mix(task, inputs, tmp_path):
    log = tmp_path / "mixed.json"
    # the estimate is "faster": a mixed best would silently pick it
    write(log, task, inputs[:3], [False, False, True], costs=[2e-3, 3e-3, 1e-6])
    with pytest.raises(MixedTimingError) as err:
        task.apply_best(str(log))
    msg = str(err.value)
    assert "2 measured and 1 estimated" in msg and "filter_records" in msg
    with pytest.raises(MixedTimingError, match="PreloadMeasuredStates"):
        fast_policy(task, init_search_callbacks=[auto_scheduler.PreloadMeasuredStates(str(log))])
    with pytest.raises(MixedTimingError, match="update_from_file"):
        RandomForestModel().update_from_file(str(log))
    with pytest.raises(MixedTimingError):
        list(task_records(str(log), task))
    # the way out: one log per kind
    measured, estimated = tmp_path / "m.json", tmp_path / "e.json"
    assert auto_scheduler.filter_records(str(log), str(measured), estimated=False) == 2
    assert auto_scheduler.filter_records(str(log), str(estimated), estimated=True) == 1
    _, res = auto_scheduler.load_best_record(str(measured), task)
    assert res.mean_cost == pytest.approx(2e-3) and not res.estimated
    _, res = auto_scheduler.load_best_record(str(estimated), task)
    assert res.estimated
    assert RandomForestModel().update_from_file(str(estimated)) == 1


def test_a_failed_record_mixes_with_either_kind(task, inputs, tmp_path):
    log = tmp_path / "f.json"
    write(log, task, inputs[:1], [True])
    with open(log, "a") as f:
        f.write(encode(inputs[1], MeasureResult([], error_no=5, error_msg="wrong")) + "\n")
    _, res = auto_scheduler.load_best_record(str(log), task)
    assert res.estimated


def test_the_cost_model_refuses_a_second_kind_for_one_task(task, inputs, tmp_path):
    model = RandomForestModel()
    model.note_timing(["t"], [True], "tuning")
    model.note_timing(["t", "u"], [True, False], "tuning")  # another task may differ
    with pytest.raises(MixedTimingError, match="would mix measured and estimated"):
        model.note_timing(["t"], [False], "tuning")
    # the policy tells its model on every update
    policy = fast_policy(task, program_cost_model=RandomForestModel())
    policy.update(inputs[:1], [MeasureResult([1e-3], estimated=True)])
    with pytest.raises(MixedTimingError):
        policy.update(inputs[1:2], [MeasureResult([1e-3])])


def test_tune_refuses_to_add_the_other_kind_to_a_log(task, inputs, tmp_path):
    """A log holding measured records of the task: an emulated search would mix them."""
    cuda = make_task(matmul(16), target="cuda")
    log = tmp_path / "m.json"
    shutil.copy(GOLDEN, log)  # records of another workload do not count
    gpu_inputs = fast_policy(cuda).next_batch(1)
    write(log, cuda, gpu_inputs, [False])
    opts = auto_scheduler.TuningOptions(
        num_measure_trials=2,
        verbose=0,
        runner=auto_scheduler.EmulatedRunner(isolated=False),
        measure_callbacks=[auto_scheduler.RecordToFile(str(log))],
    )
    with pytest.raises(MixedTimingError, match="1 measured and 0 estimated.*add estimated"):
        cuda.tune(opts)


def test_print_best_and_the_cli_mark_an_estimate(task, inputs, tmp_path, capsys):
    from ansor_lab.cli.logs import summarize

    log = tmp_path / "e.json"
    write(log, task, inputs[:2], [True, True])
    text = task.print_best(str(log))
    assert text.startswith("# estimated 1.0000 ms: the analytic GPU model")
    (row,) = summarize(list(auto_scheduler.load_records(str(log))))
    assert row["timing"] == "estimated" and row["best_cost"] == pytest.approx(1e-3)
    write(log, task, inputs[2:3], [False], costs=[5e-3])
    (row,) = summarize(list(auto_scheduler.load_records(str(log))))
    # mixed: the best shown is the measured one, never the (faster) estimate
    assert row["timing"] == "mixed" and row["best_cost"] == pytest.approx(5e-3)
    assert row["timing_counts"] == {"estimated": 2, "measured": 1}
