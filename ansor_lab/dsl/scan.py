"""``te.scan``: a recurrence over the outermost axis (TVM's "Scan and Recurrent Kernel").

    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])
    s_scan = te.scan(s_init, s_update, s_state, inputs=[X])       # cumsum over rows

Rows ``0 .. L-1`` of the result are ``init`` (``L`` = its first dimension); for each time
step ``t = L .. m-1`` in order, row ``t`` is ``update``'s row ``t``, which may read rows
before ``t`` of the state placeholder. As in TVM, the init, the update and the state
placeholder are one buffer, the scan's output, and the update (with every stage between it
and the state placeholder, the scan's *cell*) runs inside a serial loop over the time
steps, one row per iteration; each cell stage keeps its own schedule (split, bind,
compute_at inside the cell).

A ``ScanOp`` is a ``ComputeOp`` to the rest of the library, so schedules, bound inference
and lowering treat it as a stage: its axis is the time axis ``t`` (from ``L`` to ``m``)
and its body *describes* what one time step needs, a read of every update's row ``t``
over reduction axes spanning the row (so bound inference gives each update exactly that
row). The body is never computed: lowering emits the time loop with the cell inside it
(``schedule.lower``). With several states (``te.scan([init1, init2], ...)``) the first
state's op drives the loop and the others (``scan_v1``...) are companions that only name
their output buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import DSLError
from . import expr as E
from .symbolic import SymbolicComputeOp, is_symbolic_dim, is_symbolic_tensor
from .tensor import ComputeOp, PlaceholderOp, Tensor, _tensors_read


@dataclass(eq=False)
class ScanOp(ComputeOp):
    """One state of a ``te.scan``: ``init``, ``update`` and ``state_placeholder`` of that
    state, the scan's ``inputs``, and ``driver`` (the op of the first state, which owns the
    time loop; ``None`` on that op itself)."""

    init: tuple = ()
    update: tuple = ()
    state_placeholder: tuple = ()
    inputs: tuple = ()
    driver: ScanOp | None = None
    group_inits: tuple = ()  # the driver: every state's init (all run before the loop)

    def __post_init__(self) -> None:
        state = self.state_placeholder[0]
        self._output = Tensor(self, 0, state.shape, state.dtype)
        # producers: the init (computed before the loop) and the update (inside it); the
        # driver's body reads every state's update, a companion follows its driver
        reads = [t for t in _tensors_read(self.body[0]) if t is not self.update[0]]
        after = [] if self.driver is None else [self.driver.output(0)]
        inits = [t for t in self.group_inits if t is not self.init[0]]
        self._inputs = (*self.init, *inits, *self.update, *reads, *after)

    __hash__ = ComputeOp.__hash__
    __eq__ = ComputeOp.__eq__

    @property
    def scan_axis(self) -> E.IterVar:
        """The time axis: from the init's length to the state's first dimension."""
        return self.axis[0]

    @property
    def num_steps(self) -> int:
        """Time steps the loop runs: the state's rows after the init's (0 when the init
        fills the state; the time axis still spans one step, which is never run)."""
        return int(self.state_placeholder[0].shape[0]) - int(self.init[0].shape[0])

    @property
    def is_driver(self) -> bool:
        """True for the op that owns the time loop (the first state's)."""
        return self.driver is None

    def __repr__(self) -> str:
        return f"scan({self.name}, {self.shape}, {self.dtype})"


class SymbolicScanOp(ScanOp, SymbolicComputeOp):
    """A scan over tensors with shape variables: specialized like any symbolic compute."""

    def __post_init__(self) -> None:
        ScanOp.__post_init__(self)

    def group_outputs(self) -> list[Tensor]:
        """The output of every state of this scan, the driver's first."""
        return [op.output(0) for op in scan_group(self)]

    def specialized_group(self, spec) -> list[Tensor]:
        """The concrete scan of ``spec`` (a ``symbolic.Specialization``): every state's
        output, in ``group_outputs`` order."""
        group = scan_group(self)
        driver = group[0]
        outs = scan(
            [spec.tensor(op.init[0]) for op in group],
            [spec.tensor(op.update[0]) for op in group],
            [spec.tensor(op.state_placeholder[0]) for op in group],
            [spec.tensor(t) for t in driver.inputs],
            driver.name,
            driver.tag,
            dict(driver.attrs),
        )
        return outs if isinstance(outs, list) else [outs]


def scan_group(op: ScanOp) -> list[ScanOp]:
    """Every state's op of the scan ``op`` belongs to, the driver first."""
    driver = op if op.driver is None else op.driver
    return [driver, *getattr(driver, "_companions", ())]


def _as_list(x: object, what: str) -> list:
    items = list(x) if isinstance(x, (list, tuple)) else [x]
    if not items or not all(isinstance(t, Tensor) for t in items):
        raise DSLError(f"te.scan: {what} must be a tensor or a list of tensors, got {x!r}")
    return items


def _check_state(k: int, init: Tensor, update: Tensor, state: Tensor) -> None:
    where = f"te.scan state {k}"
    if not isinstance(state.op, PlaceholderOp):
        raise DSLError(
            f"{where}: the state must be a te.placeholder standing for the scan's result "
            f"(got {state.name!r}, a computed tensor)"
        )
    if len(update.shape) != len(state.shape) or len(init.shape) != len(state.shape):
        raise DSLError(
            f"{where}: init {tuple(init.shape)}, update {tuple(update.shape)} and state "
            f"{tuple(state.shape)} must have the same number of dimensions"
        )
    if not len(state.shape):
        raise DSLError(f"{where}: the state needs at least one dimension (the time axis)")
    for d in range(len(state.shape)):
        dims = (update.shape[d], state.shape[d]) + ((init.shape[d],) if d else ())
        if not _same_dims(dims):
            raise DSLError(
                f"{where}: dimension {d} differs between init {tuple(init.shape)}, update "
                f"{tuple(update.shape)} and state {tuple(state.shape)} (only the time axis, "
                "dimension 0, may be shorter in the init)"
            )
    if len({init.dtype, update.dtype, state.dtype}) != 1:
        raise DSLError(
            f"{where}: init ({init.dtype}), update ({update.dtype}) and state "
            f"({state.dtype}) must have one dtype"
        )


def _same_dims(dims: tuple) -> bool:
    first = dims[0]
    for d in dims[1:]:
        if is_symbolic_dim(first) or is_symbolic_dim(d):
            if not E.structural_equal(E.as_expr(first), E.as_expr(d)):
                return False
        elif int(first) != int(d):
            return False
    return True


def scan(
    init: object,
    update: object,
    state_placeholder: object,
    inputs: object = None,
    name: str = "scan",
    tag: str = "",
    attrs: dict | None = None,
) -> Tensor | list[Tensor]:
    """TVM's ``te.scan``: a tensor (one state) or a list (several) computed by recurrence.

    ``init`` gives the first rows, ``update`` row ``t`` from the earlier rows of
    ``state_placeholder``; lists give several states updated in the same time loop. The
    time loop runs over dimension 0 from the init's length (the same for every state) to
    the state's length.
    """
    inits = _as_list(init, "init")
    updates = _as_list(update, "update")
    states = _as_list(state_placeholder, "state_placeholder")
    if not len(inits) == len(updates) == len(states):
        raise DSLError(
            f"te.scan: {len(inits)} init, {len(updates)} update and {len(states)} state "
            "tensors; give one of each per state"
        )
    extra = [] if inputs is None else _as_list(inputs, "inputs")
    for k, (i, u, s) in enumerate(zip(inits, updates, states)):
        _check_state(k, i, u, s)
    if not _same_dims(tuple(i.shape[0] for i in inits)) or not _same_dims(
        tuple(s.shape[0] for s in states)
    ):
        raise DSLError("te.scan: every state must have the same time axis (dimension 0)")
    symbolic = any(is_symbolic_tensor(t) for t in [*inits, *updates, *states, *extra])
    cls = SymbolicScanOp if symbolic else ScanOp
    steps_from, steps_to = inits[0].shape[0], states[0].shape[0]
    if not symbolic and int(steps_from) > int(steps_to):
        raise DSLError(
            f"te.scan: the init has {int(steps_from)} rows, more than the state's {int(steps_to)}"
        )
    ops = []
    for k in range(len(states)):
        op_name = name if k == 0 else f"{name}_v{k}"
        ops.append(
            make_scan_op(
                cls,
                op_name,
                (inits[k],),
                (updates[k],),
                (states[k],),
                tuple(extra),
                None if k == 0 else ops[0],
                tag,
                dict(attrs or {}),
                all_updates=updates,
                all_inits=inits,
            )
        )
    ops[0]._companions = tuple(ops[1:])
    outs = [op.output(0) for op in ops]
    return outs[0] if len(outs) == 1 else outs  # as TVM: one state, one tensor


def make_scan_op(
    cls: type,
    name: str,
    init: tuple,
    update: tuple,
    state: tuple,
    inputs: tuple,
    driver: ScanOp | None,
    tag: str,
    attrs: dict,
    all_updates: Sequence[Tensor],
    all_inits: Sequence[Tensor],
) -> ScanOp:
    """A scan op: its time axis and the body describing one step's reads (module doc)."""
    lo, hi = init[0].shape[0], state[0].shape[0]
    lo_e = E.as_expr(lo if is_symbolic_dim(lo) else int(lo))
    hi_e = E.as_expr(hi if is_symbolic_dim(hi) else int(hi))
    if isinstance(lo_e, E.IntImm) and isinstance(hi_e, E.IntImm):
        extent: E.PrimExpr = E.IntImm(max(1, hi_e.value - lo_e.value))
    else:
        extent = hi_e - lo_e
    t = E.IterVar(E.Var(f"{name}_idx"), E.Range(lo_e, extent), "spatial")
    if driver is not None:
        body: E.PrimExpr = E.FloatImm(0.0, "float32")  # companions read nothing
        red: tuple = ()
    else:
        loads, red_list = [], []
        for k, u in enumerate(all_updates):
            idx = [t.var]
            for d, size in enumerate(u.shape[1:]):
                ext = E.as_expr(size if is_symbolic_dim(size) else int(size))
                r = E.IterVar(E.Var(f"{name}_s{k}_{d}"), E.Range(E.IntImm(0), ext), "reduce")
                red_list.append(r)
                idx.append(r.var)
            loads.append(E.Cast(u[tuple(idx)], "float32"))
        src = loads[0]
        for x in loads[1:]:
            src = E.Add(src, x, "float32")
        red = tuple(red_list)
        body = E.Reduce("sum", src, red, None, "float32") if red else src
    group_inits = tuple(all_inits) if driver is None else ()
    return cls(
        name, (t,), red, (body,), tag, attrs, init, update, state, inputs, driver, group_inits
    )


def scan_cell_ops(driver: ScanOp) -> list[ComputeOp]:
    """The ops computed inside the time loop of the scan ``driver`` drives: every update
    and every op between an update and a state placeholder (it reads the state, so it
    changes each step), producers first. Ops that read no state are computed once, before
    the loop, as in TVM."""
    group = scan_group(driver)
    states = {id(op.state_placeholder[0].op) for op in group}
    stop = states | {id(t.op) for t in driver.inputs}
    reads_state: dict[int, bool] = {}
    order: list[ComputeOp] = []

    def visit(op: object) -> bool:
        if id(op) in reads_state:
            return reads_state[id(op)]
        if id(op) in stop or not isinstance(op, ComputeOp):
            return id(op) in states
        reads_state[id(op)] = False  # no cycles in a DAG; guards a malformed one
        hit = False
        for t in op.input_tensors:
            hit = visit(t.op) or hit
        reads_state[id(op)] = hit
        if hit:
            order.append(op)
        return hit

    for op in group:
        u = op.update[0].op
        visit(u)
        if u not in order and isinstance(u, ComputeOp):
            order.append(u)
    return order


def scan_aliases(driver: ScanOp) -> dict[str, str]:
    """Tensor name -> the scan output whose buffer it is: each state's init, update and
    state placeholder are written and read in the scan's output buffer (TVM does the same)."""
    out: dict[str, str] = {}
    for op in scan_group(driver):
        for t in (op.init[0], op.update[0], op.state_placeholder[0]):
            out[t.op.name] = op.name
    return out


def with_companions(tensors: Sequence[Tensor], ops: Sequence[object]) -> list[Tensor]:
    """``tensors`` plus the outputs of every scan companion whose driver is in ``ops`` (a
    schedule of the first state computes them all, as TVM's one scan op does)."""
    out = list(tensors)
    for op in ops:
        if isinstance(op, ScanOp) and op.is_driver:
            out.extend(c.output(0) for c in scan_group(op)[1:] if c.output(0) not in out)
    return out


def rebuilt_scan(op: ScanOp, name: str, body: E.PrimExpr, new_tensor, new_ops: dict) -> ScanOp:
    """``op`` renamed to ``name`` over renamed tensors (``new_tensor``: old -> new tensor;
    ``new_ops``: id(old op) -> new op, the driver's already there)."""
    driver = None if op.driver is None else new_ops.get(id(op.driver), op.driver)
    new = type(op)(
        name,
        op.axis,
        op.reduce_axis,
        (body,),
        op.tag,
        dict(op.attrs),
        (new_tensor(op.init[0]),),
        (new_tensor(op.update[0]),),
        (new_tensor(op.state_placeholder[0]),),
        tuple(new_tensor(t) for t in op.inputs),
        driver,
        tuple(new_tensor(t) for t in op.group_inits),
    )
    if driver is not None:
        driver._companions = (*getattr(driver, "_companions", ()), new)
    else:
        new._companions = ()
    return new


def refuse_scan(ops: Sequence[object], what: str) -> None:
    """Raise DSLError naming ``what`` when ``ops`` hold a ``te.scan``."""
    for op in ops:
        if isinstance(op, ScanOp):
            raise DSLError(
                f"{what} does not take te.scan ({op.name!r}): its steps run one after "
                "another in a time loop the search has no rules for. Schedule the scan by "
                "hand with te.create_schedule (split and bind its init and update stages), or "
                "for a running sum / product use topi.cumsum / topi.cumprod, which tune"
            )
