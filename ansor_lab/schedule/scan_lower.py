"""Lowering a ``te.scan`` (``dsl.scan``): one buffer per state, the cell in the time loop.

Each state's init, update and state placeholder are the scan output's buffer, written and
read at absolute indices (the init's rows first, then the update's row ``t`` at each step,
reading earlier rows through the placeholder), as TVM's ``SchedulePostProc`` makes them.
The driver's stage emits only its time loop; the cell stages are attached at it (they
start there, ``state.attach_scan_cells``), so bound inference gives each update the one
row a step writes and each intermediate of the cell what that row needs:

    for i in range(n):                       # init, before the loop
        scan[0, i] = X[0, i]
    for scan_idx in range(m - 1):            # the driver: t = scan_idx + 1
        for i in range(n):                   # the update, at row t
            scan[scan_idx + 1, i] = scan[scan_idx, i] + X[scan_idx + 1, i]
"""

from __future__ import annotations

from ..dsl.scan import ScanOp, scan_aliases, scan_cell_ops, scan_group
from ..errors import LoweringError
from ..ir import nodes as N
from .state import Inline, Stage


def scan_drivers(stages: list[Stage]) -> list[Stage]:
    """The stages that own a scan's time loop."""
    return [s for s in stages if isinstance(s.op, ScanOp) and s.op.is_driver]


def alias_scan_buffers(lowerer) -> list[N.Buffer]:
    """Point every tensor of each scan at its output's buffer (``lowerer.arg_buffer``);
    returns the buffers of scan outputs that are not function arguments, which the
    function allocates at its top level. Records the names written in place."""
    temporaries = []
    lowerer.scan_written = set()
    for st in scan_drivers(lowerer.stages):
        for op in scan_group(st.op):
            if op.name not in lowerer.arg_buffer:
                buf = N.Buffer(op.name, tuple(int(d) for d in op.shape), op.dtype)
                lowerer.arg_buffer[op.name] = buf
                temporaries.append(buf)
        for name, owner in scan_aliases(st.op).items():
            if name in lowerer.arg_buffer and name != owner:
                raise LoweringError(
                    f"tensor {name!r} of scan {owner!r} is in the argument list; it is the "
                    f"scan's output buffer, pass {owner!r} instead"
                )
            lowerer.arg_buffer[name] = lowerer.arg_buffer[owner]
            lowerer.scan_written.add(name)
    return temporaries


def check_scan_schedule(lowerer) -> None:
    """The driver's time loop is untouched and every cell stage runs inside it."""
    for st in scan_drivers(lowerer.stages):
        time_loop = st.op.scan_axis.var.name
        if st.leaves[:1] != [time_loop] or st.relations or not st.is_root:
            raise LoweringError(
                f"scan {st.name!r}: its time loop cannot be scheduled (split, reorder, "
                "compute_at...); schedule the stages of its init and update instead"
            )
        if st.annotations.get(time_loop) is not None:
            raise LoweringError(
                f"scan {st.name!r}: the time loop runs its steps in order; it cannot be "
                "parallel, vectorized, unrolled or bound to a thread"
            )
        updates = {id(o.update[0].op) for o in scan_group(st.op)}
        for op in scan_cell_ops(st.op):
            cell = lowerer.by_name.get(op.name)
            if cell is None:
                continue
            if isinstance(cell.attach, Inline) and id(op) in updates:
                raise LoweringError(
                    f"scan {st.name!r}: its update {cell.name!r} cannot be inlined (it "
                    "writes the scan's rows)"
                )
            if not isinstance(cell.attach, Inline) and lowerer.chain_to(cell, st) is None:
                raise LoweringError(
                    f"stage {cell.name!r} reads the state of scan {st.name!r}, so it must be "
                    f"computed inside the scan's time loop (at {st.name}.{time_loop} or "
                    "inside another stage of the scan's cell), not at root"
                )


def emit_scan(lowerer, stage: Stage) -> N.Stmt:
    """The driver's time loop with the cell inside; a companion state emits nothing."""
    if not stage.op.is_driver or stage.op.num_steps == 0:
        return N.seq()  # a companion, or an init that fills the whole state
    leaf = stage.leaves[0]
    inner = lowerer.with_attached(stage, leaf, N.seq())
    return N.Block(stage.name, lowerer.loop(stage, leaf, inner))
