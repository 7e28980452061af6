"""The GPU emulator's side of ``EmulatedRunner``: check one CUDA candidate against numpy.

Runs in a worker process (or in the tuner's, when the runner is not isolated): ``setup``
makes the task's inputs and reference outputs once; ``check`` rebuilds a candidate from
its trace through the same pipeline as the builder (lower, ``prepare``, kernel form), runs
it on the GPU emulator (``codegen.emulator.emulate``: CUDA semantics on the CPU, reporting
races, out-of-bounds accesses and divergent barriers) and compares every output with the
reference. It answers the kernel program (pickled in memory) for the analytic model.
"""

from __future__ import annotations

import pickle
import traceback

import numpy as np

from .records import ErrorNo


class EmulatorState:
    """Inputs and reference outputs of the task being emulated."""

    def __init__(self) -> None:
        self.arrays: list = []
        self.expected: list | None = None
        self.outputs: list[int] = []
        self.target = None


def emulator():
    """The emulate function (imported when first needed: it compiles through LLVM)."""
    from ..codegen.emulator import emulate  # noqa: PLC0415 - heavy, only for CUDA tasks

    return emulate


def setup(state: EmulatorState, msg: dict) -> dict:
    """Make the inputs (the measuring runner's) and the numpy reference outputs."""
    from ..codegen.target import Target  # noqa: PLC0415
    from ..dsl.reference import reference_outputs  # noqa: PLC0415
    from ..dsl.serialize import dag_from_json  # noqa: PLC0415
    from .workers import random_inputs  # noqa: PLC0415

    state.target = Target(msg["target"])
    state.arrays = random_inputs(msg["params"], msg.get("seed", 0))
    state.outputs = list(msg["outputs"])
    state.expected = reference_outputs(dag_from_json(msg["dag"]), state.arrays)
    return {"error_no": 0}


def _differs(got: np.ndarray, want: np.ndarray) -> str:
    if got.dtype.kind == "f":
        tol = 1e-3 if got.dtype in (np.float32, np.float16) else 1e-6
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        if np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True):
            return ""
    elif np.array_equal(got, want):
        return ""
    bad = np.argwhere(~np.isclose(got.astype(float), want.astype(float), equal_nan=True))
    where = tuple(int(i) for i in bad[0]) if len(bad) else ()
    err = float(np.nanmax(np.abs(got.astype(float) - want.astype(float))))
    return f"max abs err {err:g}, first at {where}"


def check(state: EmulatorState, msg: dict, emulate=None) -> dict:
    """Emulate one candidate and compare; {error_no, error_msg} or {error_no 0, program}."""
    from ..codegen.kernel_form import split_kernels  # noqa: PLC0415
    from ..codegen.pipeline import prepare  # noqa: PLC0415
    from ..errors import AnsorLabError  # noqa: PLC0415
    from .workers import rebuild_schedule  # noqa: PLC0415

    if state.target is None:
        return {"error_no": int(ErrorNo.RUNTIME_DEVICE), "error_msg": "emulator not set up"}
    try:
        sch = rebuild_schedule(msg["dag"], msg["trace"])
        program = split_kernels(prepare(sch.mod.main_function(), state.target))
    except AnsorLabError as err:
        return {"error_no": int(ErrorNo.INSTANTIATION_ERROR), "error_msg": str(err)}
    arrays = [a.copy() for a in state.arrays]
    for k in state.outputs:
        arrays[k][...] = 0
    try:
        (emulate or emulator())(program, arrays, check=True)
    except AnsorLabError as err:  # a race, an out-of-bounds access, a divergent barrier
        return {"error_no": int(ErrorNo.RUNTIME_DEVICE), "error_msg": f"emulator: {err}"}
    except Exception:  # noqa: BLE001 - an emulator bug is an error record, not a dead tuner
        return {"error_no": int(ErrorNo.RUNTIME_DEVICE), "error_msg": traceback.format_exc(8)}
    for k in state.outputs:
        why = _differs(arrays[k], state.expected[k])
        if why:
            return {
                "error_no": int(ErrorNo.WRONG_ANSWER),
                "error_msg": f"output {k} differs from the numpy reference on the GPU "
                f"emulator ({why})",
            }
    return {"error_no": 0, "program": pickle.dumps(program)}
