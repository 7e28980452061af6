"""Builders and runners: measure candidates in isolated worker processes.

``LocalBuilder`` compiles candidates in a pool of worker processes (object files come
back); ``LocalRunner`` runs them one at a time in a separate worker process with a
timeout. A build failure, a crash (the process dies) or a hang (the process is killed)
becomes an error record, and the runner process is restarted; the search goes on. A
runner that cannot be set up (first or after a restart) answers each candidate with an error
record saying so; a death in a process that ran other candidates before gets the candidate a
second try in a fresh process, so an innocent candidate is not blamed for a late crash.
"""

from __future__ import annotations

import inspect
import numbers
import os
import select
import time
from dataclasses import dataclass
from typing import Any

from ..codegen.target import Target
from ..dsl.tensor import PlaceholderOp
from ..errors import RuntimeArgumentError
from .popen import PopenWorker, WorkerDied, WorkerTimeout
from .preflight import require_gpu, wrong_device
from .record_check import MAX_COST_S, MIN_COST_S
from .records import ErrorNo, MeasureInput, MeasureResult


@dataclass
class BuildResult:
    """An object file (or the error) for one candidate.

    ``target`` is the target it was built for (a CPU object file for "llvm ...", the
    checked kernel form — with CUDA C and a cubin where a compiler is installed — for
    "cuda ..."): a runner refuses a build for a target it cannot run, and the measurer
    refuses a result whose build was not for the task's target. ``payload`` is what was
    built (DAG, trace, target), for runners that rebuild the program (the GPU emulator).
    """

    obj: bytes | None
    entry: str
    params: list
    error_no: int
    error_msg: str
    time_cost: float
    target: str = ""
    payload: dict | None = None
    source: str = ""
    resources: Any = None


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

    def check_task(self, task: Any) -> None:
        """Refuse, before anything is built, a task this runner cannot measure here: a
        CUDA task without a usable GPU (GPUUnavailableError naming the emulated runner)."""
        if getattr(task.target, "kind", "") == "cuda":
            from ..runtime.cuda_support import require_gpu  # noqa: PLC0415 - pycuda is lazy

            require_gpu("LocalRunner measuring a CUDA task")

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
                r.get("target", p["target"]),
                p,
                r.get("source", ""),
                r.get("resources"),
            )
            for r, p in zip(results, payloads)
        ]

    def close(self) -> None:
        """Stop the worker processes."""
        for w in self._workers:
            w.kill()
        self._workers = []


def _build_error(kind: ErrorNo, msg: str) -> dict:
    return {"error_no": int(kind), "error_msg": msg, "time": 0.0}


