"""Code that runs inside worker processes (spawned, so safe with CUDA and in notebooks).

Workers receive plain data — the workload's DAG as JSON and the candidate's trace as
JSON — never a reference to a function the worker could not import, so a workload
defined in a notebook cell or a test module tunes with isolated workers.
"""

from __future__ import annotations

import time
import traceback

import numpy as np

from .records import ErrorNo


def rebuild_schedule(dag_json: dict, trace_json: dict):
    """A tir.Schedule of the workload with the trace replayed on it."""
    from ..dsl.serialize import dag_from_json
    from ..schedule.create import create_prim_func
    from ..schedule.tir_schedule import Schedule
    from ..schedule.trace import Trace

    args = dag_from_json(dag_json)
    sch = Schedule(create_prim_func(args))
    sch.show_unit_loops = True  # records come from the search, which counts every loop
    Trace.from_json(trace_json).apply_to_schedule(sch)
    return sch


def build_worker(payload: dict) -> dict:
    """Build one candidate into an object file (runs in a builder process)."""
    from ..codegen.llvm import CodegenOptions, emit_object
    from ..codegen.pipeline import prepare
    from ..codegen.target import Target
    from ..errors import AnsorLabError, ScheduleError

    start = time.perf_counter()
    try:
        sch = rebuild_schedule(payload["dag"], payload["trace"])
        func = sch.mod.main_function()
    except (ScheduleError, AnsorLabError) as err:
        return {
            "error_no": int(ErrorNo.INSTANTIATION_ERROR),
            "error_msg": str(err),
            "time": time.perf_counter() - start,
        }
    except Exception:  # noqa: BLE001 - any bug becomes an error record, never a crash
        return {
            "error_no": int(ErrorNo.INSTANTIATION_ERROR),
            "error_msg": traceback.format_exc(limit=8),
            "time": time.perf_counter() - start,
        }
    try:
        target = Target(payload["target"])
        if target.kind == "cuda":  # built as CUDA, never as a CPU program (issue 24)
            from .cuda_worker import build_cuda_candidate

            return build_cuda_candidate(func, target, start)
        func = prepare(func, target)  # the same pipeline as tvm.build
        params = [(b.name, list(b.shape), b.dtype) for b in func.params]
        options = CodegenOptions(num_threads=int(payload["num_threads"]))
        obj = emit_object(func, target, options)
    except Exception:  # noqa: BLE001
        return {
            "error_no": int(ErrorNo.COMPILE_HOST),
            "error_msg": traceback.format_exc(limit=8),
            "time": time.perf_counter() - start,
        }
    return {
        "error_no": 0,
        "error_msg": "",
        "obj": obj,
        "entry": func.name,
        "params": params,
        "target": str(target),
        "time": time.perf_counter() - start,
    }


# --------------------------------------------------------------------------------------
# The runner process


def random_inputs(params: list, seed: int = 0) -> list[np.ndarray]:
    """Deterministic test inputs: floats in [-1, 1), small ints, random bools.

    Each array is 64-byte aligned, as TVM's are: candidates are timed on the storage
    they will meet in use (misaligned rows cost a tiled kernel ~15%, a noise the cost
    model would otherwise learn from).
    """
    from ..runtime.ndarray import aligned_copy

    rng = np.random.default_rng(seed)
    out = []
    for _, shape, dtype in params:
        if dtype.startswith("float"):
            a = rng.uniform(-1, 1, size=shape).astype(dtype)
        elif dtype == "bool":
            a = rng.random(size=shape) < 0.5
        else:
            a = rng.integers(-4, 5, size=shape).astype(dtype)
        out.append(aligned_copy(a))
    return out


class _RunnerState:
    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.expected: list | None = None
        self.outputs: list[int] = []
        self.target = None


def _setup(state: _RunnerState, task: dict) -> None:
    from ..codegen.target import Target

    state.target = Target(task["target"])
    state.arrays = random_inputs(task["params"], task.get("seed", 0))
    state.outputs = list(task["outputs"])
    state.expected = None
    if task.get("check"):
        from ..dsl.reference import reference_outputs
        from ..dsl.serialize import dag_from_json

        args = dag_from_json(task["dag"])
        state.expected = reference_outputs(args, state.arrays)


