"""The numpy reference evaluator: the oracle every backend is tested against.

Each compute op is evaluated on whole index grids at once (chunked so memory stays
bounded). ``if_then_else`` is lazy here too: each branch is evaluated under a mask, and a
read outside a tensor is an error only where its mask is active, so guarded reads behave
as in compiled code. Integer semantics follow ``expr``'s module docstring.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np

from ..errors import ReferenceEvaluationError
from . import dtypes, expr as E
from .dag import ComputeDAG
from .reference_intrin import call_value
from .scan_reference import bind_inputs, evaluate_with_scans, holds_scan
from .symbolic import Specialization, is_symbolic_tensor, symbolic_ops
from .tensor import ComputeOp, PlaceholderOp, Tensor
from .visitor import EXPR, Visitor

#: Elements evaluated per chunk (grid points, reduction included).
CHUNK_ELEMENTS = 1 << 21


def _np(dtype: str) -> np.dtype:
    return np.dtype(dtype)


def _erf(x: np.ndarray) -> np.ndarray:
    # math.erf is exact; vectorize it (the reference favours exactness over speed)

    out = np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64))
    return out.astype(x.dtype)


def _unary(op: str, x: np.ndarray) -> np.ndarray:
    dt = x.dtype
    if op == "exp":
        return np.exp(x)
    if op == "log":
        return np.log(x)
    if op == "sqrt":
        return np.sqrt(x)
    if op == "rsqrt":
        return (np.ones((), dt) / np.sqrt(x)).astype(dt)
    if op == "tanh":
        return np.tanh(x)
    if op == "sigmoid":
        return (np.ones((), dt) / (np.ones((), dt) + np.exp(-x))).astype(dt)
    if op == "erf":
        return _erf(x)
    if op == "floor":
        return np.floor(x)
    if op == "ceil":
        return np.ceil(x)
    if op == "round":
        return np.round(x)  # half to even, like LLVM's roundeven
    if op == "abs":
        return np.abs(x)
    raise ReferenceEvaluationError(f"no reference for intrinsic {op!r}")


def _saturating_cast(v: np.ndarray, dtype: str) -> np.ndarray:
    """Float -> int as ``dsl.expr`` says: truncate, saturate at the limits, NaN -> 0 (in
    float64, where 2**(bits-1) is exact; numpy's own cast of an out-of-range value is
    undefined)."""
    v = np.trunc(np.asarray(v, dtype=np.float64))
    lo, hi = dtypes.int_range(dtype)
    top = float(2 ** (dtypes.bits(dtype) - 1))
    high, low, nan = v >= top, v < -top, np.isnan(v)
    with np.errstate(invalid="ignore"):
        inside = np.where(high | low | nan, 0.0, v).astype(_np(dtype))
    return np.where(high, hi, np.where(low, lo, inside)).astype(_np(dtype))


def _truncdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.floor_divide(a, b)
    fix = (np.mod(a, b) != 0) & ((a < 0) != (b < 0))
    return np.where(fix, q + 1, q).astype(a.dtype)


class _Evaluator(Visitor):
    """Evaluates an expression on index grids: ``expr_X(e, mask)`` returns an ndarray."""

    # the reference runs compute DAGs, which hold no loop-IR node
    REFUSED_KINDS = MappingProxyType(
        {
            kind: "a loop-IR node; the reference evaluator runs compute DAGs (te), not IR"
            for kind in ("BufferLoad", "Ramp", "Broadcast")
        }
    )
    error_class = ReferenceEvaluationError

    def __init__(self, env: dict, values: dict) -> None:
        self.env = env  # Var -> ndarray (broadcastable)
        self.values = values  # Tensor -> ndarray

    def run(self, e: E.PrimExpr, mask: np.ndarray | None) -> np.ndarray:
        return self.handler(EXPR, e)(e, mask)

    def expr_Var(self, e, mask):
        try:
            return self.env[e]
        except KeyError:
            raise ReferenceEvaluationError(f"unbound variable {e.name!r}") from None

    def expr_IntImm(self, e, mask):
        return np.array(e.value, dtype=_np(e.dtype))

    def expr_FloatImm(self, e, mask):
        return np.array(e.value, dtype=_np(e.dtype))

    def expr_Cast(self, e, mask):
        v = self.run(e.value, mask)
        if dtypes.is_int(e.dtype) and np.issubdtype(v.dtype, np.floating):
            return _saturating_cast(v, e.dtype)
        return v.astype(_np(e.dtype))

    def _binary(self, e, mask):
        return self.run(e.a, mask), self.run(e.b, mask)

    def expr_Add(self, e, mask):
        a, b = self._binary(e, mask)
        return (a + b).astype(_np(e.dtype))

    def expr_Sub(self, e, mask):
        a, b = self._binary(e, mask)
        return (a - b).astype(_np(e.dtype))

    def expr_Mul(self, e, mask):
        a, b = self._binary(e, mask)
        return (a * b).astype(_np(e.dtype))

    def _int_operands(self, e, mask):
        """``a`` and ``b`` of an integer division, ``b`` made safe to divide by: a zero
        divisor on an evaluated lane is an error (``dsl.expr``'s semantics); lanes that
        are masked off, and ``b == -1`` (whose quotient is the negation, wrapping at
        INT_MIN), divide by 1 instead and are fixed by the caller."""
        a, b = self._binary(e, mask)
        zero = b == 0
        active = zero if mask is None else zero & mask
        if np.any(active):
            raise ReferenceEvaluationError(
                f"integer division by zero: the divisor {e.b} is 0 at run time in {e}; "
                "guard it with te.if_then_else(b != 0, a // b, 0)"
            )
        minus_one = b == -1
        safe = np.where(zero | minus_one, np.ones((), b.dtype), b)
        return a, safe, minus_one

    def _negated(self, a, minus_one, q, dtype):
        """``q`` where the divisor was not -1, else ``-a`` (two's complement wrap)."""
        if not np.any(minus_one):
            return q.astype(_np(dtype))
        with np.errstate(over="ignore"):
            neg = (np.zeros((), a.dtype) - a).astype(_np(dtype))
        return np.where(minus_one, neg, q).astype(_np(dtype))

    def expr_Div(self, e, mask):
        if dtypes.is_float(e.dtype):
            a, b = self._binary(e, mask)
            with np.errstate(divide="ignore", invalid="ignore"):
                return (a / b).astype(_np(e.dtype))
        a, b, minus_one = self._int_operands(e, mask)
        return self._negated(a, minus_one, _truncdiv(a, b), e.dtype)

    def expr_Mod(self, e, mask):
        if dtypes.is_float(e.dtype):
            a, b = self._binary(e, mask)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.fmod(a, b).astype(_np(e.dtype))
        a, b, _ = self._int_operands(e, mask)  # x % -1 == x % 1 == 0
        return (a - b * _truncdiv(a, b)).astype(_np(e.dtype))

    def expr_FloorDiv(self, e, mask):
        if dtypes.is_float(e.dtype):
            a, b = self._binary(e, mask)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.floor(a / b).astype(_np(e.dtype))
        a, b, minus_one = self._int_operands(e, mask)
        return self._negated(a, minus_one, np.floor_divide(a, b), e.dtype)

    def expr_FloorMod(self, e, mask):
        if dtypes.is_float(e.dtype):
            a, b = self._binary(e, mask)
            with np.errstate(divide="ignore", invalid="ignore"):
                return (a - np.floor(a / b) * b).astype(_np(e.dtype))
        a, b, _ = self._int_operands(e, mask)
        return np.mod(a, b).astype(_np(e.dtype))

    def expr_Min(self, e, mask):
        a, b = self._binary(e, mask)
        return np.minimum(a, b).astype(_np(e.dtype))

    def expr_Max(self, e, mask):
        a, b = self._binary(e, mask)
        return np.maximum(a, b).astype(_np(e.dtype))

    def expr_EQ(self, e, mask):
        a, b = self._binary(e, mask)
        return a == b

    def expr_NE(self, e, mask):
        a, b = self._binary(e, mask)
        return a != b

    def expr_LT(self, e, mask):
        a, b = self._binary(e, mask)
        return a < b

    def expr_LE(self, e, mask):
        a, b = self._binary(e, mask)
        return a <= b

    def expr_GT(self, e, mask):
        a, b = self._binary(e, mask)
        return a > b

    def expr_GE(self, e, mask):
        a, b = self._binary(e, mask)
        return a >= b

    def expr_And(self, e, mask):
        a, b = self._binary(e, mask)
        return np.logical_and(a, b)

    def expr_Or(self, e, mask):
        a, b = self._binary(e, mask)
        return np.logical_or(a, b)

    def expr_Not(self, e, mask):
        return np.logical_not(self.run(e.a, mask))

    def expr_Select(self, e, mask):
        c = self.run(e.condition, mask)
        t = self.run(e.true_value, mask)
        f = self.run(e.false_value, mask)
        return np.where(c, t, f).astype(_np(e.dtype))

    def expr_Call(self, e, mask):
        if e.op == "if_then_else":
            cond = self.run(e.args[0], mask)
            on = cond if mask is None else np.logical_and(mask, cond)
            off = np.logical_not(cond) if mask is None else np.logical_and(mask, ~cond)
            t = self.run(e.args[1], on)
            f = self.run(e.args[2], off)
            return np.where(cond, t, f).astype(_np(e.dtype))
        if e.op == "pow":
            a, b = (self.run(x, mask) for x in e.args)
            return np.power(a, b).astype(_np(e.dtype))
        args = [np.asarray(self.run(x, mask)) for x in e.args]
        value = call_value(e.op, args, e.dtype)
        if value is not None:
            return value
        return np.asarray(_unary(e.op, args[0])).astype(_np(e.dtype))

    def expr_TensorLoad(self, e, mask):
        data = self.values[e.tensor]
        idx = [np.asarray(self.run(i, mask)).astype(np.int64) for i in e.indices]
        active = None
        if mask is not None and idx:
            *idx, active = np.broadcast_arrays(*idx, np.asarray(mask))
        elif idx:
            idx = list(np.broadcast_arrays(*idx))
        safe = []
        for axis, (ix, extent) in enumerate(zip(idx, data.shape)):
            bad = (ix < 0) | (ix >= extent)
            if active is not None:
                bad = bad & active
            if bad.any():
                where = np.argwhere(bad)[0]
                raise ReferenceEvaluationError(
                    f"read of {e.tensor.name!r} out of range: index {int(ix[tuple(where)])} "
                    f"on dimension {axis} of extent {extent} (guard it with te.if_then_else)"
                )
            safe.append(np.where(active, ix, 0) if active is not None else ix)
        return data[tuple(safe)]

    def expr_Reduce(self, e, mask):
        raise ReferenceEvaluationError("a reduction must be the top of a compute body")


def _tuple_reduce(e: E.Reduce, ev: _Evaluator, grid_shape: tuple) -> np.ndarray:
    """A tuple reducer folded over the reduction points in loop order (as the loops run)."""
    comb = e.combiner
    cond = None
    if e.condition is not None:
        cond = np.broadcast_to(ev.run(e.condition, None), grid_shape)
    srcs = [np.broadcast_to(ev.run(s, cond), grid_shape) for s in e.source.args]
    n = grid_shape[0]
    acc = [np.full(n, ev.run(v, None), _np(v.dtype)) for v in comb.identities]
    for r in range(grid_shape[1]):
        env = dict(zip(comb.lhs, acc))
        env.update(zip(comb.rhs, (s[:, r] for s in srcs)))
        step = _Evaluator(env, ev.values)
        new = [
            np.broadcast_to(step.run(x, None), (n,)).astype(a.dtype)
            for x, a in zip(comb.results, acc)
        ]
        if cond is not None:
            new = [np.where(cond[:, r], x, a) for x, a in zip(new, acc)]
        acc = new
    return acc[comb.index]


def _reduce(e: E.Reduce, ev: _Evaluator, grid_shape: tuple) -> np.ndarray:
    if not isinstance(e.combiner, str):
        return _tuple_reduce(e, ev, grid_shape)
    cond = None
    if e.condition is not None:
        cond = np.broadcast_to(ev.run(e.condition, None), grid_shape)
    src = np.broadcast_to(ev.run(e.source, cond), grid_shape)
    dt = _np(e.dtype)
    if e.combiner == "sum":
        ident = np.zeros((), dt)
        data = src if cond is None else np.where(cond, src, ident)
        return data.sum(axis=1, dtype=dt)
    if e.combiner == "max":
        ident = np.array(dtypes.min_value(e.dtype), dt)
        data = src if cond is None else np.where(cond, src, ident)
        return data.max(axis=1, initial=ident)
    ident = np.array(dtypes.max_value(e.dtype), dt)
    data = src if cond is None else np.where(cond, src, ident)
    return data.min(axis=1, initial=ident)


def _eval_compute(op: ComputeOp, values: dict) -> np.ndarray:
    shape = op.shape
    body = op.body[0]
    total = int(np.prod(shape))
    red_axes = list(op.reduce_axis)
    red_extents = [int(a.dom.extent) for a in red_axes]
    red_total = int(np.prod(red_extents)) if red_axes else 1
    out = np.empty(total, dtype=_np(op.dtype))
    chunk = max(1, CHUNK_ELEMENTS // red_total)
    red_index = np.unravel_index(np.arange(red_total), red_extents) if red_axes else ()
    with np.errstate(all="ignore"):
        for start in range(0, total, chunk):
            flat = np.arange(start, min(total, start + chunk))
            spatial = np.unravel_index(flat, shape) if shape else ()
            env = {}
            for iv, ix in zip(op.axis, spatial):
                env[iv.var] = ix.astype(np.int32).reshape(-1, 1)
            for iv, ix in zip(red_axes, red_index):
                env[iv.var] = (ix + int(iv.dom.min)).astype(np.int32).reshape(1, -1)
            ev = _Evaluator(env, values)
            if isinstance(body, E.Reduce):
                result = _reduce(body, ev, (len(flat), red_total))
            else:
                result = np.broadcast_to(ev.run(body, None), (len(flat), 1))[:, 0]
            out[flat] = result
    return out.reshape(shape)


def evaluate(
    tensors: Sequence[Tensor] | ComputeDAG,
    inputs: Mapping[Tensor, np.ndarray] | Sequence[np.ndarray],
) -> dict[Tensor, np.ndarray]:
    """Evaluate every op of a DAG with numpy.

    ``inputs`` maps each placeholder tensor to an array (or lists arrays in the DAG's
    placeholder order). Returns a dict from every tensor of the DAG to its value. A DAG
    with shape variables (``te.var`` dims) takes them from the input arrays' shapes.
    """
    if not isinstance(tensors, ComputeDAG) and any(map(is_symbolic_tensor, tensors)):
        return _evaluate_symbolic(list(tensors), inputs)
    if not isinstance(tensors, ComputeDAG) and holds_scan(list(tensors)):
        return evaluate_with_scans(list(tensors), inputs, _eval_compute, _np)
    dag = tensors if isinstance(tensors, ComputeDAG) else ComputeDAG(tensors)
    placeholders = [op.output(0) for op in dag.placeholders]
    values = bind_inputs(placeholders, inputs, _np)
    for op in dag.compute_ops:
        values[op.output(0)] = _eval_compute(op, values)
    return values


def reference_outputs(args: Sequence[Tensor], arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Given a kernel's argument list and arrays for its inputs, the expected value of each arg.

    ``arrays`` lines up with ``args``; entries for computed tensors are ignored.
    """
    inputs = {t: a for t, a in zip(args, arrays) if isinstance(t.op, PlaceholderOp)}
    values = evaluate(list(args), inputs)
    return [values[t] for t in args]


def _evaluate_symbolic(tensors: list, inputs: object) -> dict:
    """``evaluate`` of a symbolic DAG: bind its variables from the inputs, specialize."""
    if not isinstance(inputs, Mapping):
        raise ReferenceEvaluationError(
            "a DAG with shape variables takes its inputs as a dict {A: array, ...}"
        )
    binding: dict = {}
    for t, arr in inputs.items():
        for d, size in zip(t.shape, np.shape(arr)):
            if isinstance(d, E.Var) and binding.setdefault(d, size) != size:
                raise ReferenceEvaluationError(
                    f"shape variable {d.name!r} is {binding[d]} in one input and {size} in "
                    f"{t.name!r}; arrays sharing it must agree"
                )
    spec = Specialization(binding)
    concrete = evaluate(
        [spec.tensor(t) for t in tensors], {spec.tensor(t): a for t, a in inputs.items()}
    )
    out = {t: concrete[spec.tensor(t)] for t in inputs}
    for op in symbolic_ops(tensors):
        out[op.output(0)] = concrete[spec.tensor(op.output(0))]
    return out
