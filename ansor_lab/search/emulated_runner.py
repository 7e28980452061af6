"""``auto_scheduler.EmulatedRunner``: tune a CUDA task without a GPU, with estimated times.

Each built candidate is run on the GPU emulator (CUDA semantics on the CPU) and compared
with the numpy reference — a wrong result, a race, an out-of-bounds access or a divergent
barrier is an error record — and then timed by the analytic GPU model of the task's target
(``gpu_model.estimate``). Its records are marked *estimated* in the log (``"timing":
"estimated"``) and everywhere they are shown, and are never mixed with measured ones
(``measure.timing``). Usable wherever a runner is: ``TuningOptions(runner=...)``, the
task scheduler, the tuning widget.
"""

from __future__ import annotations

import pickle
from typing import Any

from ..measure.emulate_worker import EmulatorState, check, setup as emu_setup
from ..measure.measure import ProgramRunner
from ..measure.popen import PopenWorker, WorkerDied, WorkerTimeout
from ..measure.preflight import check_runner
from ..measure.records import ErrorNo
from .gpu_model import estimate


class EmulatedRunner(ProgramRunner):
    """Check candidates on the GPU emulator and record the analytic model's estimate.

    ``timeout``: seconds one candidate may take on the emulator. ``isolated``: run the
    emulator in a worker process (a crash or hang becomes an error record; the default),
    or in this process (no process start: small notebook budgets). ``target``: the GPU
    to estimate for (default: the task's target, e.g. ``Target("cuda -model=a100")``).
    """

    timing = "estimated"
    device_kinds = ("cuda",)

    def __init__(self, timeout: float = 60, isolated: bool = True, target: Any = None) -> None:
        self.timeout = timeout
        self.isolated = isolated
        self.target = target
        self.check_correctness = True  # always: an estimate of a wrong kernel is worthless
        self.setup_key: str | None = None
        self.setup_error: str | None = None
        self._worker = PopenWorker() if isolated else None
        self._state = EmulatorState()
        self._setup_msg: dict | None = None
        self._task_target = None
        self.last_estimates: list = []  # GPUEstimate of each candidate of the last batch

    def check_task(self, task: Any) -> None:
        """Refuse a task that is not a CUDA task (the emulator runs CUDA kernels)."""
        check_runner(task, self)

    def _call(self, msg: dict, timeout: float) -> dict:
        if not self.isolated:
            handler = emu_setup if msg["kind"] == "emu_setup" else check
            return handler(self._state, msg)
        for attempt in (0, 1):
            if not self._worker.alive and msg["kind"] != "emu_setup" and self._setup_msg:
                reply = self._worker.call(self._setup_msg, timeout=600)
                if reply.get("error_no"):
                    return reply
            try:
                return self._worker.call(msg, timeout=timeout)
            except WorkerTimeout:
                self._worker.kill()
                return {
                    "error_no": int(ErrorNo.RUN_TIMEOUT),
                    "error_msg": f"the GPU emulator took longer than {timeout} s",
                }
            except WorkerDied as err:
                if attempt == 0 and msg["kind"] == "emu_setup":
                    continue
                return {
                    "error_no": int(ErrorNo.RUNTIME_DEVICE),
                    "error_msg": f"the candidate crashed the emulator process ({err})",
                }
        raise AssertionError("unreachable")

    def setup(self, task: Any, params: list, outputs: list[int]) -> None:
        """Make the task's inputs and numpy reference outputs (in the emulator process)."""
        from ..codegen.target import as_target  # noqa: PLC0415

        self._task_target = as_target(self.target) if self.target is not None else task.target
        self._setup_msg = {
            "kind": "emu_setup",
            "target": str(task.target),
            "params": params,
            "outputs": outputs,
            "dag": task.dag_json,
            "seed": 0,
        }
        self.setup_key = None
        reply = self._call(self._setup_msg, 600)
        if reply.get("error_no"):
            self.setup_error = f"the emulator could not be set up: {reply.get('error_msg')}"
        else:
            self.setup_error = None
            self.setup_key = task.workload_key

    def run(self, builds: list, on_result: Any = None) -> list[dict]:
        """Emulate and estimate each build: {error_no, error_msg, costs, estimated, device}."""
        out = []
        self.last_estimates = []
        for k, b in enumerate(builds):
            est = None
            if b.error_no != 0:
                reply = {"error_no": b.error_no, "error_msg": b.error_msg, "costs": []}
            elif self.setup_error is not None:
                reply = {
                    "error_no": int(ErrorNo.RUNTIME_DEVICE),
                    "error_msg": f"not run, not this candidate's fault: {self.setup_error}",
                }
            elif b.target.split()[:1] != ["cuda"] or b.payload is None:
                reply = {
                    "error_no": int(ErrorNo.RUNTIME_DEVICE),
                    "error_msg": f"EmulatedRunner runs CUDA builds; this one is for {b.target!r}",
                }
            else:
                msg = {"kind": "emulate", "dag": b.payload["dag"], "trace": b.payload["trace"]}
                reply = self._call(msg, self.timeout)
                if reply.get("error_no") == 0:
                    # ptxas's registers where the builder compiled the kernels
                    regs = b.obj.get("resources") if isinstance(b.obj, dict) else None
                    program = pickle.loads(reply.pop("program"))
                    est = estimate(program, self._task_target, regs)
                    if est.seconds == float("inf"):
                        reply = {
                            "error_no": int(ErrorNo.RUNTIME_DEVICE),
                            "error_msg": f"a block cannot be resident on the GPU: {est}",
                        }
                    else:
                        reply.update(
                            costs=[est.seconds], estimated=True, device="cuda", estimate=str(est)
                        )
            self.last_estimates.append(est)
            out.append(reply)
            if on_result is not None:
                on_result(k, reply)
        return out

    def close(self) -> None:
        """Stop the emulator process."""
        if self._worker is not None:
            self._worker.kill()
        self.setup_key = None
