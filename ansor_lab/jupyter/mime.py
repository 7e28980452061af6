"""Our own MIME types: the data the JupyterLab extension renders (``extension/``).

The displays of ``display.py`` put one of these next to their text/plain and text/html
fallbacks: JupyterLab with the extension draws it (also in a saved notebook, with no
kernel), every other frontend shows the fallback. The data is plain JSON; the extension
treats it as untrusted (everything becomes text, nothing is parsed as HTML).

- ``TRACE_MIME``: ``{"trace": Trace.as_json(), "python": str(trace)}``
- ``LOWERED_MIME``: a lowered module: ``{"kind", "name", "params": [{name, shape, dtype}],
  "script": loop IR text, "loops": [{var, extent, kind, thread_tag, depth}]}``
- ``SOURCE_MIME``: generated source: ``{"name", "target", "sources": [{title, language,
  text}]}``
- ``RECORD_MIME``: one tuning record: ``{"record": the log line's JSON, "python": its trace}``
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

TRACE_MIME = "application/vnd.ansor-lab.trace+json"
LOWERED_MIME = "application/vnd.ansor-lab.lowered+json"
SOURCE_MIME = "application/vnd.ansor-lab.source+json"
RECORD_MIME = "application/vnd.ansor-lab.record+json"

#: the most loops listed in a lowered module's outline (the IR text has them all)
MAX_LOOPS = 400


def trace_data(trace: Any) -> dict:
    """A Trace as ``TRACE_MIME`` data."""
    return {"trace": trace.as_json(), "python": str(trace)}


def loop_outline(body: Any, max_loops: int = MAX_LOOPS) -> list[dict]:
    """The loops of a statement, parents first, each with its nesting depth."""
    from ..dsl.printer import text as expr_text
    from ..ir import nodes as N
    from ..ir.visitor import child_stmts

    out: list[dict] = []
    stack = [(body, 0)]
    while stack and len(out) < max_loops:
        node, depth = stack.pop()
        if isinstance(node, N.For):
            out.append(
                {
                    "var": node.loop_var.name,
                    "extent": expr_text(node.extent),
                    "kind": node.kind,
                    "thread_tag": node.thread_tag,
                    "depth": depth,
                }
            )
            depth += 1
        stack.extend((k, depth) for k in reversed(child_stmts(node)))
    return out


def lowered_data(obj: Any) -> dict:
    """A PrimFunc or an IRModule as ``LOWERED_MIME`` data."""
    from ..ir.nodes import IRModule

    funcs = list(obj.functions.values()) if isinstance(obj, IRModule) else [obj]
    params = [
        {"name": b.name, "shape": list(b.shape), "dtype": b.dtype} for f in funcs for b in f.params
    ]
    loops = [loop for f in funcs for loop in loop_outline(f.body)]
    name = ", ".join(obj.get_global_vars()) if isinstance(obj, IRModule) else obj.name
    return {
        "kind": type(obj).__name__,
        "name": name,
        "params": params,
        "script": obj.script(),
        "loops": loops,
    }


def source_data(name: str, target: str, sources: list[tuple[str, str, str]]) -> dict:
    """Generated sources, ``(title, language, text)`` each, as ``SOURCE_MIME`` data."""
    return {
        "name": name,
        "target": target,
        "sources": [{"title": t, "language": lang, "text": text} for t, lang, text in sources],
    }


@dataclass(frozen=True)
class RecordDisplay:
    """One tuning record, shown by the extension's record renderer (HTML elsewhere).

    ``record`` is the record's JSON as its log line holds it (``measure.records.encode``).
    """

    record: dict
    python: str = ""

    @staticmethod
    def from_pair(inp: Any, res: Any) -> RecordDisplay:
        """The display of a (MeasureInput or RecordInput, MeasureResult) pair."""
        from ..measure.records import encode
        from ..schedule.trace import Trace

        if hasattr(inp, "task"):
            rec = json.loads(encode(inp, res))
        else:  # a RecordInput read back from a log
            rec = {
                "workload_key": inp.workload_key,
                "target": inp.target,
                "flop_ct": inp.flop_ct,
                "sketch": inp.sketch,
                "trace": inp.trace,
                "costs": list(res.costs),
                "error_no": int(res.error_no),
                "error_msg": res.error_msg,
                "timestamp": res.timestamp,
            }
        try:
            python = str(Trace.from_json(rec["trace"]))
        except Exception:  # noqa: BLE001 - the extension prints the stored trace itself
            python = ""
        return RecordDisplay(rec, python)

    @property
    def mean_cost(self) -> float:
        """Mean cost in seconds (inf for a failed measurement)."""
        costs = self.record.get("costs") or []
        if self.record.get("error_no", 0) != 0 or not costs:
            return float("inf")
        return sum(costs) / len(costs)

    def __repr__(self) -> str:
        cost = self.mean_cost
        flop = float(self.record.get("flop_ct") or 0.0)
        perf = f"{flop / cost / 1e9:.3f} GFLOPS" if 0 < cost < float("inf") else "failed"
        return f"Record({self.record.get('workload_key', '?')!s:.24}: {perf})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        from .html import esc, header, highlight

        html = header(f"<b>Record</b> {esc(repr(self))}") + highlight(self.python or "")
        data = {"record": self.record, "python": self.python}
        return {"text/plain": repr(self), "text/html": html, RECORD_MIME: data}