def _run(state: _RunnerState, msg: dict) -> dict:
    import ctypes

    from ..codegen.failures import failure
    from ..codegen.llvm import load_object
    from ..runtime.module import CacheFlusher, time_repeats

    if state.target is None:
        return {
            "error_no": int(ErrorNo.RUNTIME_DEVICE),
            "error_msg": "the runner process was asked to run before it was set up "
            "(LocalRunner.setup first)",
        }
    if isinstance(msg["obj"], dict) and msg["obj"].get("cuda"):
        from .cuda_worker import run_cuda_candidate

        # timed on the GPU: the measurer records only replies from the task's kind of device
        return {**run_cuda_candidate(state, msg), "device": "cuda"}
    loaded = load_object(msg["obj"], msg["entry"], state.target)
    n = len(state.arrays)
    entry = ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.c_void_p] * n))(loaded.entry_address)
    rep = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, *([ctypes.c_void_p] * n))(
        loaded.repeat_address
    )
    for k in state.outputs:
        state.arrays[k][...] = 0
    ptrs = [a.ctypes.data for a in state.arrays]
    rc = entry(*ptrs)
    if rc != 0:  # the kernel says why it stopped (division by zero, out of memory, ...)
        error = failure(rc, msg["entry"])
        return {"error_no": int(ErrorNo.RUNTIME_DEVICE), "error_msg": str(error)}
    if state.expected is not None:
        for k in state.outputs:
            got, want = state.arrays[k], state.expected[k]
            tol = 1e-3 if got.dtype in (np.float32, np.float16) else 1e-6
            if got.dtype.kind == "f":
                ok = np.allclose(
                    got,
                    want,
                    rtol=tol,
                    atol=tol * max(1.0, float(np.abs(want).max(initial=0.0))),
                    equal_nan=True,
                )
            else:
                ok = np.array_equal(got, want)
            if not ok:
                err = float(np.nanmax(np.abs(got.astype(float) - want.astype(float))))
                return {
                    "error_no": int(ErrorNo.WRONG_ANSWER),
                    "error_msg": f"output {k} differs from the reference (max abs err {err})",
                }
    flush = CacheFlusher(state.target) if msg.get("flush") else None

    def run_n(count: int) -> None:
        rc = rep(count, *ptrs)
        if rc != 0:
            raise failure(rc, msg["entry"])

    # "thread_cpu": the kernel runs on this thread alone (LocalRunner checked it was built
    # for one thread), so this thread's CPU clock leaves out the time other jobs held the core
    clock = time.thread_time if msg.get("clock") == "thread_cpu" else time.perf_counter
    costs = time_repeats(
        run_n,
        msg["number"],
        msg["repeat"],
        msg["min_repeat_ms"],
        flush,
        msg.get("cooldown_ms", 0.0),
        clock=clock,
    )
    del loaded
    return {"error_no": 0, "costs": costs}


_STATE = _RunnerState()
_EMU = None  # the GPU emulator's state (emulate_worker.EmulatorState), made on first use


def _emu_state():
    global _EMU
    if _EMU is None:
        from .emulate_worker import EmulatorState

        _EMU = EmulatorState()
    return _EMU


def handle(msg: dict) -> dict | None:
    """Answer one request in a worker process (None: stop serving)."""
    kind = msg.get("kind")
    if kind == "stop":
        return None
    try:
        if kind == "build":
            return build_worker(msg)
        if kind == "setup":
            _setup(_STATE, msg)
            return {"error_no": 0}
        if kind == "run":
            return _run(_STATE, msg)
        if kind == "emu_setup":
            from . import emulate_worker

            return emulate_worker.setup(_emu_state(), msg)
        if kind == "emulate":
            from . import emulate_worker

            return emulate_worker.check(_emu_state(), msg)
        if kind == "ping":
            return {"error_no": 0, "pid": __import__("os").getpid()}
        return {"error_no": int(ErrorNo.UNKNOWN_ERROR), "error_msg": f"unknown request {kind}"}
    except Exception:  # noqa: BLE001 - reported, the process lives on
        return {"error_no": int(ErrorNo.RUNTIME_DEVICE), "error_msg": traceback.format_exc(limit=8)}