class LocalRunner(ProgramRunner):
    """Run built candidates in an isolated process with a timeout (TVM's arguments).

    It times on the device of the task's target: this CPU for "llvm", a CUDA GPU (with
    pycuda) for "cuda". Without a usable GPU a CUDA task is refused before any work
    (GPUUnavailableError naming ``auto_scheduler.EmulatedRunner()``).

    ``clock`` (not in TVM) says which clock times a CPU candidate. ``"auto"`` (the default,
    what the search uses): a program built for one thread runs on the runner's own thread
    alone, and is timed on that thread's CPU clock (``time.thread_time``), so time the core
    spent on other jobs is left out — on a loaded machine one descheduled stretch of the
    single ``min_repeat_ms`` window otherwise makes a fast program look slow, and which
    program a small search keeps depends on when it was measured; a program built for
    several threads (its libgomp threads are not this thread), and a GPU kernel, are timed
    on the wall clock. ``"wall"``: always the wall clock (TVM's LocalRunner). Either way a
    record's costs keep TVM's meaning, seconds per run of the kernel (on one thread, the
    seconds it runs when it has the core), and any TVM reader takes them as they are.
    """

    timing = "measured"
    device_kinds = ("llvm", "cuda")
    clocks = ("auto", "wall")

    def __init__(
        self,
        timeout: float = 10,
        number: int = 3,
        repeat: int = 1,
        min_repeat_ms: float = 100,
        cooldown_interval: float = 0.0,
        enable_cpu_cache_flush: bool = False,
        check_correctness: bool = False,
        clock: str = "auto",
    ) -> None:
        if clock not in self.clocks:
            raise RuntimeArgumentError(
                f"LocalRunner(clock={clock!r}): the clock is 'auto' (a one-thread CPU "
                "program on its thread's CPU clock, anything else on the wall clock) or "
                "'wall' (always the wall clock, as TVM)"
            )
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not timeout > 0:
            # 0 or less would count every candidate as timed out: a search with no results
            raise RuntimeArgumentError(
                f"LocalRunner(timeout={timeout!r}): the timeout is the seconds one candidate "
                "may run, a number > 0 (TVM's default is 10)"
            )
        self.clock = clock
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
        self.setup_error: str | None = None  # why the last setup failed
        self._runs = 0  # candidates the current process has run

    def _setup_worker(self) -> dict | None:
        """Set up the runner process (started if none runs); None when it worked, else the
        error to answer. After a failure the task counts as not set up, so the measurer's
        next batch tries again, and until then candidates are answered without running."""
        fresh = not self._worker.alive
        try:
            reply = self._worker.call(self._setup_msg, timeout=max(self.timeout, 600))
        except (WorkerTimeout, WorkerDied) as err:
            reply = {"error_no": int(ErrorNo.RUNTIME_DEVICE), "error_msg": str(err)}
        if not reply.get("error_no"):
            if fresh:
                self._runs = 0
            return None
        self._worker.kill()
        self.setup_key = None
        self.setup_error = f"the runner process could not be set up: {reply.get('error_msg')}"
        return self._setup_failure()

    def _setup_failure(self) -> dict:
        return {
            "error_no": int(ErrorNo.RUNTIME_DEVICE),
            "error_msg": f"not measured, and not this candidate's fault: {self.setup_error}",
        }

    def _request(self, msg: dict, timeout: float) -> dict:
        """Run one candidate; a crash is blamed on it only if it crashes a fresh process.

        A process that served other candidates may die of one of them late (a corrupted
        heap, a stray thread, a timer): the candidate in flight then gets a second try in a
        fresh process, and only a crash there is its own.
        """
        for attempt in (0, 1):
            if not self._worker.alive and self._setup_msg is not None:
                failure = self._setup_worker()
                if failure is not None:
                    return failure
            used = self._runs > 0
            self._runs += 1
            try:
                reply = self._worker.call(msg, timeout=timeout)
                if reply.get("restart_worker"):
                    # a CUDA fault leaves the process's context dead: the next candidate
                    # gets a fresh process (set up again by the loop above)
                    self._worker.kill()
                return reply
            except WorkerTimeout:
                return {
                    "error_no": int(ErrorNo.RUN_TIMEOUT),
                    "error_msg": f"the run took longer than {timeout} s and was killed",
                }
            except WorkerDied as err:
                if used and attempt == 0:
                    continue
                return {
                    "error_no": int(ErrorNo.RUNTIME_DEVICE),
                    "error_msg": f"the kernel crashed the runner process ({err})",
                }
        raise AssertionError("unreachable")

    def check_task(self, task: Any) -> None:
        """Refuse, before anything is built, a task this runner cannot measure here: a
        CUDA task without a usable GPU (GPUUnavailableError naming the emulated runner)."""
        if getattr(task.target, "kind", "") == "cuda":
            from ..runtime.cuda_support import require_gpu  # noqa: PLC0415 - pycuda is lazy

            require_gpu("LocalRunner measuring a CUDA task")

    def setup(self, task: Any, params: list, outputs: list[int]) -> None:
        """Prepare inputs (and the reference outputs when checking) for a task.

        A CUDA task needs a GPU here: without one this raises GPUUnavailableError before
        anything runs, naming ``auto_scheduler.EmulatedRunner``. Any other failure does not
        raise: ``setup_error`` says why, every candidate run before the
        next successful setup is an error record saying so, and the next batch tries again.
        """
        self.check_task(task)
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
        self.setup_error = None
        if self._setup_worker() is None:
            self.setup_key = task.workload_key

    def run(self, builds: list[BuildResult], on_result: Any = None) -> list[dict]:
        """Time each build; returns {error_no, error_msg, costs} per build.

        ``on_result(k, reply)`` is called as each candidate finishes (the records log
        writes it then, so a killed tuner loses no finished measurement).
        """
        out = []
        for k, b in enumerate(builds):
            if b.error_no != 0 or b.obj is None:
                reply = {"error_no": b.error_no, "error_msg": b.error_msg, "costs": []}
            elif self.setup_error is not None:
                reply = self._setup_failure()
            else:
                msg = {
                    "kind": "run",
                    "obj": b.obj,
                    "entry": b.entry,
                    "number": self.number,
                    "repeat": self.repeat,
                    "min_repeat_ms": self.min_repeat_ms,
                    "flush": self.enable_cpu_cache_flush,
                    "cooldown_ms": self.cooldown_interval * 1e3,
                    "clock": self.clock_for(b),
                }
                reply = self._request(msg, timeout=self.timeout)
            out.append(reply)
            if on_result is not None:
                on_result(k, reply)
        return out

    def clock_for(self, build: BuildResult) -> str:
        """ "thread_cpu" or "wall": the clock that times ``build`` (see the class docstring).

        The thread CPU clock only for a CPU object built for exactly one thread: a CPU
        timing of a program that runs on several threads would count one thread's share.
        """
        if self.clock == "wall" or isinstance(build.obj, dict):  # a dict: a GPU kernel
            return "wall"
        payload = build.payload or {}
        target = str(build.target or payload.get("target", ""))
        one_thread = payload.get("num_threads") == 1
        return "thread_cpu" if one_thread and target.split(" ")[0] == "llvm" else "wall"

    def close(self) -> None:
        """Stop the runner process (a later use sets it up afresh)."""
        self._worker.kill()
        self._setup_msg = None
        self.setup_key = None
        self.setup_error = None


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
        # It does not know the task yet (TVM's signature): inside `with Target("cuda"):`
        # a GPU is needed now; otherwise ``task.tune`` checks before any work is done.
        current = Target.current()
        if current is not None and current.kind == "cuda":
            require_gpu("LocalRPCMeasureContext")
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
        """Measure a batch; results line up with inputs.

        Callbacks with an ``on_result`` method (RecordToFile) get each result as soon as its
        measurement finishes; the others get the batch at the end (TVM's callback form).
        """
        start = time.perf_counter()
        check = getattr(self.runner, "check_task", None)
        if check is not None and self.runner.setup_key != task.workload_key:
            check(task)  # e.g. a CUDA task and no GPU: raise before building anything
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
        build_share = (time.perf_counter() - start) / max(1, len(inputs))
        streaming = [cb for cb in self.callbacks if hasattr(cb, "on_result")]
        results: list[MeasureResult] = []
        clock = [time.perf_counter()]

        def finished(k: int, reply: dict) -> None:
            now = time.perf_counter()
            res = _result(builds[k], reply, build_share + now - clock[0], task.target)
            clock[0] = now
            results.append(res)
            for cb in streaming:
                cb.on_result(policy, inputs[k], res)

        if "on_result" in inspect.signature(self.runner.run).parameters:
            self.runner.run(builds, on_result=finished)
        else:  # a runner of the old form: results arrive with the batch
            for k, reply in enumerate(self.runner.run(builds)):
                finished(k, reply)
        for cb in self.callbacks:
            if cb not in streaming:
                cb(policy, inputs, results)
            elif hasattr(cb, "flush"):
                cb.flush()
        return results

    def close(self) -> None:
        """Stop worker processes."""
        self.builder.close()
        self.runner.close()


def _result(build: BuildResult, reply: dict, wall: float, target: Any) -> MeasureResult:
    """A runner's reply as a MeasureResult; costs no kernel can take become an error, and
    so do costs of a build for another target or timed on another kind of device."""
    costs = list(reply.get("costs", []))
    error_no, error_msg = int(reply["error_no"]), reply.get("error_msg", "")
    if error_no == 0:
        wrong = wrong_device(build, reply, target)
        if wrong:
            error_no, error_msg, costs = int(ErrorNo.RUNTIME_DEVICE), wrong, []
    if error_no == 0 and not (costs and all(MIN_COST_S <= c <= MAX_COST_S for c in costs)):
        error_no = int(ErrorNo.RUNTIME_DEVICE)
        error_msg = f"the timer returned implausible costs {costs[:4]} s"
        costs = []
    machine = reply.get("machine")  # which machine measured it (Dask workers say so)
    estimated = bool(reply.get("estimated")) and error_no == 0
    return MeasureResult(
        costs, error_no, error_msg, build.time_cost + wall, machine=machine, estimated=estimated
    )


def _is_input(t: Any) -> bool:
    return isinstance(t.op, PlaceholderOp)
