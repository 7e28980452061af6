"""Rich displays of ansor_lab objects: static HTML/SVG mime bundles for notebooks.

Every ``*_bundle(obj)`` returns ``{"text/plain": repr(obj), "text/html": ...}`` (plus
``image/svg+xml`` for pictures). The IPython extension registers them with IPython's
display formatter (``%load_ext ansor_lab``), so the core classes carry no notebook code;
``show(obj)`` displays one without the extension. The HTML is static (inline styles and
CSS-only tabs), so a saved notebook reads without a kernel.

``measure(sch)`` builds a schedule, checks it against the numpy reference and times it;
the schedule's display then shows the time and GFLOPS (until the schedule changes).
``records_table(log, k)`` shows the fastest records of a tuning log.
"""

from __future__ import annotations

import datetime
import math
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .html import FONT, MONO, badge, esc, fmt_seconds, header, highlight, pre, tabs
from .mime import LOWERED_MIME, SOURCE_MIME, TRACE_MIME, lowered_data, source_data, trace_data

# --------------------------------------------------------------------------------------
# code


def _safe_repr(obj: Any) -> str:
    try:
        return repr(obj)
    except Exception as err:  # noqa: BLE001 - a display must not raise
        return f"<{type(obj).__name__}: repr failed: {err}>"


def primfunc_bundle(func: Any) -> dict:
    """A PrimFunc as highlighted TVMScript-like code."""
    cap = header(f"<b>PrimFunc</b> <code>{esc(func.name)}</code>", f"{len(func.params)} buffers")
    html = cap + highlight(func.script())
    return {"text/plain": _safe_repr(func), "text/html": html, LOWERED_MIME: lowered_data(func)}


def irmodule_bundle(mod: Any) -> dict:
    """An IRModule as highlighted code of its functions."""
    names = ", ".join(mod.get_global_vars())
    cap = header(f"<b>IRModule</b> ({esc(names)})")
    html = cap + highlight(mod.script())
    return {"text/plain": _safe_repr(mod), "text/html": html, LOWERED_MIME: lowered_data(mod)}


def trace_bundle(trace: Any) -> dict:
    """A Trace as highlighted Python (``def apply_trace(sch): ...``)."""
    n = len(trace.insts)
    sampled = sum(1 for inst in trace.insts if inst.is_sampling)
    cap = header(f"<b>Trace</b> · {n} steps", f"{sampled} sampling decisions" if sampled else "")
    html = cap + highlight(str(trace))
    return {"text/plain": _safe_repr(trace), "text/html": html, TRACE_MIME: trace_data(trace)}


def dag_bundle(dag: Any) -> dict:
    """A ComputeDAG as an SVG operator graph (with its text below, folded)."""
    from .dagsvg import dag_caption, dag_svg

    svg = dag_svg(dag)
    text = _safe_repr(dag)
    html = (
        header(esc(dag_caption(dag))) + f'<div style="overflow-x:auto">{svg}</div>'
        f'<details style="{FONT};font-size:12px"><summary>as text</summary>'
        f"{pre(text)}</details>"
    )
    return {"text/plain": text, "text/html": html, "image/svg+xml": svg}


# --------------------------------------------------------------------------------------
# schedules and modules


