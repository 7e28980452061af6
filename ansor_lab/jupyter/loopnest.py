"""The loop-nest picture: nested boxes, one per loop, colored by what the loop became.

Drawn from the lowered PrimFunc (not from the schedule state), so it shows exactly the
program that will be compiled: loop names and extents, parallel / vectorized / unrolled /
thread-bound loops in color, ``pragma_auto_unroll_max_step`` as a badge, stages, buffer
allocations and the stores (which buffer is written from which).
"""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.printer import text as expr_text
from ..ir import nodes as N
from .html import FONT, MONO, badge, esc

#: loop kind -> (border color, label shown; None: the thread tag)
KIND_STYLE = {
    "serial": ("#adb5bd", ""),
    "parallel": ("#e8590c", "parallel"),
    "vectorized": ("#2f9e44", "vectorized"),
    "unrolled": ("#9c36b5", "unrolled"),
    "thread_binding": ("#1c7ed6", None),
}
_TINT = {
    "serial": "#ffffff",
    "parallel": "#fff4e6",
    "vectorized": "#ebfbee",
    "unrolled": "#f8f0fc",
    "thread_binding": "#e7f5ff",
}
_ANNOTATION_LABEL = {
    "pragma_auto_unroll_max_step": "auto-unroll ≤ {}",
    "pragma_unroll_explicit": "unroll explicit={}",
}


def _reads(e: E.PrimExpr) -> list[str]:
    names: list[str] = []
    for node in E.post_order(e):
        if isinstance(node, N.BufferLoad) and node.buffer.name not in names:
            names.append(node.buffer.name)
    return names


class _Renderer:
    def __init__(self, max_nodes: int) -> None:
        self.max_nodes = max_nodes
        self.nodes = 0
        self.skipped = 0
        self.kinds: set[str] = set()

    def stmt(self, s: N.Stmt) -> str:
        if self.nodes >= self.max_nodes:
            self.skipped += 1
            return ""
        self.nodes += 1
        if isinstance(s, N.SeqStmt):
            self.nodes -= 1
            return "".join(self.stmt(x) for x in s.seq)
        if isinstance(s, N.For):
            return self.loop(s)
        if isinstance(s, N.Block):
            note = "".join(f", {k}={v!r}" for k, v in s.annotations)
            head = (
                f'<div style="color:#868e96;font-style:italic;font-size:11px;margin:2px 0">'
                f"stage {esc(s.name)}{esc(note)}</div>"
            )
            return head + self.stmt(s.body)
        if isinstance(s, N.Allocate):
            b = s.buffer
            shape = ", ".join(map(str, b.shape))
            line = (
                f'<div style="{MONO};font-size:11px;color:#1971c2;margin:1px 0">'
                f"alloc {esc(b.name)}[{esc(shape)}] {esc(b.dtype)}"
                f"{' · ' + esc(b.scope) if b.scope != 'global' else ''}</div>"
            )
            return line + self.stmt(s.body)
        if isinstance(s, N.BufferStore):
            reads = _reads(s.value)
            full = (
                f"{s.buffer.name}[{', '.join(expr_text(i) for i in s.indices)}] = "
                f"{expr_text(s.value)}"
            )
            src = ", ".join(reads) if reads else expr_text(s.value)
            return (
                f'<div title="{esc(full)}" style="{MONO};font-size:11px;margin:1px 0;'
                f'color:#212529">{esc(s.buffer.name)} ← {esc(src)}</div>'
            )
        if isinstance(s, N.IfThenElse):
            out = self.guard(f"if {expr_text(s.condition)}", s.then_case)
            if s.else_case is not None:
                out += self.guard("else", s.else_case)
            return out
        if isinstance(s, N.LetStmt):
            line = (
                f'<div style="{MONO};font-size:11px;color:#495057">'
                f"{esc(s.var.name)} = {esc(expr_text(s.value))}</div>"
            )
            return line + self.stmt(s.body)
        if isinstance(s, N.Evaluate):
            return ""
        return f'<div style="font-size:11px">{esc(type(s).__name__)}</div>'

    def guard(self, title: str, body: N.Stmt) -> str:
        return (
            f'<div style="border:1px dashed #ced4da;margin:2px 0;padding:1px 6px">'
            f'<div style="{MONO};font-size:11px;color:#868e96">{esc(title)}</div>'
            f'<div style="margin-left:12px">{self.stmt(body)}</div></div>'
        )

    def loop(self, s: N.For) -> str:
        self.kinds.add(s.kind)
        color, label = KIND_STYLE.get(s.kind, ("#adb5bd", s.kind))
        if label is None:
            label = s.thread_tag or s.kind
        lo = s.min
        if isinstance(lo, E.IntImm) and lo.value == 0:
            rng = expr_text(s.extent)
        else:
            rng = f"{expr_text(lo)}, {expr_text(lo)} + {expr_text(s.extent)}"
        extent = s.extent.value if isinstance(s.extent, E.IntImm) else expr_text(s.extent)
        badges = badge(label, color) if label else ""
        for key, value in s.annotations:
            fmt = _ANNOTATION_LABEL.get(key)
            badges += badge(fmt.format(value) if fmt else f"{key}={value}", "#9c36b5", outline=True)
        head = (
            f'<div class="al-loop-head" style="font-size:12px;white-space:nowrap">'
            f'<span style="{MONO};font-weight:600">{esc(s.loop_var.name)}</span>'
            f'<span style="{MONO};color:#868e96"> in range({esc(rng)})</span>'
            f'<span style="color:#495057;font-size:11px"> ×{esc(extent)}</span>'
            f"{badges}</div>"
        )
        body = self.stmt(s.body)
        return (
            f'<div class="al-loop al-{esc(s.kind)}" style="border:1px solid {color};'
            f"border-left:4px solid {color};background:{_TINT.get(s.kind, '#fff')};"
            f'border-radius:3px;margin:2px 0;padding:1px 2px 2px 6px">{head}'
            f'<div style="margin-left:10px">{body}</div></div>'
        )


def loop_nest_html(func: N.PrimFunc, max_nodes: int = 600) -> str:
    """Nested boxes of the loops of ``func`` with a color legend."""
    r = _Renderer(max_nodes)
    body = r.stmt(func.body)
    legend = "".join(
        badge(KIND_STYLE[k][1] or "thread binding", KIND_STYLE[k][0])
        for k in ("parallel", "vectorized", "unrolled", "thread_binding")
        if k in r.kinds
    )
    params = ", ".join(f"{b.name}{list(b.shape)}" for b in func.params)
    top = (
        f'<div style="font-size:12px;color:#495057;margin-bottom:4px">'
        f'<span style="{MONO}">{esc(func.name)}({esc(params)})</span>{legend}</div>'
    )
    more = ""
    if r.skipped:
        more = (
            f'<div style="font-size:11px;color:#868e96">… {r.skipped} more statements '
            "not drawn (see the IR tab)</div>"
        )
    return f'<div class="al-loopnest" style="{FONT}">{top}{body}{more}</div>'
