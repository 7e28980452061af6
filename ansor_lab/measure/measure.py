"""Builders and runners: measure candidates in isolated worker processes.

``LocalBuilder`` compiles candidates in a pool of worker processes (object files come
back); ``LocalRunner`` runs them one at a time in a separate worker process with a
timeout. A build failure, a crash (the process dies) or a hang (the process is killed)
becomes an error record, and the runner process is restarted; the search goes on.
"""

from __future__ import annotations

import os
import select
import time
from dataclasses import dataclass
from typing import Any

from ..dsl.tensor import PlaceholderOp
from .popen import PopenWorker, WorkerDied, WorkerTimeout
from .records import ErrorNo, MeasureInput, MeasureResult


@dataclass
class BuildResult:
    """An object file (or the error) for one candidate."""

    obj: bytes | None
    entry: str
    params: list
    error_no: int
    error_msg: str
    time_cost: float


class ProgramBuilder:
    """Base class of builders (TVM's name): ``build(payloads)`` -> BuildResults, ``close()``."""

    def build(self, payloads: list[dict]) -> list[BuildResult]:
        """Build each payload ({dag, trace, target, num_threads})."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the builder holds."""


class ProgramRunner:
    """Base class of runners (TVM's name): ``setup``, ``run(builds)`` -> dicts, ``close()``.

    ``setup_key`` is the workload key of the task the runner is set up for (None: none).
    """

    setup_key: str | None = None
    check_correctness: bool = False

    def setup(self, task: Any, params: list, outputs: list[int]) -> None:
        """Prepare inputs (and reference outputs when checking) for a task."""
        raise NotImplementedError

    def run(self, builds: list[BuildResult]) -> list[dict]:
        """Time each build: {error_no, error_msg, costs[, machine]} per build."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the runner holds."""


class LocalBuilder(ProgramBuilder):
    """Build candidates in parallel worker processes (TVM's name and arguments)."""

    def __init__(
        self, timeout: float = 15, n_parallel: int | None = None, build_func: str = "default"
    ) -> None:
        self.timeout = timeout
        self.n_parallel = n_parallel or max(1, min(os.cpu_count() or 1, 4))
        self._workers: list[PopenWorker] = []

    def build(self, payloads: list[dict]) -> list[BuildResult]:
        """Build each payload ({dag, trace, target, num_threads}) on the worker pool."""
        while len(self._workers) < self.n_parallel:
            self._workers.append(PopenWorker())
        results: list[dict | None] = [None] * len(payloads)
        todo = list(range(len(payloads)))[::-1]
        busy: dict[int, tuple[int, float]] = {}  # worker index -> (job, deadline)
        while todo or busy:
            for w, worker in enumerate(self._workers):
                if w not in busy and todo:
                    job = todo.pop()
                    try:
                        worker.send({"kind": "build", **payloads[job]})
                        busy[w] = (job, time.monotonic() + self.timeout)
                    except WorkerDied as err:
                        results[job] = _build_error(ErrorNo.COMPILE_HOST, str(err))
            if not busy:
                continue
            now = time.monotonic()
            wait = max(0.0, min(d for _, d in busy.values()) - now)
            fds = {self._workers[w].fileno(): w for w in busy}
            ready, _, _ = select.select(list(fds), [], [], wait)
            for fd in ready:
                w = fds[fd]
                job, _ = busy.pop(w)
                try:
                    results[job] = self._workers[w].recv(timeout=self.timeout)
                except (WorkerDied, WorkerTimeout) as err:
                    results[job] = _build_error(ErrorNo.COMPILE_HOST, f"builder crashed: {err}")
            now = time.monotonic()
            for w, (job, deadline) in list(busy.items()):
                if now >= deadline and results[job] is None:
                    self._workers[w].kill()
                    busy.pop(w)
                    results[job] = _build_error(
                        ErrorNo.BUILD_TIMEOUT, f"build took longer than {self.timeout} s"
                    )
        return [
            BuildResult(
                r.get("obj"),
                r.get("entry", "main"),
                r.get("params", []),
                r["error_no"],
                r.get("error_msg", ""),
                r.get("time", 0.0),
            )
            for r in results
        ]

    def close(self) -> None:
        """Stop the worker processes."""
        for w in self._workers:
            w.kill()
        self._workers = []


def _build_error(kind: ErrorNo, msg: str) -> dict:
    return {"error_no": int(kind), "error_msg": msg, "time": 0.0}


