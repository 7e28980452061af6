"""The numpy reference of a DAG holding ``te.scan``s: the recurrence run step by step.

Ops outside every scan's cell are evaluated once, in topological order; at each time step
``t`` of a scan, each op of its cell (``scan.scan_cell_ops``) is evaluated at its row
``t`` only (dimension 0 is the time axis, as in TVM), with the state placeholders bound to
the rows computed so far, and each update's row ``t`` is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..errors import ReferenceEvaluationError
from . import expr as E
from .dag import topo_order
from .scan import ScanOp, scan_cell_ops, scan_group, with_companions
from .tensor import ComputeOp, PlaceholderOp, Tensor


def holds_scan(tensors: Sequence[Tensor]) -> bool:
    """Whether a ``te.scan`` is among the ops behind ``tensors``."""
    return any(isinstance(op, ScanOp) for op in topo_order(tensors))


def bind_inputs(
    placeholders: list[Tensor],
    inputs: Mapping[Tensor, np.ndarray] | Sequence[np.ndarray],
    as_dtype: Callable,
) -> dict[Tensor, np.ndarray]:
    """Each placeholder's array, checked: ``inputs`` maps them, or lists them in order."""
    if not isinstance(inputs, Mapping):
        arrays = list(inputs)
        if len(arrays) != len(placeholders):
            raise ReferenceEvaluationError(
                f"expected {len(placeholders)} input arrays "
                f"({', '.join(t.name for t in placeholders)}), got {len(arrays)}"
            )
        inputs = dict(zip(placeholders, arrays))
    values: dict[Tensor, np.ndarray] = {}
    for t in placeholders:
        if t not in inputs:
            raise ReferenceEvaluationError(f"no input array for placeholder {t.name!r}")
        arr = np.asarray(inputs[t])
        if arr.shape != t.shape:
            raise ReferenceEvaluationError(
                f"input {t.name!r} has shape {arr.shape}, expected {t.shape}"
            )
        values[t] = arr.astype(as_dtype(t.dtype), copy=False)
    return values


def evaluate_with_scans(
    tensors: Sequence[Tensor],
    inputs: Mapping[Tensor, np.ndarray] | Sequence[np.ndarray],
    eval_compute: Callable,
    as_dtype: Callable,
) -> dict[Tensor, np.ndarray]:
    """``reference.evaluate`` for a DAG with scans (``eval_compute(op, values)`` computes
    one op; ``as_dtype(dtype)`` is its numpy dtype)."""
    first = topo_order(tensors)
    ops = topo_order(with_companions(list(tensors), first))
    drivers = [op for op in ops if isinstance(op, ScanOp) and op.is_driver]
    states = {id(s.state_placeholder[0].op) for d in drivers for s in scan_group(d)}
    in_cell = {id(op) for d in drivers for op in scan_cell_ops(d)}
    placeholders = [
        op.output(0) for op in ops if isinstance(op, PlaceholderOp) and id(op) not in states
    ]
    values = bind_inputs(placeholders, inputs, as_dtype)
    for op in ops:
        if isinstance(op, PlaceholderOp) or id(op) in in_cell:
            continue
        if isinstance(op, ScanOp):
            if op.is_driver:
                _run_scan(op, values, eval_compute, as_dtype)
            continue
        values[op.output(0)] = eval_compute(op, values)
    return values


def _run_scan(driver: ScanOp, values: dict, eval_compute: Callable, as_dtype: Callable) -> None:
    group = scan_group(driver)
    lo = int(driver.scan_axis.dom.min)
    hi = lo + driver.num_steps
    arrays = []
    for op in group:
        arr = np.zeros(tuple(int(d) for d in op.shape), as_dtype(op.dtype))
        arr[:lo] = values[op.init[0]]
        arrays.append(arr)
    cell = scan_cell_ops(driver)
    local = dict(values)
    for t in range(lo, hi):
        local = dict(values)
        for op, arr in zip(group, arrays):
            local[op.state_placeholder[0]] = arr
        for op in cell:
            local[op.output(0)] = _at_row(op, t, local, eval_compute, as_dtype)
        for op, arr in zip(group, arrays):
            arr[t] = local[op.update[0]][t]
    for op, arr in zip(group, arrays):
        values[op.output(0)] = arr
        values[op.state_placeholder[0]] = arr
    for op in cell:  # what the last step computed (a cell's value depends on the step)
        values[op.output(0)] = local[op.output(0)]


def _at_row(op, t: int, local: dict, eval_compute: Callable, as_dtype: Callable) -> np.ndarray:
    """``op`` evaluated at row ``t`` of dimension 0, in an array of its whole shape."""
    first = op.axis[0]
    row_axis = E.IterVar(first.var, E.Range.of(0, 1), first.kind)
    body = E.substitute(op.body[0], {first.var: E.Add(first.var, E.IntImm(t), "int32")})
    one_row = ComputeOp(op.name, (row_axis, *op.axis[1:]), op.reduce_axis, (body,), op.tag)
    out = np.zeros(tuple(int(d) for d in op.shape), as_dtype(op.dtype))
    out[t] = eval_compute(one_row, local)[0]
    return out