@dataclass
class ScheduleTiming:
    """What ``measure(sch)`` found: times, throughput and the correctness check."""

    mean: float
    median: float
    std: float
    results: tuple
    gflops: float
    flop_ct: float
    correct: bool | None
    max_abs_err: float
    target: str
    number: int = 0
    repeat: int = 0
    extra: dict = field(default_factory=dict)

    def summary(self) -> str:
        """``0.1234 ms · 12.3 GFLOPS · correct``."""
        check = {True: "correct", False: "WRONG", None: "unchecked"}[self.correct]
        return f"{fmt_seconds(self.mean)} · {self.gflops:.3g} GFLOPS · {check}"

    def __repr__(self) -> str:
        return (
            f"ScheduleTiming(mean={self.mean * 1e3:.4f} ms, gflops={self.gflops:.3f}, "
            f"correct={self.correct}, target={self.target!r})"
        )

    def to_html(self) -> str:
        """A small table of the measurement."""
        ok = {
            True: badge("correct", "#2f9e44"),
            False: badge("WRONG", "#e03131"),
            None: badge("unchecked", "#868e96"),
        }[self.correct]
        rows = [
            ("mean", fmt_seconds(self.mean)),
            ("median", fmt_seconds(self.median)),
            ("std", fmt_seconds(self.std)),
            ("GFLOPS", f"{self.gflops:.4g}"),
            ("FLOP", f"{self.flop_ct:.4g}"),
            ("max |err|", f"{self.max_abs_err:.3g}"),
            ("repeats", f"{self.repeat} × {self.number} runs"),
            ("target", self.target),
        ]
        cells = "".join(
            f'<tr><td style="padding:1px 10px 1px 0;color:#868e96">{esc(k)}</td>'
            f'<td style="{MONO}">{esc(v)}</td></tr>'
            for k, v in rows
        )
        return (
            f'<div style="{FONT};font-size:12px"><b>{esc(fmt_seconds(self.mean))}</b>, '
            f"<b>{self.gflops:.4g} GFLOPS</b>{ok}<table style='margin-top:4px'>{cells}"
            "</table></div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return {"text/plain": repr(self), "text/html": self.to_html()}


#: schedule -> (the state it was measured in, the timing); shown while the state is current
_TIMINGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def timing_of(sch: Any) -> ScheduleTiming | None:
    """The last ``measure(sch)`` result, if the schedule has not changed since."""
    try:
        entry = _TIMINGS.get(sch)
    except TypeError:
        return None
    if entry is None or entry[0] is not getattr(sch, "state", None):
        return None
    return entry[1]


def _tensors_of(sch: Any, args: Any) -> list | None:
    if args is not None:
        return list(args)
    if getattr(sch, "args", None) is not None:
        return list(sch.args)
    source = getattr(sch, "source", None)  # a PrimFunc made by te.create_prim_func
    if source is not None and getattr(source, "args", None) is not None:
        return list(source.args)
    return None


def measure(
    sch: Any,
    args: Any = None,
    target: Any = None,
    *,
    number: int = 1,
    repeat: int = 5,
    min_repeat_ms: float = 20,
    check: bool = True,
    seed: int = 0,
) -> ScheduleTiming:
    """Build ``sch`` (tir/te schedule or PrimFunc), check it against the numpy reference,
    time it, and remember the time so the schedule's display shows it."""
    from ..dsl.dag import ComputeDAG
    from ..dsl.reference import reference_outputs
    from ..measure.workers import random_inputs
    from ..runtime.build import build
    from ..runtime.module import written_params

    tensors = _tensors_of(sch, args)
    mod = build(sch, tensors, target)
    params = list(mod.func.params)
    arrays = random_inputs([(b.name, b.shape, b.dtype) for b in params], seed)
    outs = [k for k, b in enumerate(params) if b in written_params(mod.func)]
    for k in outs:
        arrays[k][...] = 0
    mod(*arrays)
    correct, err = None, 0.0
    if check and tensors is not None and len(tensors) == len(params):
        expected = reference_outputs(tensors, arrays)
        correct = True
        for k in outs:
            got, want = arrays[k], expected[k]
            if got.dtype.kind == "f":
                tol = 1e-3 if got.dtype.itemsize <= 4 else 1e-6
                scale = max(1.0, float(np.abs(want).max(initial=0.0)))
                diff = float(np.nanmax(np.abs(got.astype(float) - want.astype(float)), initial=0.0))
                ok = np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True)
            else:
                diff = float(np.abs(got.astype(np.int64) - want.astype(np.int64)).max(initial=0))
                ok = np.array_equal(got, want)
            err = max(err, diff)
            correct = correct and bool(ok)
    bench = mod.time_evaluator(number=number, repeat=repeat, min_repeat_ms=min_repeat_ms)(*arrays)
    flop = ComputeDAG(tensors).flop_ct if tensors else 0.0
    timing = ScheduleTiming(
        bench.mean,
        bench.median,
        bench.std,
        tuple(bench.results),
        flop / bench.mean / 1e9 if bench.mean > 0 else 0.0,
        flop,
        correct,
        err,
        str(mod.target),
        number,
        repeat,
    )
    try:
        _TIMINGS[sch] = (getattr(sch, "state", None), timing)
    except TypeError:  # not weak-referenceable: nothing to annotate
        pass
    return timing


