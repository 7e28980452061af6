"""A ComputeDAG as a small SVG picture: ops as boxes, layered left to right by depth.

Placeholders (inputs) are blue boxes, computes orange (reductions say over which axes),
outputs have a thick border; an arrow goes from each producer to each op that reads it.
A layer is an op's topological depth: inputs at 0, every op one right of its deepest input.
"""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.dag import ComputeDAG
from ..dsl.tensor import ComputeOp, PlaceholderOp
from .html import esc, uid

BOX_W, BOX_H = 176, 56
GAP_X, GAP_Y, PAD, LANE = 56, 16, 12, 9
_INPUT = ("#e7f5ff", "#1c7ed6")
_COMPUTE = ("#fff4e6", "#e8590c")


def _short(text: str, n: int = 26) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _detail(op) -> str:
    if isinstance(op, PlaceholderOp):
        return "input"
    if op.reduce_axis:
        axes = ", ".join(f"{iv.var.name}:{int(iv.dom.extent)}" for iv in op.reduce_axis)
        body = op.body[0]
        comb = body.combiner if isinstance(body, E.Reduce) else "reduce"
        return f"{comb} over {axes}"
    return op.tag or "elementwise"


def _unique_inputs(op) -> list:
    seen: dict[int, object] = {}
    for t in op.input_tensors:
        seen.setdefault(id(t.op), t)
    return list(seen.values())


def layers(dag: ComputeDAG) -> list[list]:
    """Ops grouped by depth (inputs first), in the DAG's topological order."""
    depth: dict[int, int] = {}
    for op in dag.ops:
        ins = op.input_tensors
        depth[id(op)] = 1 + max(depth[id(t.op)] for t in ins) if ins else 0
    out: list[list] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for op in dag.ops:
        out[depth[id(op)]].append(op)
    return out


def dag_svg(dag: ComputeDAG) -> str:
    """The SVG text of ``dag``'s operator graph."""
    cols = layers(dag)
    col_of = {id(op): c for c, ops in enumerate(cols) for op in ops}
    # an edge that skips a layer runs in its own lane above the boxes, not through them
    skips = [
        (t.op, op)
        for op in dag.ops
        for t in _unique_inputs(op)
        if col_of[id(op)] - col_of[id(t.op)] > 1
    ]
    top = LANE * len(skips) + (4 if skips else 0)
    rows = max((len(c) for c in cols), default=1)
    width = PAD * 2 + len(cols) * BOX_W + max(0, len(cols) - 1) * GAP_X
    body_h = rows * BOX_H + max(0, rows - 1) * GAP_Y
    height = PAD * 2 + top + body_h
    pos: dict[int, tuple[float, float]] = {}
    for c, ops in enumerate(cols):
        col_h = len(ops) * BOX_H + (len(ops) - 1) * GAP_Y
        y0 = PAD + top + (body_h - col_h) / 2
        for r, op in enumerate(ops):
            pos[id(op)] = (PAD + c * (BOX_W + GAP_X), y0 + r * (BOX_H + GAP_Y))
    marker = uid("al-arrow")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#495057"/></marker></defs>',
    ]
    lanes = {(id(a), id(b)): PAD + LANE * k + LANE / 2 for k, (a, b) in enumerate(skips)}
    for op in dag.ops:  # edges under the boxes
        x1, y1 = pos[id(op)]
        for t in _unique_inputs(op):
            x0, y0 = pos[id(t.op)]
            sx, sy = x0 + BOX_W, y0 + BOX_H / 2
            ex, ey = x1 - 2, y1 + BOX_H / 2
            lane = lanes.get((id(t.op), id(op)))
            if lane is None:
                mid = (sx + ex) / 2
                d = f"M{sx:.1f},{sy:.1f} C{mid:.1f},{sy:.1f} {mid:.1f},{ey:.1f} {ex:.1f},{ey:.1f}"
            else:
                a, b = sx + GAP_X / 2, ex - GAP_X / 2
                d = (
                    f"M{sx:.1f},{sy:.1f} C{a:.1f},{sy:.1f} {a:.1f},{lane:.1f} "
                    f"{a + 12:.1f},{lane:.1f} L{b - 12:.1f},{lane:.1f} "
                    f"C{b:.1f},{lane:.1f} {b:.1f},{ey:.1f} {ex:.1f},{ey:.1f}"
                )
            parts.append(
                f'<path class="al-edge" d="{d}" fill="none" stroke="#495057" '
                f'stroke-width="1.3" marker-end="url(#{marker})">'
                f"<title>{esc(op.name)} reads {esc(t.op.name)}</title></path>"
            )
    outputs = {id(op) for op in dag.output_ops}
    for op in dag.ops:
        x, y = pos[id(op)]
        fill, stroke = _INPUT if isinstance(op, PlaceholderOp) else _COMPUTE
        sw = 2.6 if id(op) in outputs else 1.2
        kind = "placeholder" if isinstance(op, PlaceholderOp) else "compute"
        shape = "(" + ", ".join(map(str, op.shape)) + ")"
        parts.append(
            f'<g class="al-op al-{kind}"><title>{esc(repr(op))}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{BOX_W}" height="{BOX_H}" rx="6" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>'
            f'<text x="{x + 8:.1f}" y="{y + 17:.1f}" font-weight="bold" fill="#212529">'
            f"{esc(_short(op.name))}</text>"
            f'<text x="{x + 8:.1f}" y="{y + 33:.1f}" fill="#343a40">'
            f"{esc(_short(shape + ' ' + op.dtype, 28))}</text>"
            f'<text x="{x + 8:.1f}" y="{y + 48:.1f}" fill="#868e96" font-size="11">'
            f"{esc(_short(_detail(op), 30))}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def dag_caption(dag: ComputeDAG) -> str:
    """``3 inputs · 2 computes · 0.52 MFLOP``."""
    n_in = sum(isinstance(op, PlaceholderOp) for op in dag.ops)
    n_c = sum(isinstance(op, ComputeOp) for op in dag.ops)
    flop = dag.flop_ct
    amount = f"{flop / 1e9:.3g} GFLOP" if flop >= 1e8 else f"{flop / 1e6:.3g} MFLOP"
    return f"ComputeDAG · {n_in} inputs · {n_c} computes · {amount}"