class LocalRunner(ProgramRunner):
    """Run built candidates in an isolated process with a timeout (TVM's arguments)."""

    def __init__(
        self,
        timeout: float = 10,
        number: int = 3,
        repeat: int = 1,
        min_repeat_ms: float = 100,
        cooldown_interval: float = 0.0,
        enable_cpu_cache_flush: bool = False,
        check_correctness: bool = False,
    ) -> None:
        self.timeout = timeout
        self.number = number
        self.repeat = repeat
        self.min_repeat_ms = min_repeat_ms
        self.cooldown_interval = cooldown_interval
        self.enable_cpu_cache_flush = enable_cpu_cache_flush
        self.check_correctness = check_correctness
        self._worker = PopenWorker()
        self._setup_msg: dict | None = None
        self.setup_key: str | None = None  # workload key of the task the inputs are for

    def _request(self, msg: dict, timeout: float) -> dict:
        fresh = not self._worker.alive
        try:
            if fresh and self._setup_msg is not None and msg is not self._setup_msg:
                self._worker.call(self._setup_msg, timeout=max(self.timeout, 600))
            return self._worker.call(msg, timeout=timeout)
        except WorkerTimeout:
            return {
                "error_no": int(ErrorNo.RUN_TIMEOUT),
                "error_msg": f"the run took longer than {timeout} s and was killed",
            }
        except WorkerDied as err:
            return {
                "error_no": int(ErrorNo.RUNTIME_DEVICE),
                "error_msg": f"the kernel crashed the runner process ({err})",
            }

    def setup(self, task: Any, params: list, outputs: list[int]) -> None:
        """Prepare inputs (and the reference outputs when checking) for a task."""
        self._setup_msg = {
            "kind": "setup",
            "target": str(task.target),
            "params": params,
            "outputs": outputs,
            "check": self.check_correctness,
            "dag": task.dag_json,
            "seed": 0,
        }
        self.setup_key = None
        reply = self._request(self._setup_msg, timeout=max(self.timeout, 600))
        if reply.get("error_no"):
            raise RuntimeError(f"runner setup failed: {reply.get('error_msg')}")
        self.setup_key = task.workload_key

    def run(self, builds: list[BuildResult]) -> list[dict]:
        """Time each build; returns {error_no, error_msg, costs} per build."""
        out = []
        for b in builds:
            if b.error_no != 0 or b.obj is None:
                out.append({"error_no": b.error_no, "error_msg": b.error_msg, "costs": []})
                continue
            msg = {
                "kind": "run",
                "obj": b.obj,
                "entry": b.entry,
                "number": self.number,
                "repeat": self.repeat,
                "min_repeat_ms": self.min_repeat_ms,
                "flush": self.enable_cpu_cache_flush,
                "cooldown_ms": self.cooldown_interval * 1e3,
            }
            out.append(self._request(msg, timeout=self.timeout))
        return out

    def close(self) -> None:
        """Stop the runner process (a later use sets it up afresh)."""
        self._worker.kill()
        self._setup_msg = None
        self.setup_key = None


class LocalRPCMeasureContext:
    """TVM's tutorial name for local isolated measurement: ``.runner`` is a LocalRunner."""

    def __init__(
        self,
        priority: int = 1,
        n_parallel: int = 1,
        timeout: float = 10,
        number: int = 3,
        repeat: int = 1,
        min_repeat_ms: float = 0,
        cooldown_interval: float = 0.0,
        enable_cpu_cache_flush: bool = False,
        device: int = 0,
    ) -> None:
        self.runner = LocalRunner(
            timeout, number, repeat, min_repeat_ms, cooldown_interval, enable_cpu_cache_flush
        )

    def __del__(self) -> None:
        try:
            self.runner.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class ProgramMeasurer:
    """Builds and runs candidates of one task; writes results to the callbacks."""

    def __init__(
        self, builder: ProgramBuilder, runner: ProgramRunner, callbacks: list, num_threads: int
    ) -> None:
        self.builder = builder
        self.runner = runner
        self.callbacks = list(callbacks or [])
        self.num_threads = num_threads

    def measure(self, task: Any, policy: Any, inputs: list[MeasureInput]) -> list[MeasureResult]:
        """Measure a batch; results line up with inputs."""
        start = time.perf_counter()
        payloads = [
            {
                "dag": task.dag_json,
                "trace": inp.trace,
                "target": str(task.target),
                "num_threads": self.num_threads,
            }
            for inp in inputs
        ]
        builds = self.builder.build(payloads)
        good = next((b for b in builds if b.error_no == 0), None)
        # the runner remembers which task its inputs are for, not this measurer: the task
        # scheduler shares one runner between the measurers of all its tasks
        if good is not None and self.runner.setup_key != task.workload_key:
            outputs = [k for k, t in enumerate(task.args) if not _is_input(t)]
            self.runner.setup(task, good.params, outputs)
        runs = self.runner.run(builds)
        elapsed = time.perf_counter() - start
        results = []
        for b, r in zip(builds, runs):
            results.append(
                MeasureResult(
                    list(r.get("costs", [])),
                    int(r["error_no"]),
                    r.get("error_msg", ""),
                    b.time_cost + elapsed / max(1, len(inputs)),
                    machine=r.get("machine"),
                )
            )
        for cb in self.callbacks:
            cb(policy, inputs, results)
        return results

    def close(self) -> None:
        """Stop worker processes."""
        self.builder.close()
        self.runner.close()


def _is_input(t: Any) -> bool:

    return isinstance(t.op, PlaceholderOp)