def schedule_bundle(sch: Any) -> dict:
    """A tir.Schedule as tabs: loop nest, lowered IR, trace, and the measured time."""
    from ..dsl.tensor import PlaceholderOp
    from .loopnest import loop_nest_html

    n = len(sch.trace.insts)
    try:
        func = sch.mod.main_function()
    except Exception as err:  # noqa: BLE001 - show the trace even when lowering fails
        msg = f"lowering failed: {type(err).__name__}: {err}"
        return {
            "text/plain": f"tir.Schedule({n} steps; {msg})",
            "text/html": header(f"<b>tir.Schedule</b> · {n} steps", esc(msg))
            + highlight(str(sch.trace)),
        }
    timing = timing_of(sch)
    blocks = ", ".join(
        st.name for st in sch.state.stages.values() if not isinstance(st.op, PlaceholderOp)
    )
    cap = header(
        "<b>tir.Schedule</b>",
        f"{n} steps",
        f"blocks: {esc(blocks)}" if blocks else "",
        f"<b>{esc(timing.summary())}</b>" if timing else "",
    )
    panels = [
        ("Loop nest", loop_nest_html(func)),
        ("IR", highlight(func.script())),
        ("Trace", highlight(str(sch.trace))),
    ]
    if timing is not None:
        panels.append(("Time", timing.to_html()))
    return {"text/plain": _safe_repr(sch), "text/html": cap + tabs(panels)}


#: LLVM IR / assembly longer than this is shown plain (highlighting grows HTML ~6x)
HIGHLIGHT_LINES = 600
#: and cut after this many lines (``get_source()`` has all of it)
PLAIN_LINES = 6000


def _big_code(text: str, language: str) -> str:
    lines = text.splitlines()
    if len(lines) <= HIGHLIGHT_LINES:
        return highlight(text, language)
    note = ""
    if len(lines) > PLAIN_LINES:
        text = "\n".join(lines[:PLAIN_LINES])
        note = f"\n… {len(lines) - PLAIN_LINES} more lines (see get_source())"
    return pre(text + note)


def module_bundle(mod: Any) -> dict:
    """A built Module as tabs: LLVM IR, assembly, loop report, TIR."""
    panels, sources = [], []
    for title, fmt, lang in (("LLVM IR", "ll", "llvm"), ("Assembly", "asm", "asm")):
        try:
            text = mod.get_source(fmt)
        except Exception as err:  # noqa: BLE001 - one failing view must not hide the others
            panels.append((title, pre(f"unavailable: {err}")))
            sources.append((title, "text", f"unavailable: {err}"))
            continue
        panels.append((title, _big_code(text, lang)))
        sources.append((title, lang, "\n".join(text.splitlines()[:PLAIN_LINES])))
    report, script = mod.loop_report(), mod.func.script()
    panels += [("Loop report", pre(report)), ("TIR", highlight(script))]
    sources += [("Loop report", "text", report), ("TIR", "python", script)]
    cap = header(
        f"<b>Module</b> <code>{esc(mod.entry_name)}</code>",
        f"target <code>{esc(mod.target)}</code>",
        f"{len(mod.func.params)} arguments",
    )
    return {
        "text/plain": _safe_repr(mod),
        "text/html": cap + tabs(panels),
        SOURCE_MIME: source_data(mod.entry_name, str(mod.target), sources),
    }


