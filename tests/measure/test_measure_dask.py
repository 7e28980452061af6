"""Measurement on a Dask cluster: a real LocalCluster of 2 worker processes started here.

Tuning through DaskBuilder / DaskRunner writes complete records that say which machine
measured them; a crashing candidate is an error record and the Dask worker lives; a Dask
worker killed mid-batch (SIGKILL from a worker plugin, at its second timed run) loses
nothing: its candidates are re-queued, or, once Dask gives up on them, recorded as errors.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from test_measure_isolation import _CRASH_BODY, bad_object
from workloads import fast_policy, make_task, matmul

from ansor_lab import auto_scheduler, build
from ansor_lab.codegen.target import host_cpu
from ansor_lab.errors import MeasureError
from ansor_lab.measure import dask_measure
from ansor_lab.measure.hardware import machine_info, mismatch, target_needs
from ansor_lab.measure.records import decode, encode

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

distributed = pytest.importorskip(
    "distributed", reason="Dask measurement needs the dask extra: pip install 'dask[distributed]'"
)


class KillAtRun(distributed.WorkerPlugin):
    """SIGKILLs the worker process at its ``nth`` timed run; once for the whole cluster
    (the first worker to create ``flag`` does it and writes its pid there)."""

    def __init__(self, flag: str, nth: int = 2) -> None:
        self.flag = flag
        self.nth = nth
        self.count = 0

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or not str(key).startswith("ansor-run-"):
            return
        self.count += 1
        if self.count < self.nth:
            return
        try:
            fd = os.open(self.flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        c.wait_for_workers(2, timeout=60)
        yield c


@pytest.fixture(scope="module")
def task():
    return make_task(matmul(16))


def _options(client, log: str, trials: int, per_round: int, runner=None):
    runner = runner or auto_scheduler.DaskRunner(client, number=1, min_repeat_ms=5, timeout=20)
    return auto_scheduler.TuningOptions(
        num_measure_trials=trials,
        num_measures_per_round=per_round,
        verbose=0,
        measure_callbacks=[auto_scheduler.RecordToFile(log)],
        builder=auto_scheduler.DaskBuilder(client, timeout=120),
        runner=runner,
        check_correctness=True,
    )


def _pids(client) -> dict:
    return client.run(os.getpid)


def _measurement_processes() -> int:
    """How many measurement processes this Dask worker holds (runs on the worker)."""
    runner = dask_measure._RUNNER.get("runner")
    alive = [w for b in dask_measure._BUILDERS for w in b._workers if w.alive]
    return len(alive) + bool(runner is not None and runner._worker.alive)


def test_tune_on_dask_records_the_machine_and_the_best_is_right(client, task, tmp_path):
    log = str(tmp_path / "dask.json")
    result = task.tune(_options(client, log, trials=8, per_round=4), fast_policy(task, seed=1))
    records = list(auto_scheduler.load_records(log))
    assert len(records) == 8 and result.stats.trials == 8
    assert [r.error_kind for _, r in records] == ["NO_ERROR"] * 8, [r.error_msg for _, r in records]
    workers = set(client.scheduler_info()["workers"])
    here = machine_info()
    for _, res in records:
        assert res.costs and all(c > 0 for c in res.costs)
        m = res.machine
        assert m["worker"] in workers
        assert (m["host"], m["cpu"], m["cores"]) == (here["host"], host_cpu()[0], here["cores"])
        assert "sse2" in m["features"].split(",") or m["cpu"] != "x86-64"
    # the machine is on disk: every line has it, and it reads back
    with open(log) as f:
        lines = f.read().splitlines()
    assert all(decode(line)[1].machine == res.machine for line, (_, res) in zip(lines, records))
    # the best program computes the right numbers
    sch, args = task.apply_best(log)
    func = build(sch, args, task.target)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((16, 16)).astype("float32") for _ in range(2))
    c = np.zeros((16, 16), "float32")
    func(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


class _CrashFirst(auto_scheduler.DaskRunner):
    """Replaces the first candidate of the first batch by a kernel that segfaults."""

    injected = False

    def run(self, builds):
        if not self.injected and builds:
            self.injected = True
            builds = [dataclasses.replace(builds[0], obj=bad_object(_CRASH_BODY, 3)), *builds[1:]]
        return super().run(builds)


def test_a_crashing_candidate_is_an_error_record_and_the_dask_worker_lives(client, task, tmp_path):
    before = _pids(client)
    log = str(tmp_path / "crash.json")
    runner = _CrashFirst(client, number=1, min_repeat_ms=5, timeout=20)
    task.tune(_options(client, log, trials=4, per_round=4, runner=runner), fast_policy(task))
    records = list(auto_scheduler.load_records(log))
    assert [r.error_kind for _, r in records] == ["RUNTIME_DEVICE"] + ["NO_ERROR"] * 3
    msg = records[0][1].error_msg
    assert "crashed the runner process" in msg and "SIGSEGV" in msg
    assert records[0][1].machine["worker"] in before  # the error says where it happened
    assert _pids(client) == before  # no Dask worker died: the candidate ran in a child
    # the end of tuning stopped the workers' measurement processes (the client stays open)
    assert sum(client.run(_measurement_processes).values()) == 0


def test_a_dask_worker_killed_mid_batch_loses_nothing(client, task, tmp_path):
    flag = str(tmp_path / "killed.pid")
    before = _pids(client)
    client.register_plugin(KillAtRun(flag, nth=2), name="kill-at-run")
    try:
        log = str(tmp_path / "killed.json")
        result = task.tune(_options(client, log, trials=8, per_round=8), fast_policy(task, seed=2))
    finally:
        client.unregister_worker_plugin("kill-at-run")
    # the fault really happened: a worker process that was measuring is gone
    with open(flag) as f:
        killed = int(f.read())
    assert killed in before.values()
    client.wait_for_workers(2, timeout=60)  # the nanny restarted it
    assert killed not in _pids(client).values()
    # ... and nothing was lost: every candidate has its record, measured (re-queued by Dask)
    records = list(auto_scheduler.load_records(log))
    assert len(records) == 8 and result.stats.trials == 8
    assert [r.error_kind for _, r in records] == ["NO_ERROR"] * 8, [r.error_msg for _, r in records]


def test_a_candidate_whose_worker_keeps_dying_becomes_an_error_record(client, task, tmp_path):
    """Dask gives up on a task after ``allowed-failures`` worker deaths (KilledWorker):
    those candidates are error records; the rest of the batch is measured."""
    flag = str(tmp_path / "killed.pid")
    scheduler = client.cluster.scheduler
    old = scheduler.allowed_failures
    scheduler.allowed_failures = 0  # give up at the first death
    client.register_plugin(KillAtRun(flag, nth=1), name="kill-at-run")
    try:
        log = str(tmp_path / "gave_up.json")
        task.tune(_options(client, log, trials=6, per_round=6), fast_policy(task, seed=3))
    finally:
        client.unregister_worker_plugin("kill-at-run")
        scheduler.allowed_failures = old
    assert os.path.exists(flag)
    records = list(auto_scheduler.load_records(log))
    kinds = [r.error_kind for _, r in records]
    assert len(records) == 6
    given_up = [r for _, r in records if r.error_no != 0]
    # the task executing, and those queued on the same worker (Dask counts them all)
    assert 1 <= len(given_up) <= 3, kinds
    for r in given_up:
        assert r.error_kind == "RUNTIME_DEVICE"
        assert "the Dask worker measuring this candidate died" in r.error_msg
        assert "KilledWorker" in r.error_msg and "recorded as an error" in r.error_msg
    client.wait_for_workers(2, timeout=60)


def test_no_worker_with_the_tasks_cpu_is_a_clear_error(client, tmp_path):
    other = "haswell" if host_cpu()[0] != "haswell" else "skylake"
    task = make_task(matmul(16), target=f"llvm -mcpu={other} -num-cores=1")
    with pytest.raises(MeasureError) as err:
        task.tune(_options(client, str(tmp_path / "x.json"), trials=2, per_round=2))
    msg = str(err.value)
    assert f"needs CPU {other!r}" in msg and f"CPU {host_cpu()[0]!r}, not {other!r}" in msg
    assert f"target='llvm -mcpu={host_cpu()[0]}'" in msg and "add workers" in msg
    assert not os.path.exists(tmp_path / "x.json")  # nothing was measured on the wrong CPU


def test_a_measure_context_of_its_own_local_cluster(task, tmp_path):
    """DaskMeasureContext() starts a LocalCluster; TuningOptions takes the context as the
    runner (its ``.runner``, as with LocalRPCMeasureContext) and its ``.builder``."""
    log = str(tmp_path / "ctx.json")
    with auto_scheduler.DaskMeasureContext(n_workers=1, min_repeat_ms=5) as ctx:
        # the one worker, named before tuning: the client's copy of the scheduler's
        # state may be between refreshes afterwards (it once listed no worker there)
        (worker,) = ctx.client.scheduler_info()["workers"]
        options = auto_scheduler.TuningOptions(
            num_measure_trials=2,
            num_measures_per_round=2,
            verbose=0,
            measure_callbacks=[auto_scheduler.RecordToFile(log)],
            builder=ctx.builder,
            runner=ctx,
        )
        task.tune(options, fast_policy(task))
        cluster = ctx.cluster
    assert ctx.cluster is None and cluster.status.name == "closed"
    records = list(auto_scheduler.load_records(log))
    assert [r.error_kind for _, r in records] == ["NO_ERROR"] * 2
    assert all(r.machine["worker"] == worker for _, r in records)


# -- without a cluster ------------------------------------------------------------------


class _FakeClient:
    def __init__(self, machines):
        self.machines = machines

    def run(self, fn, on_error="raise"):
        return self.machines


def test_routing_restricts_to_matching_hosts_only_when_some_do_not_match():
    here = machine_info()
    other = dict(here, cpu="znver3" if host_cpu()[0] != "znver3" else "haswell")
    measurer = dask_measure._DaskMeasurer("tcp://unused:1", None)
    measurer._client = _FakeClient({"tcp://10.0.0.1:5": here, "tcp://10.0.0.2:7": other})
    needs, hosts = measurer.route("llvm")
    assert needs == target_needs("llvm") and hosts == ["10.0.0.1"]
    measurer._client = _FakeClient({"tcp://10.0.0.1:5": here, "tcp://10.0.0.1:6": here})
    assert measurer.route("llvm")[1] is None  # all match: left to the scheduler's queue
    measurer._client = _FakeClient({"tcp://10.0.0.2:7": other})
    with pytest.raises(MeasureError, match="no Dask worker can measure for target"):
        measurer.route("llvm")


def test_a_worker_refuses_a_candidate_for_other_hardware(task):
    """The workers check the hardware themselves: nothing is built or timed elsewhere."""
    wrong = ("haswell" if host_cpu()[0] != "haswell" else "skylake", frozenset())
    payload = {"dag": task.dag_json, "trace": {}, "target": str(task.target), "num_threads": 1}
    built = dask_measure.dask_build(payload, 10, wrong)
    assert built.error_no == 2 and "refused on Dask worker" in built.error_msg
    assert "only measured on the hardware it is built for" in built.error_msg
    ran = dask_measure.dask_run({}, built, {}, wrong)
    assert ran["error_no"] == 4 and "refused" in ran["error_msg"]
    assert "runner" not in dask_measure._RUNNER  # no measurement process was started


def test_matching_needs_the_cpu_and_its_features():
    cpu, features = host_cpu()
    needs = target_needs("llvm")
    here = machine_info()
    assert needs[0] == cpu and mismatch(needs, here) is None
    poorer = dict(here, features="sse2")
    if len(needs[1]) > 1:
        assert "without" in mismatch(needs, poorer)
    assert "not" in mismatch(("haswell", frozenset()), dict(here, cpu="znver3"))
    # an explicit -mattr is what the code needs, whatever this machine has
    assert target_needs(f"llvm -mcpu={cpu} -mattr=+sse2")[1] == {"sse2"}
    assert mismatch(target_needs(f"llvm -mcpu={cpu} -mattr=+sse2"), poorer) is None


def test_records_without_a_machine_still_read_and_new_ones_keep_it(task):
    res = auto_scheduler.MeasureResult([1e-6], machine={"host": "h", "cpu": "c", "cores": 2})
    inp = auto_scheduler.MeasureInput(task, {"version": 1, "insts": []})
    line = encode(inp, res)
    assert decode(line)[1].machine == {"host": "h", "cpu": "c", "cores": 2}
    old = encode(inp, auto_scheduler.MeasureResult([1e-6]))
    assert '"machine"' not in old and decode(old)[1].machine is None


def test_the_package_imports_without_dask_and_says_how_to_get_it():
    code = (
        "import sys\n"
        "sys.modules['distributed'] = None\n"
        "sys.modules['dask'] = None\n"
        "from ansor_lab import auto_scheduler\n"
        "from ansor_lab.errors import MeasureError\n"
        "r = auto_scheduler.DaskRunner('tcp://127.0.0.1:1')\n"
        "try:\n"
        "    r.client\n"
        "except MeasureError as e:\n"
        "    print('ERR', e)\n"
        "print('dask' in sys.modules and sys.modules['dask'] is not None)\n"
    )
    env = dict(os.environ, PYTHONPATH=REPO)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "ERR Dask measurement needs dask.distributed" in out.stdout
    assert "pip install 'ansor_lab[dask]'" in out.stdout
    assert out.stdout.strip().endswith("False")


def test_an_unreachable_scheduler_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(dask_measure, "CONNECT_TIMEOUT", "1s")
    start = time.monotonic()
    runner = auto_scheduler.DaskRunner("tcp://127.0.0.1:9")
    with pytest.raises(MeasureError, match="could not reach the Dask scheduler") as err:
        _ = runner.client
    assert "dask scheduler" in str(err.value) and "dask worker ADDRESS" in str(err.value)
    assert time.monotonic() - start < 30
    with pytest.raises(MeasureError, match="scheduler's address"):
        auto_scheduler.DaskBuilder(None)
