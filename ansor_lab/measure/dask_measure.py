"""Builders and runners on a Dask cluster (the ``dask`` extra: ``dask[distributed]``).

``DaskBuilder`` and ``DaskRunner`` take a scheduler address (``"tcp://host:8786"``) or a
``distributed.Client`` and measure each candidate as one Dask task; ``DaskMeasureContext``
holds one client (or starts a ``LocalCluster``) and gives both, as TVM's
``LocalRPCMeasureContext`` gives ``.runner``::

    ctx = auto_scheduler.DaskMeasureContext("tcp://scheduler:8786")
    options = auto_scheduler.TuningOptions(..., builder=ctx.builder, runner=ctx.runner)

- **Isolation inside a worker.** A Dask task builds or runs its candidate through a
  ``LocalBuilder`` / ``LocalRunner`` kept by that worker process, so a crashing or hanging
  candidate kills a measurement process, becomes an error record, and the Dask worker lives.
- **Matching hardware.** Each worker reports ``hardware.machine_info()``; a task's
  candidates are built and run only on hosts whose CPU matches the task's target
  (``hardware.target_needs``), and ``MeasureError`` lists the workers when none does.
  Every result carries the machine that measured it; records store it.
- **Nothing lost.** A worker that dies mid-batch has its candidates re-queued by Dask on
  the other (or restarted) workers; a candidate whose worker dies repeatedly (Dask's
  ``allowed-failures``) or that no worker finishes within ``stall_timeout`` becomes an
  error record. Every candidate of a batch comes back with a result, in order.

ansor_lab must be importable on the workers (the same version as the tuner's). dask is
imported only when one of these objects first talks to the cluster.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from types import SimpleNamespace
from typing import Any

from ..errors import MeasureError
from .hardware import machine_info, mismatch, target_needs
from .measure import BuildResult, LocalBuilder, LocalRunner, ProgramBuilder, ProgramRunner
from .records import ErrorNo

CONNECT_TIMEOUT = "20s"  # how long to try reaching the scheduler
_INSTALL = "pip install 'ansor_lab[dask]' (or: pip install 'dask[distributed]')"


def _distributed() -> Any:
    try:
        import distributed  # noqa: PLC0415 - dask is an optional, heavy dependency
    except ImportError as err:
        raise MeasureError(f"Dask measurement needs dask.distributed ({err}); {_INSTALL}") from None
    return distributed


# --------------------------------------------------------------------------------------
# What runs inside a Dask worker process


_LOCAL = threading.local()  # one LocalBuilder per worker thread
_BUILDERS: list = []  # all of them, for release_worker (it runs on another thread)
_RUN_LOCK = threading.Lock()  # one timed run at a time per worker process
_RUNNER: dict[str, Any] = {}  # {"options": tuple, "runner": LocalRunner}


def worker_machine() -> dict:
    """This Dask worker's machine_info, with its address under "worker"."""
    info = machine_info()
    try:
        from distributed import get_worker  # noqa: PLC0415 - runs on a Dask worker

        info["worker"] = get_worker().address
    except (ImportError, ValueError):  # not inside a Dask worker
        info["worker"] = ""
    return info


def _refusal(needs: tuple) -> str | None:
    """Why this worker must not build or run for ``needs`` (None: it may)."""
    why = mismatch(needs, machine_info())
    if why is None:
        return None
    return (
        f"refused on Dask worker {worker_machine()['worker']}: it has {why}; a candidate is "
        "only measured on the hardware it is built for"
    )


def dask_build(payload: dict, timeout: float, needs: tuple) -> BuildResult:
    """Build one candidate in this worker's isolated builder process."""
    refused = _refusal(needs)
    if refused:
        return BuildResult(None, "main", [], int(ErrorNo.COMPILE_HOST), refused, 0.0)
    builder = getattr(_LOCAL, "builder", None)
    if builder is None or builder.timeout != timeout:
        if builder is not None:
            builder.close()
            _BUILDERS.remove(builder)
        builder = _LOCAL.builder = LocalBuilder(timeout=timeout, n_parallel=1)
        _BUILDERS.append(builder)
    return builder.build([payload])[0]