def cuda_module_bundle(mod: Any) -> dict:
    """A CUDA module as tabs: CUDA C (highlighted), the launch plan, PTX (once compiled),
    and the loop IR it was generated from."""
    panels = [("CUDA", _big_code(mod.get_source("cuda"), "cuda"))]
    sources = [("CUDA", "cuda", mod.get_source("cuda"))]
    plan = "\n".join(
        f"{k.name}<<<grid {k.grid}, block {k.block}, {k.shared_bytes} B shared>>>"
        f"({', '.join(k.args)})"
        for k in mod.launch_plan.launches
    )
    panels.append(("Launch plan", pre(plan)))
    compiled = mod.__dict__.get("compiled")  # shown when built; displaying never compiles
    if compiled is not None:
        panels.append(("PTX", _big_code(compiled.ptx, "text")))
    script = mod.func.script()
    panels.append(("TIR", highlight(script)))
    sources.append(("TIR", "python", script))
    kernels = len(mod.kernel_program.kernels)
    cap = header(
        f"<b>CUDA module</b> <code>{esc(mod.entry_name)}</code>",
        f"target <code>{esc(mod.target)}</code>",
        f"{kernels} kernel{'s' if kernels != 1 else ''}",
    )
    return {
        "text/plain": _safe_repr(mod),
        "text/html": cap + tabs(panels),
        SOURCE_MIME: source_data(mod.entry_name, str(mod.target), sources),
    }


# --------------------------------------------------------------------------------------
# records


