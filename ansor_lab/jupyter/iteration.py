"""Iteration-order pictures: in which order a loop nest visits the elements of a tensor.

The lowered program is executed symbolically in Python (only its loops, guards and store
indices; no values are computed): every store to the block's buffer is one step, a
vectorized loop runs its body once with all lanes at a time (its lanes share a step), and
each element gets the rank of the step that first wrote it. This is Halide's lesson-05
picture, computed from the IR itself, so it is right for any schedule: split, reorder,
tile, fuse, vectorize, compute_at.

``visit_order(sch, block="C")`` gives the numbers, ``iteration_order(...)`` an animated
plotly heatmap, ``iteration_order_svg(...)`` a static SVG (no browser or kaleido needed).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..dsl import expr as E
from ..errors import AnsorLabError
from ..ir import nodes as N

#: Largest number of store events simulated before giving up (use smaller shapes).
MAX_EVENTS = 200_000


class IterationOrderError(AnsorLabError, ValueError):
    """The iteration order cannot be computed (unknown block, program too large...)."""


@dataclass
class IterationOrder:
    """First-visit rank of every element of a buffer (-1: never written), as a 2-D grid.

    ``order`` has the buffer's shape folded to 2-D (leading dimensions flattened into
    rows); ``events`` lists, per step, the flat element indices it wrote; ``first_step``
    is, per element, the raw step number of its first write.
    """

    buffer: str
    block: str | None
    shape: tuple
    order: np.ndarray
    first_step: np.ndarray
    events: list = field(repr=False)
    vector_steps: int = 0

    @property
    def steps(self) -> int:
        """Number of store steps (a vector store of all lanes is one step)."""
        return len(self.events)

    @property
    def visits(self) -> int:
        """Number of distinct first-visit steps (the largest rank + 1)."""
        return int(self.order.max()) + 1 if self.order.size and self.order.max() >= 0 else 0

    def __str__(self) -> str:
        width = max(2, len(str(self.visits)))
        rows = [" ".join(f"{v:>{width}d}" for v in row) for row in self.order]
        head = f"visit order of {self.buffer}" + (f" in block {self.block!r}" if self.block else "")
        return head + "\n" + "\n".join(rows)


def _as_func(obj: Any, args: Any = None) -> N.PrimFunc:
    """The PrimFunc of a tir.Schedule, PrimFunc, IRModule or TE schedule (+ args)."""
    if isinstance(obj, N.PrimFunc):
        return obj
    if isinstance(obj, N.IRModule):
        return obj.main_function()
    if hasattr(obj, "mod") and hasattr(obj, "trace"):  # tir.Schedule
        return obj.mod.main_function()
    from ..runtime.build import lower

    mod = lower(obj, args)
    return next(iter(mod.functions.values()))


class _Sim:
    """Executes loops, lets, guards and stores of a PrimFunc over integer environments."""

    def __init__(self, block: str | None, buffer: N.Buffer | None, max_events: int) -> None:
        self.block = block
        self.buffer = buffer
        self.max_events = max_events
        self.events: list[np.ndarray] = []
        self.vector_steps = 0

    # -- expressions ------------------------------------------------------------------
    def ev(self, e: Any, env: dict) -> Any:
        if isinstance(e, E.Var):
            try:
                return env[e]
            except KeyError:
                raise IterationOrderError(f"unbound variable {e.name!r} in the program") from None
        if isinstance(e, (E.IntImm, E.FloatImm)):
            return e.value
        if isinstance(e, E.Cast):
            v = self.ev(e.value, env)
            return np.asarray(v).astype(np.int64) if "int" in e.dtype else v
        if isinstance(e, N.Ramp):
            base = self.ev(e.base, env)
            return base + self.ev(e.stride, env) * np.arange(e.lanes)
        if isinstance(e, N.Broadcast):
            return self.ev(e.value, env)
        if isinstance(e, E.BinaryOp):
            a, b = self.ev(e.a, env), self.ev(e.b, env)
            if isinstance(e, E.Add):
                return a + b
            if isinstance(e, E.Sub):
                return a - b
            if isinstance(e, E.Mul):
                return a * b
            if isinstance(e, E.FloorDiv):
                return np.floor_divide(a, b)
            if isinstance(e, E.FloorMod):
                return np.mod(a, b)
            if isinstance(e, E.Div):
                return np.trunc(np.divide(a, b)).astype(np.int64)
            if isinstance(e, E.Mod):
                return a - b * np.trunc(np.divide(a, b)).astype(np.int64)
            if isinstance(e, E.Min):
                return np.minimum(a, b)
            if isinstance(e, E.Max):
                return np.maximum(a, b)
        if isinstance(e, E.CmpOp):
            a, b = self.ev(e.a, env), self.ev(e.b, env)
            ops = {
                E.EQ: np.equal,
                E.NE: np.not_equal,
                E.LT: np.less,
                E.LE: np.less_equal,
                E.GT: np.greater,
                E.GE: np.greater_equal,
            }
            return ops[type(e)](a, b)
        if isinstance(e, E.And):
            return np.logical_and(self.ev(e.a, env), self.ev(e.b, env))
        if isinstance(e, E.Or):
            return np.logical_or(self.ev(e.a, env), self.ev(e.b, env))
        if isinstance(e, E.Not):
            return np.logical_not(self.ev(e.a, env))
        if isinstance(e, E.Select):
            return np.where(
                self.ev(e.condition, env), self.ev(e.true_value, env), self.ev(e.false_value, env)
            )
        if isinstance(e, E.Call) and e.op == "if_then_else":
            return np.where(*(self.ev(a, env) for a in e.args))
        # a data-dependent value (a load, a math call): unknown here, so not a guard
        return True

    # -- statements -------------------------------------------------------------------
    def run(self, s: N.Stmt, env: dict, block: str | None, mask: Any) -> None:
        if isinstance(s, N.SeqStmt):
            for x in s.seq:
                self.run(x, env, block, mask)
        elif isinstance(s, N.Block):
            self.run(s.body, env, s.name, mask)
        elif isinstance(s, N.For):
            lo = self.ev(s.min, env)
            extent = self.ev(s.extent, env)
            if np.ndim(lo) or np.ndim(extent):  # a loop whose bounds vary across lanes
                lo, extent = int(np.min(lo)), int(np.max(extent))
            lo, extent = int(lo), int(extent)
            if s.kind == "vectorized" and mask is None and extent > 1:
                inner = dict(env)
                inner[s.loop_var] = np.arange(lo, lo + extent, dtype=np.int64)
                self.vector_steps += 1
                self.run(s.body, inner, block, np.ones(extent, dtype=bool))
                return
            inner = dict(env)
            for v in range(lo, lo + extent):
                inner[s.loop_var] = v
                self.run(s.body, inner, block, mask)
        elif isinstance(s, N.LetStmt):
            inner = dict(env)
            inner[s.var] = self.ev(s.value, env)
            self.run(s.body, inner, block, mask)
        elif isinstance(s, N.IfThenElse):
            cond = self.ev(s.condition, env)
            if np.ndim(cond):
                m = np.broadcast_to(cond, np.shape(mask) if mask is not None else np.shape(cond))
                on = m if mask is None else np.logical_and(mask, m)
                off = ~m if mask is None else np.logical_and(mask, ~m)
                if on.any():
                    self.run(s.then_case, env, block, on)
                if s.else_case is not None and off.any():
                    self.run(s.else_case, env, block, off)
            elif cond:
                self.run(s.then_case, env, block, mask)
            elif s.else_case is not None:
                self.run(s.else_case, env, block, mask)
        elif isinstance(s, N.Allocate):
            self.run(s.body, env, block, mask)
        elif isinstance(s, N.BufferStore):
            self.store(s, env, block, mask)

    def store(self, s: N.BufferStore, env: dict, block: str | None, mask: Any) -> None:
        if self.block is not None and block != self.block:
            return
        if self.buffer is None:
            self.buffer = s.buffer
        if s.buffer is not self.buffer:
            return
        idx = [np.asarray(self.ev(i, env), dtype=np.int64) for i in s.indices]
        if mask is not None:
            idx = list(np.broadcast_arrays(*idx, mask))
            keep = idx.pop()
            idx = [i[keep] for i in idx]
        else:
            idx = [np.ravel(i) for i in np.broadcast_arrays(*idx)] if idx else []
        shape = s.buffer.shape
        if not shape:
            flat = np.zeros(1, dtype=np.int64)
        else:
            idx = [np.clip(i, 0, n - 1) for i, n in zip(idx, shape)]
            flat = (
                np.ravel_multi_index(tuple(idx), shape)
                if idx[0].size
                else np.zeros(0, dtype=np.int64)
            )
        self.events.append(np.unique(flat))
        if len(self.events) > self.max_events:
            raise IterationOrderError(
                f"more than {self.max_events} store steps: the iteration-order picture is "
                "meant for small shapes (say up to 32x32); build the same schedule on a "
                "smaller workload"
            )


def _find_block_buffer(body: N.Stmt, block: str) -> N.Buffer | None:
    """The first buffer stored directly inside block ``block`` (None if the block is absent)."""
    found: list = []

    def visit(s: N.Stmt, cur: str | None) -> None:
        if found:
            return
        if isinstance(s, N.Block):
            visit(s.body, s.name)
        elif isinstance(s, N.SeqStmt):
            for x in s.seq:
                visit(x, cur)
        elif isinstance(s, N.BufferStore):
            if cur == block:
                found.append(s.buffer)
        elif isinstance(s, N.IfThenElse):
            visit(s.then_case, cur)
            if s.else_case is not None:
                visit(s.else_case, cur)
        elif hasattr(s, "body"):
            visit(s.body, cur)

    visit(body, None)
    return found[0] if found else None


def _block_names(body: N.Stmt) -> list[str]:
    names: list[str] = []

    def visit(s: N.Stmt) -> None:
        if isinstance(s, N.Block):
            names.append(s.name)
        if isinstance(s, N.SeqStmt):
            for x in s.seq:
                visit(x)
        elif isinstance(s, N.IfThenElse):
            visit(s.then_case)
            if s.else_case is not None:
                visit(s.else_case)
        elif hasattr(s, "body"):
            visit(s.body)

    visit(body)
    return names


def visit_order(
    sch: Any, block: str | None = None, args: Any = None, max_events: int = MAX_EVENTS
) -> IterationOrder:
    """The first-visit rank of each element of ``block``'s buffer (the output if None).

    ``sch`` is a tir.Schedule, a PrimFunc/IRModule, or a TE schedule with ``args``.
    """
    func = _as_func(sch, args)
    if block is None:
        outputs = [b for b in func.params if _stores_to(func.body, b)]
        buffer = outputs[-1] if outputs else None
        if buffer is None:
            raise IterationOrderError("the program stores to none of its parameters")
    else:
        buffer = _find_block_buffer(func.body, block)
        if buffer is None:
            names = ", ".join(dict.fromkeys(_block_names(func.body))) or "none"
            raise IterationOrderError(
                f"no block {block!r} storing to a buffer in this program; blocks: {names}"
            )
    sim = _Sim(block, buffer, max_events)
    env = {}
    sim.run(func.body, env, None, None)
    size = int(np.prod(buffer.shape)) if buffer.shape else 1
    first = np.full(size, -1, dtype=np.int64)
    for step, flat in enumerate(sim.events):
        new = flat[first[flat] < 0]
        first[new] = step
    visited = np.unique(first[first >= 0])
    rank = np.full(size, -1, dtype=np.int64)
    rank[first >= 0] = np.searchsorted(visited, first[first >= 0])
    shape2 = _fold(buffer.shape)
    return IterationOrder(
        buffer.name,
        block,
        tuple(buffer.shape),
        rank.reshape(shape2),
        first.reshape(shape2),
        sim.events,
        sim.vector_steps,
    )


def _stores_to(body: N.Stmt, buf: N.Buffer) -> bool:
    from ..ir.visitor import walk_stmts

    return any(isinstance(s, N.BufferStore) and s.buffer is buf for s in walk_stmts(body))


def _fold(shape: tuple) -> tuple:
    if not shape:
        return (1, 1)
    if len(shape) == 1:
        return (1, shape[0])
    return (int(np.prod(shape[:-1])), shape[-1])


# --------------------------------------------------------------------------------------
# Pictures


def _frames(visits: int, max_frames: int) -> list[int]:
    if visits <= max_frames:
        return list(range(visits))
    return sorted({int(round(x)) for x in np.linspace(0, visits - 1, max_frames)})


def iteration_order(
    sch: Any,
    block: str | None = None,
    args: Any = None,
    max_frames: int = 64,
    title: str | None = None,
) -> Any:
    """A plotly figure: heatmap of visit order with a slider and play button.

    Frame ``t`` colours the elements visited in the first ``t + 1`` steps; the numbers
    in the cells are the visit ranks (vectorized lanes share one).
    """
    import plotly.graph_objects as go

    vo = sch if isinstance(sch, IterationOrder) else visit_order(sch, block, args)
    order = vo.order.astype(float)
    order[vo.order < 0] = np.nan
    rows, cols = order.shape
    show_text = rows * cols <= 400
    top = max(vo.visits - 1, 1)

    def heat(limit: int) -> Any:
        z = np.where(order <= limit, order, np.nan)
        return go.Heatmap(
            z=z,
            zmin=0,
            zmax=top,
            colorscale="Viridis",
            xgap=1,
            ygap=1,
            text=np.where(np.isnan(z), "", np.nan_to_num(z).astype(int).astype(str)),
            texttemplate="%{text}" if show_text else None,
            hovertemplate="row %{y}, col %{x}: visit %{z}<extra></extra>",
            colorbar={"title": "visit"},
        )

    frames_at = _frames(vo.visits, max_frames)
    full = heat(vo.visits)
    fig = go.Figure(data=[full])
    fig.frames = [go.Frame(data=[heat(t)], name=str(t)) for t in frames_at]
    steps = [
        {
            "method": "animate",
            "label": str(t),
            "args": [
                [str(t)],
                {
                    "mode": "immediate",
                    "frame": {"duration": 0, "redraw": True},
                    "transition": {"duration": 0},
                },
            ],
        }
        for t in frames_at
    ]
    name = title or (f"visit order of {vo.buffer}" + (f" (block {vo.block})" if vo.block else ""))
    fig.update_layout(
        title=f"{name}: {vo.visits} steps for {rows * cols} elements",
        yaxis={
            "autorange": "reversed",
            "scaleanchor": "x",
            "title": "row",
            "dtick": 1 if rows <= 32 else None,
        },
        xaxis={"title": "column", "side": "top", "dtick": 1 if cols <= 32 else None},
        width=max(360, min(720, 40 * cols + 200)),
        height=max(360, min(720, 40 * rows + 220)),
        sliders=[
            {
                "active": len(frames_at) - 1,
                "steps": steps,
                "currentvalue": {"prefix": "step "},
                "pad": {"t": 40},
            }
        ],
        updatemenus=[
            {
                "type": "buttons",
                "showactive": False,
                "x": 0.0,
                "y": -0.05,
                "xanchor": "right",
                "yanchor": "top",
                "buttons": [
                    {
                        "label": "play",
                        "method": "animate",
                        "args": [
                            None,
                            {
                                "frame": {"duration": 120, "redraw": True},
                                "fromcurrent": False,
                                "transition": {"duration": 0},
                            },
                        ],
                    },
                ],
            }
        ],
    )
    return fig


_VIRIDIS = [
    "#440154",
    "#482878",
    "#3e4989",
    "#31688e",
    "#26828e",
    "#1f9e89",
    "#35b779",
    "#6ece58",
    "#b5de2b",
    "#fde725",
]


def _color(t: float) -> str:
    t = min(max(t, 0.0), 1.0) * (len(_VIRIDIS) - 1)
    k = min(int(t), len(_VIRIDIS) - 2)
    f = t - k
    a = [int(_VIRIDIS[k][i : i + 2], 16) for i in (1, 3, 5)]
    b = [int(_VIRIDIS[k + 1][i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * f):02x}" for x, y in zip(a, b))


class SVGPicture:
    """An SVG image that Jupyter displays (``_repr_svg_``) and ``save`` writes to a file."""

    def __init__(self, svg: str) -> None:
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str) -> None:
        """Write the SVG text to ``path``."""
        with open(path, "w") as f:
            f.write(self.svg)

    def __str__(self) -> str:
        return self.svg


def _panel(
    vo: IterationOrder, title: str, x0: float, cell: float
) -> tuple[list[str], float, float]:
    rows, cols = vo.order.shape
    top = max(vo.visits - 1, 1)
    parts = [
        f'<text x="{x0}" y="16" font-size="13" font-family="sans-serif" '
        f'font-weight="bold">{html.escape(title)}</text>',
        f'<text x="{x0}" y="32" font-size="11" font-family="sans-serif" fill="#555">'
        f"{vo.visits} steps, {rows * cols} elements</text>",
    ]
    y0 = 42
    for r in range(rows):
        for c in range(cols):
            v = int(vo.order[r, c])
            x, y = x0 + c * cell, y0 + r * cell
            fill = "#dddddd" if v < 0 else _color(v / top)
            parts.append(
                f'<rect class="cell" data-visit="{v}" x="{x:.1f}" y="{y:.1f}" '
                f'width="{cell - 1:.1f}" height="{cell - 1:.1f}" fill="{fill}"/>'
            )
            if cell >= 14 and v >= 0:
                ink = "#000" if v / top > 0.6 else "#fff"
                parts.append(
                    f'<text x="{x + cell / 2 - 0.5:.1f}" y="{y + cell / 2 + 3.5:.1f}" '
                    f'font-size="{min(11, cell * 0.45):.0f}" font-family="monospace" '
                    f'text-anchor="middle" fill="{ink}">{v}</text>'
                )
    return parts, cols * cell, y0 + rows * cell


def iteration_order_svg(
    *items: Any, block: str | None = None, args: Any = None, cell: float | None = None
) -> SVGPicture:
    """Static SVG of visit order: one panel per item, side by side.

    Each item is a schedule (or PrimFunc / IterationOrder), or a ``(title, schedule)``
    pair: ``iteration_order_svg(("before", s0), ("after split", s1), block="C")``.
    """
    if not items:
        raise IterationOrderError("give at least one schedule")
    orders = []
    for k, item in enumerate(items):
        title, obj = (
            item
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
            else (None, item)
        )
        vo = obj if isinstance(obj, IterationOrder) else visit_order(obj, block, args)
        orders.append((title or (f"{vo.buffer}" if len(items) == 1 else f"schedule {k}"), vo))
    biggest = max(max(vo.order.shape) for _, vo in orders)
    size = cell or max(6.0, min(28.0, 360.0 / max(biggest, 1)))
    parts: list[str] = []
    x = 4.0
    height = 0.0
    for title, vo in orders:
        panel, w, h = _panel(vo, title, x, size)
        parts += panel
        x += max(w, 7.0 * len(title)) + 24
        height = max(height, h)
    width, height = math.ceil(x), math.ceil(height) + 6
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">' + "".join(parts) + "</svg>"
    )
    return SVGPicture(svg)