def dask_run(setup: dict, build: BuildResult, options: dict, needs: tuple) -> dict:
    """Time one built candidate in this worker's isolated runner process."""
    refused = _refusal(needs)
    if refused:
        return {"error_no": int(ErrorNo.RUNTIME_DEVICE), "error_msg": refused, "costs": []}
    key = tuple(sorted(options.items()))
    with _RUN_LOCK:
        if _RUNNER.get("options") != key:
            if "runner" in _RUNNER:
                _RUNNER["runner"].close()
            _RUNNER.update(options=key, runner=LocalRunner(**options))
        runner = _RUNNER["runner"]
        out = None
        if runner.setup_key != setup["key"]:
            task = SimpleNamespace(
                target=setup["target"], dag_json=setup["dag"], workload_key=setup["key"]
            )
            try:
                runner.setup(task, setup["params"], setup["outputs"])
            except Exception as err:  # noqa: BLE001 - a failed setup is this candidate's error
                runner.setup_key = None
                out = {
                    "error_no": int(ErrorNo.RUNTIME_DEVICE),
                    "error_msg": f"runner setup failed on the Dask worker: {err}",
                    "costs": [],
                }
        if out is None:
            out = dict(runner.run([build])[0])
    out["machine"] = worker_machine()
    return out


def release_worker() -> bool:
    """Stop this worker's measurement processes (they restart on the next task)."""
    with _RUN_LOCK:
        runner = _RUNNER.pop("runner", None)
        _RUNNER.clear()
        if runner is not None:
            runner.close()
    for builder in list(_BUILDERS):  # closed builders restart their process when used
        builder.close()
    return True


# --------------------------------------------------------------------------------------
# The tuner's side


class _DaskMeasurer:
    """The client, routing to matching hosts, and collecting a batch of futures."""

    def __init__(self, address_or_client: Any, stall_timeout: float | None) -> None:
        if address_or_client is None:
            raise MeasureError(
                "give the Dask scheduler's address ('tcp://host:8786') or a distributed.Client; "
                "DaskMeasureContext() with no address starts a LocalCluster"
            )
        self._address = address_or_client
        self._client: Any = None
        self._owns_client = False
        self.stall_timeout = stall_timeout
        self.last_workers: dict[str, dict] = {}  # address -> machine_info, at the last routing

    @property
    def client(self) -> Any:
        """The distributed.Client (connected on first use)."""
        if self._client is None:
            distributed = _distributed()
            if isinstance(self._address, distributed.Client):
                self._client = self._address
            else:
                try:
                    self._client = distributed.Client(
                        self._address, set_as_default=False, timeout=CONNECT_TIMEOUT
                    )
                except (OSError, TimeoutError, ValueError) as err:
                    raise MeasureError(
                        f"could not reach the Dask scheduler at {self._address!r} ({err}); "
                        "start one with `dask scheduler` and workers with `dask worker ADDRESS`, "
                        "or pass a distributed.Client"
                    ) from None
                self._owns_client = True
        return self._client

    def route(self, target: str) -> tuple[tuple, list[str] | None]:
        """(What ``target`` needs, the hosts whose workers match it, or None when every
        worker does); MeasureError if none does.

        With every worker matching, tasks are left unrestricted, so the scheduler queues
        them and hands each worker one or two at a time (a dead worker then takes at most
        those with it); the workers still check the hardware themselves.
        """
        client = self.client
        info = client.run(worker_machine, on_error="return")
        if not info:
            try:
                client.wait_for_workers(1, timeout=30)
            except (TimeoutError, OSError):
                raise MeasureError(
                    f"no Dask worker is connected to the scheduler {client.scheduler.address}; "
                    "start workers with `dask worker ADDRESS`"
                ) from None
            info = client.run(worker_machine, on_error="return")
        workers = {a: m for a, m in info.items() if isinstance(m, dict)}
        self.last_workers = workers
        try:
            needs = target_needs(target)
        except ValueError as err:
            raise MeasureError(f"{err}; tune CUDA targets with the local runner") from None
        get_host = _distributed().comm.get_address_host
        hosts = sorted({get_host(a) for a, m in workers.items() if mismatch(needs, m) is None})
        if not hosts:
            seen = (
                "; ".join(f"{a}: {mismatch(needs, m)}" for a, m in sorted(workers.items())[:8])
                or "no worker answered"
            )
            cpus = sorted({m["cpu"] for m in workers.values()})
            raise MeasureError(
                f"no Dask worker can measure for target {target!r}: it needs CPU {needs[0]!r} "
                f"with {len(needs[1])} features; the workers have {seen}. Tune with "
                f"target='llvm -mcpu={cpus[0] if cpus else '<their cpu>'}' to measure on those "
                f"workers, or add workers with CPU {needs[0]!r}"
            )
        every = all(mismatch(needs, m) is None for m in workers.values())
        return needs, None if every and len(workers) == len(info) else hosts

    def collect(self, futures: list, on_error: Any, what: str) -> list:
        """Results of ``futures`` in order; a failed one becomes ``on_error(msg, kind)``.

        Waits for each in turn at most ``stall_timeout`` seconds (tasks finish about in
        the order they were submitted); past that, the unfinished ones are cancelled and
        recorded as timeouts.
        """
        distributed = _distributed()
        stall = self.stall_timeout
        out = []
        stalled = False
        for f in futures:
            try:
                if stalled and not f.done():
                    raise TimeoutError
                out.append(f.result(timeout=stall))
            except TimeoutError:
                stalled = True
                f.cancel()
                out.append(
                    on_error(
                        f"no Dask worker finished the {what} in {stall} s (stall_timeout); are "
                        "the workers alive?",
                        ErrorNo.RUN_TIMEOUT if what == "run" else ErrorNo.BUILD_TIMEOUT,
                    )
                )
            except distributed.KilledWorker as err:
                out.append(
                    on_error(
                        f"the Dask worker measuring this candidate died and Dask gave up on "
                        f"its {what} (KilledWorker: {err}); recorded as an error, the rest "
                        "of the batch went on",
                        None,
                    )
                )
            except (Exception, asyncio.CancelledError) as err:  # noqa: BLE001 - this candidate's
                out.append(on_error(f"the Dask task for this {what} failed: {err!r}", None))
            f.release()
        return out

    def submit(self, fn: Any, args: tuple, hosts: list[str] | None, kind: str) -> Any:
        """Submit ``fn(*args)`` as one task, restricted to ``hosts`` when given."""
        return self.client.submit(
            fn,
            *args,
            key=f"ansor-{kind}-{uuid.uuid4().hex}",
            workers=hosts,
            allow_other_workers=False,
            pure=False,
        )

    def close(self) -> None:
        """Stop the workers' measurement processes; close the client if we opened it."""
        if self._client is None:
            return
        try:
            self._client.run(release_worker, on_error="ignore")
        except Exception:  # noqa: BLE001 - closing must not fail on a dying cluster
            pass
        if self._owns_client:
            self._client.close()
            self._client = None
            self._owns_client = False