@dataclass
class RecordsTable:
    """The fastest records of a log (``records_table(log, k)``); displays as a table."""

    filename: str
    rows: list
    total: int
    errors: int
    k: int

    def __repr__(self) -> str:
        lines = [
            f"top {len(self.rows)} of {self.total} records in {self.filename} "
            f"({self.errors} errors)",
            f"{'#':>3} {'GFLOPS':>10} {'mean ms':>10} {'steps':>5}  workload",
        ]
        for r in self.rows:
            lines.append(
                f"{r['rank']:>3} {r['gflops']:>10.3f} {r['mean_ms']:>10.4f} "
                f"{r['steps']:>5}  {r['workload'][:50]}"
            )
        return "\n".join(lines)

    def to_html(self) -> str:
        """The table as HTML (sorted by GFLOPS, fastest first)."""
        th = (
            "padding:3px 8px;border-bottom:2px solid #adb5bd;text-align:right;"
            "background:#f1f3f5;white-space:nowrap"
        )
        cols = [
            ("#", ""),
            ("GFLOPS", " ▼"),
            ("mean", " ⇅"),
            ("std", " ⇅"),
            ("steps", " ⇅"),
            ("workload", " ⇅"),
            ("target", ""),
            ("measured at", " ⇅"),
        ]
        head = "".join(
            f'<th style="{th}">{esc(c)}<span style="color:#868e96">{a}</span></th>' for c, a in cols
        )
        body = []
        best = self.rows[0]["gflops"] if self.rows else 0.0
        for r in self.rows:
            td = "padding:2px 8px;border-bottom:1px solid #e9ecef;text-align:right"
            bar_w = int(60 * r["gflops"] / best) if best > 0 else 0
            bar = (
                f'<span style="display:inline-block;width:{bar_w}px;height:8px;'
                f'background:#74c0fc;margin-right:6px;vertical-align:middle"></span>'
            )
            trace = (
                f"<details><summary>{r['steps']}</summary>{highlight(r['trace_py'])}</details>"
                if r.get("trace_py")
                else str(r["steps"])
            )
            body.append(
                f"<tr><td style='{td}'>{r['rank']}</td>"
                f"<td style='{td};font-weight:600'>{bar}{r['gflops']:.4g}</td>"
                f"<td style='{td}'>{esc(fmt_seconds(r['mean_ms'] / 1e3))}</td>"
                f"<td style='{td}'>{esc(fmt_seconds(r['std_ms'] / 1e3))}</td>"
                f"<td style='{td};text-align:left'>{trace}</td>"
                f"<td style='{td};text-align:left;{MONO}' title='{esc(r['workload'])}'>"
                f"{esc(r['workload'][:40])}</td>"
                f"<td style='{td};text-align:left;{MONO}'>{esc(r['target'][:30])}</td>"
                f"<td style='{td}'>{esc(r['time'])}</td></tr>"
            )
        cap = header(
            f"<b>Records</b> <code>{esc(self.filename)}</code>",
            f"top {len(self.rows)} of {self.total}",
            f"{self.errors} errors",
        )
        return (
            cap + f'<table class="al-records" style="border-collapse:collapse;{FONT};'
            f'font-size:12px"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}'
            "</tbody></table>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return {"text/plain": repr(self), "text/html": self.to_html()}


def records_table(
    log: str, k: int = 10, workload_key: str | None = None, show_traces: bool = True
) -> RecordsTable:
    """The ``k`` fastest valid records of a log (optionally of one workload) as a table."""
    from ..measure.records import load_records

    total = errors = 0
    good = []
    for inp, res in load_records(str(log)):
        if workload_key is not None and inp.workload_key != workload_key:
            continue
        total += 1
        if res.error_no != 0:
            errors += 1
            continue
        good.append((res.mean_cost, inp, res))
    good.sort(key=lambda x: x[0])
    rows = []
    for rank, (cost, inp, res) in enumerate(good[:k], 1):
        costs = np.asarray(res.costs, dtype=float)
        row = {
            "rank": rank,
            "mean_ms": cost * 1e3,
            "std_ms": float(costs.std()) * 1e3,
            "gflops": inp.flop_ct / cost / 1e9 if cost > 0 else math.nan,
            "workload": inp.workload_key,
            "target": inp.target,
            "steps": len(inp.trace.get("insts", [])) if isinstance(inp.trace, dict) else 0,
            "time": datetime.datetime.fromtimestamp(res.timestamp).strftime("%Y-%m-%d %H:%M:%S")
            if res.timestamp
            else "",
            "trace": inp.trace,
        }
        if show_traces:
            row["trace_py"] = _trace_python(inp)
        rows.append(row)
    return RecordsTable(str(log), rows, total, errors, k)


def _trace_python(inp: Any) -> str:
    from ..measure.workers import rebuild_schedule

    try:
        return str(rebuild_schedule(inp.dag, inp.trace).trace)
    except Exception:  # noqa: BLE001 - the table still shows without the trace
        return ""


# --------------------------------------------------------------------------------------
# dispatch


def _printers() -> dict:
    from ..dsl.dag import ComputeDAG
    from ..ir.nodes import IRModule, PrimFunc
    from ..runtime.cuda_module import CUDAModule
    from ..runtime.module import Module
    from ..schedule.tir_schedule import Schedule
    from ..schedule.trace import Trace

    return {
        PrimFunc: primfunc_bundle,
        IRModule: irmodule_bundle,
        Trace: trace_bundle,
        ComputeDAG: dag_bundle,
        Schedule: schedule_bundle,
        Module: module_bundle,
        CUDAModule: cuda_module_bundle,
    }


def mimebundle(obj: Any) -> dict:
    """The rich bundle of any supported object (text/plain only for others)."""
    for cls, fn in _printers().items():
        if isinstance(obj, cls):
            return fn(obj)
    bundle = getattr(obj, "_repr_mimebundle_", None)
    if bundle is not None:
        return bundle()
    return {"text/plain": _safe_repr(obj)}


def show(obj: Any) -> None:
    """Display ``obj`` richly in a notebook (no extension needed); prints it elsewhere."""
    try:
        from IPython.display import display
    except ImportError:
        print(_safe_repr(obj))
        return
    display(mimebundle(obj), raw=True)