class DaskBuilder(ProgramBuilder):
    """Build candidates as Dask tasks on workers whose CPU matches the task's target.

    ``address_or_client``: the scheduler's address or a ``distributed.Client``;
    ``timeout``: seconds per build (in the worker's isolated builder process);
    ``stall_timeout``: seconds with no build of a batch finishing before the rest are
    recorded as timeouts.
    """

    def __init__(
        self,
        address_or_client: Any,
        timeout: float = 15,
        n_parallel: int | None = None,
        build_func: str = "default",
        stall_timeout: float = 600,
    ) -> None:
        self.timeout = timeout
        self.n_parallel = n_parallel  # accepted for TVM's signature: the cluster decides
        self._dask = _DaskMeasurer(address_or_client, stall_timeout)

    @property
    def client(self) -> Any:
        """The distributed.Client."""
        return self._dask.client

    def build(self, payloads: list[dict]) -> list[BuildResult]:
        """Build each payload ({dag, trace, target, num_threads}) on the cluster."""
        routes: dict[str, tuple] = {}
        futures = []
        for p in payloads:
            if p["target"] not in routes:
                routes[p["target"]] = self._dask.route(p["target"])
            needs, hosts = routes[p["target"]]
            futures.append(self._dask.submit(dask_build, (p, self.timeout, needs), hosts, "build"))

        def error(msg: str, kind: ErrorNo | None) -> BuildResult:
            return BuildResult(None, "main", [], int(kind or ErrorNo.COMPILE_HOST), msg, 0.0)

        return self._dask.collect(futures, error, "build")

    def close(self) -> None:
        """Stop the workers' builder processes; close the client if this opened it."""
        self._dask.close()


class DaskRunner(ProgramRunner):
    """Run built candidates as Dask tasks on workers whose CPU matches the task's target.

    TVM's ``RPCRunner(key, host, port, ...)`` arguments, with the scheduler's address (or a
    ``distributed.Client``) in place of the tracker's key, host and port. Each result has
    the ``machine`` (host, worker, CPU, features, cores) that measured it.
    """

    def __init__(
        self,
        address_or_client: Any,
        timeout: float = 10,
        number: int = 3,
        repeat: int = 1,
        min_repeat_ms: float = 100,
        cooldown_interval: float = 0.0,
        enable_cpu_cache_flush: bool = False,
        check_correctness: bool = False,
        stall_timeout: float = 600,
    ) -> None:
        self.timeout = timeout
        self.number = number
        self.repeat = repeat
        self.min_repeat_ms = min_repeat_ms
        self.cooldown_interval = cooldown_interval
        self.enable_cpu_cache_flush = enable_cpu_cache_flush
        self.check_correctness = check_correctness
        self.setup_key: str | None = None
        self._setup: dict | None = None
        self._dask = _DaskMeasurer(address_or_client, stall_timeout)

    @property
    def client(self) -> Any:
        """The distributed.Client."""
        return self._dask.client

    def setup(self, task: Any, params: list, outputs: list[int]) -> None:
        """Remember the task's inputs; workers set themselves up on their first candidate.

        Raises MeasureError when no worker's hardware matches the task's target.
        """
        self._dask.route(str(task.target))
        self._setup = {
            "key": f"{task.workload_key}|{task.target}",
            "target": str(task.target),
            "dag": task.dag_json,
            "params": params,
            "outputs": outputs,
        }
        self.setup_key = task.workload_key

    def _options(self) -> dict:
        return {
            "timeout": self.timeout,
            "number": self.number,
            "repeat": self.repeat,
            "min_repeat_ms": self.min_repeat_ms,
            "cooldown_interval": self.cooldown_interval,
            "enable_cpu_cache_flush": self.enable_cpu_cache_flush,
            "check_correctness": self.check_correctness,
        }

    def run(self, builds: list[BuildResult]) -> list[dict]:
        """Time each build on the cluster: {error_no, error_msg, costs, machine} per build."""
        out: list[dict | None] = [None] * len(builds)
        todo = [k for k, b in enumerate(builds) if b.error_no == 0 and b.obj is not None]
        for k, b in enumerate(builds):
            if k not in todo:
                out[k] = {"error_no": b.error_no, "error_msg": b.error_msg, "costs": []}
        if todo:
            if self._setup is None:
                raise MeasureError("DaskRunner.run before setup(task, params, outputs)")
            needs, hosts = self._dask.route(self._setup["target"])
            options = self._options()
            futures = [
                self._dask.submit(dask_run, (self._setup, builds[k], options, needs), hosts, "run")
                for k in todo
            ]

            def error(msg: str, kind: ErrorNo | None) -> dict:
                return {"error_no": int(kind or ErrorNo.RUNTIME_DEVICE), "error_msg": msg}

            for k, r in zip(todo, self._dask.collect(futures, error, "run")):
                out[k] = {"costs": [], **r}
        return out

    def close(self) -> None:
        """Stop the workers' runner processes; close the client if this opened it."""
        self._dask.close()
        self.setup_key = None


class DaskMeasureContext:
    """One Dask client for a ``.builder`` (DaskBuilder) and a ``.runner`` (DaskRunner).

    ``address_or_client``: a scheduler address or a Client; None starts a
    ``distributed.LocalCluster`` of ``n_workers`` single-threaded worker processes on this
    machine (as TVM's LocalRPCMeasureContext starts a local tracker and server). Use it
    as a context manager, or call ``close()``.
    """

    def __init__(
        self,
        address_or_client: Any = None,
        n_workers: int = 1,
        timeout: float = 10,
        number: int = 3,
        repeat: int = 1,
        min_repeat_ms: float = 0,
        cooldown_interval: float = 0.0,
        enable_cpu_cache_flush: bool = False,
        build_timeout: float = 15,
    ) -> None:
        distributed = _distributed()
        self.cluster = None
        if address_or_client is None:
            self.cluster = distributed.LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
            )
            address_or_client = self.cluster
        if isinstance(address_or_client, distributed.Client):
            self.client, self._owns_client = address_or_client, False
        else:
            self.client = _DaskMeasurer(address_or_client, None).client
            self._owns_client = True
        self.builder = DaskBuilder(self.client, timeout=build_timeout)
        self.runner = DaskRunner(
            self.client,
            timeout,
            number,
            repeat,
            min_repeat_ms,
            cooldown_interval,
            enable_cpu_cache_flush,
        )

    def __enter__(self) -> DaskMeasureContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the measurement processes, the client we opened and the cluster we started."""
        self.runner.close()
        if self._owns_client:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
