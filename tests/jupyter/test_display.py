"""Rich displays, the measure/records helpers and the IPython extension."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import pytest

import ansor_lab
from ansor_lab import auto_scheduler, te, tir
from ansor_lab.codegen.target import as_target, set_default_target
from ansor_lab.jupyter import display as D
from ansor_lab.jupyter.dagsvg import dag_svg, layers
from ansor_lab.measure.records import MeasureInput, MeasureResult, save_records

N = 32


def _workload():
    A = te.placeholder((N, N), name="A")
    B = te.placeholder((N, N), name="B")
    k = te.reduce_axis((0, N), name="k")
    C = te.compute((N, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    E = te.compute((N, N), lambda i, j: te.exp(C[i, j]) + A[i, j], name="E")
    return A, B, C, E


def _scheduled():
    A, B, C, E = _workload()
    sch = tir.Schedule(te.create_prim_func([A, B, E]))
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, 16])
    sch.reorder(io, jo, kk, ii, ji)
    sch.parallel(io)
    sch.vectorize(ji)
    sch.unroll(ii)
    return sch


def _visible_text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_primfunc_and_irmodule_are_highlighted_code():
    sch = _scheduled()
    mod = sch.mod
    func = mod["main"]
    for obj, bundle in ((func, D.primfunc_bundle(func)), (mod, D.irmodule_bundle(mod))):
        assert bundle["text/plain"] == repr(obj)
        page = bundle["text/html"]
        # pygments spans with inline colors around keywords
        assert re.search(r'<span style="color: #008000; font-weight: bold">for</span>', page)
        text = _visible_text(page)
        assert "def main(A: T.Buffer((32, 32)" in text
        assert "T.parallel(8)" in text and "T.vectorized(16)" in text


def test_trace_is_highlighted_python():
    sch = _scheduled()
    bundle = D.trace_bundle(sch.trace)
    assert bundle["text/plain"] == repr(sch.trace)
    text = _visible_text(bundle["text/html"])
    assert "def apply_trace(sch):" in text
    assert "sch.split(loop=l1, factors=[None, 4])" in text
    assert "8 steps" in text
    assert '<span style="color: #008000; font-weight: bold">def</span>' in bundle["text/html"]


def test_dag_svg_layers_boxes_and_edges():
    A, B, C, E = _workload()
    dag = te.ComputeDAG([A, B, E])
    assert [[op.name for op in col] for col in layers(dag)] == [["A", "B"], ["C"], ["E"]]
    svg = dag_svg(dag)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count('class="al-op al-placeholder"') == 2
    assert svg.count('class="al-op al-compute"') == 2
    # C reads A and B, E reads C and A (the A -> E edge skips a layer)
    edges = re.findall(r"<title>(\w+) reads (\w+)</title>", svg)
    assert sorted(edges) == [("C", "A"), ("C", "B"), ("E", "A"), ("E", "C")]
    assert "(32, 32) float32" in svg and "sum over k:32" in svg
    bundle = D.dag_bundle(dag)
    assert bundle["text/plain"] == repr(dag)
    assert bundle["image/svg+xml"].startswith("<svg") and "al-compute" in bundle["image/svg+xml"]
    assert "2 inputs · 2 computes" in bundle["text/html"]


def test_schedule_tabs_loop_nest_and_measured_time():
    sch = _scheduled()
    bundle = D.schedule_bundle(sch)
    assert bundle["text/plain"] == repr(sch)
    page = bundle["text/html"]
    titles = re.findall(r'<label for="[^"]+">([^<]+)</label>', page)
    assert titles == ["Loop nest", "IR", "Trace"]  # no time until measured
    assert page.count('type="radio"') == 3 and "checked" in page
    # the loop nest picture: names, extents and colored kinds
    nest = page[page.index('class="al-loopnest"') :]
    text = _visible_text(nest)
    for piece in (
        "i_0 in range(8) ×8",
        "j_0 in range(2) ×2",
        "k in range(32) ×32",
        "i_1 in range(4) ×4",
        "j_1 in range(16) ×16",
    ):
        assert piece in text, piece
    assert re.search(r'class="al-loop al-parallel".*?>i_0<', nest)
    assert re.search(r'class="al-loop al-vectorized".*?>j_1<', nest)
    assert ">parallel</span>" in nest and ">vectorized</span>" in nest
    assert ">unrolled</span>" in nest
    assert "C ← C, A, B" in text and "E ← C, A" in text

    timing = D.measure(sch)
    assert timing.correct is True and timing.max_abs_err < 1e-3
    assert timing.flop_ct == te.ComputeDAG(sch.args).flop_ct > 2 * N**3
    assert timing.gflops == pytest.approx(timing.flop_ct / timing.mean / 1e9)
    page = D.schedule_bundle(sch)["text/html"]
    assert re.findall(r'<label for="[^"]+">([^<]+)</label>', page)[-1] == "Time"
    assert f"{timing.gflops:.3g} GFLOPS" in _visible_text(page)
    assert "correct" in _visible_text(page)
    # a new step changes the program: the old time is no longer shown
    sch.unroll(sch.get_loops(sch.get_block("E"))[1])
    assert "Time" not in re.findall(
        r'<label for="[^"]+">([^<]+)</label>', D.schedule_bundle(sch)["text/html"]
    )


def test_measure_catches_a_wrong_reference():
    sch = _scheduled()
    A, B, C, E = _workload()
    wrong = te.compute((N, N), lambda i, j: A[i, j] * 2.0, name="E")  # same shape, other math
    timing = D.measure(sch, args=[A, B, wrong])
    assert timing.correct is False and timing.max_abs_err > 0.1


def test_module_tabs():
    mod = ansor_lab.build(_scheduled())
    bundle = D.module_bundle(mod)
    assert bundle["text/plain"] == repr(mod)
    page = bundle["text/html"]
    titles = re.findall(r'<label for="[^"]+">([^<]+)</label>', page)
    assert titles == ["LLVM IR", "Assembly", "Loop report", "TIR"]
    text = _visible_text(page)
    assert "define" in text and "@main" in text
    assert "parallel -> " in text and "vectorized -> SIMD x16" in text
    assert "T.parallel(8)" in text


def test_cuda_module_tabs_show_the_highlighted_source_next_to_the_loop_ir():
    A = te.placeholder((256,), name="A")
    B = te.compute((256,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    bo, ti = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bo, te.thread_axis("blockIdx.x"))
    s[B].bind(ti, te.thread_axis("threadIdx.x"))
    mod = ansor_lab.build(s, [A, B], target="cuda")
    bundle = D.mimebundle(mod)
    page = bundle["text/html"]
    titles = re.findall(r'<label for="[^"]+">([^<]+)</label>', page)
    assert titles[:2] == ["CUDA", "Launch plan"] and titles[-1] == "TIR"
    text = _visible_text(page)
    assert "__global__" in text and "threadIdx.x" in text
    assert "main_kernel0<<<grid (4, 1, 1), block (64, 1, 1), 0 B shared>>>(A, B)" in text
    assert "T.thread_binding(64" in text
    sources = bundle[D.SOURCE_MIME]["sources"]
    assert sources[0]["language"] == "cuda" and "__global__" in sources[0]["text"]


def test_records_table_top_k(tmp_path):
    A, B, C, E = _workload()
    task = auto_scheduler.SearchTask(compute_dag=te.ComputeDAG([A, B, E]), target="llvm")
    trace = _scheduled().trace.as_json()
    costs = [3e-4, 1e-4, 2e-4, 5e-4]
    inputs = [MeasureInput(task, trace) for _ in range(5)]
    results = [MeasureResult([c, c]) for c in costs] + [MeasureResult([], error_no=4)]
    log = tmp_path / "log.json"
    save_records(str(log), inputs, results)
    table = D.records_table(log, k=3)
    assert table.total == 5 and table.errors == 1
    assert [r["rank"] for r in table.rows] == [1, 2, 3]
    assert [r["mean_ms"] for r in table.rows] == pytest.approx([0.1, 0.2, 0.3])
    want = [task.flop_ct / c / 1e9 for c in (1e-4, 2e-4, 3e-4)]
    assert [r["gflops"] for r in table.rows] == pytest.approx(want)
    bundle = table._repr_mimebundle_()
    assert bundle["text/plain"] == repr(table)
    page = bundle["text/html"]
    assert page.count("<tr>") == 1 + 3  # header + k rows
    assert f"{want[0]:.4g}" in page and "GFLOPS" in page
    assert "sch.split(loop=l1, factors=[None, 4])" in _visible_text(page)  # replayed trace
    assert "top 3 of 5" in _visible_text(page)


def test_show_and_mimebundle_dispatch():
    sch = _scheduled()
    assert "text/html" in D.mimebundle(sch.trace)
    assert D.mimebundle(42) == {"text/plain": "42"}


def test_extension_in_a_real_shell():
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    sch = _scheduled()
    func = sch.mod["main"]
    try:
        ip.run_line_magic("load_ext", "ansor_lab")
        data, _ = ip.display_formatter.format(func)
        assert data["text/plain"] == repr(func)
        assert "<span style=" in data["text/html"]
        data, _ = ip.display_formatter.format(sch)
        assert data["text/plain"] == repr(sch) and "al-loopnest" in data["text/html"]
        data, _ = ip.display_formatter.format(te.ComputeDAG(sch.args))
        assert data["image/svg+xml"].startswith("<svg")

        ip.run_line_magic("ansor_target", "cuda")
        assert as_target(None).kind == "cuda"
        task = auto_scheduler.SearchTask(compute_dag=te.ComputeDAG(sch.args))
        assert task.target.kind == "cuda"
        with ansor_lab.Target("llvm"):  # a with-block still wins over the default
            assert as_target(None).kind == "llvm"
        ip.run_line_magic("ansor_target", "llvm -num-cores=1")
        assert as_target(None).kind == "llvm" and as_target(None).num_cores == 1
        ip.run_line_magic("ansor_target", "none")
        assert as_target(None).num_cores == ansor_lab.Target("llvm").num_cores

        ip.run_line_magic("unload_ext", "ansor_lab")
        data, _ = ip.display_formatter.format(func)
        assert "text/html" not in data and data["text/plain"] == repr(func)
        assert "ansor_target" not in ip.magics_manager.magics["line"]
    finally:
        set_default_target(None)


def test_import_stays_light():
    code = (
        "import sys, json, ansor_lab, ansor_lab.jupyter\n"
        "from ansor_lab.jupyter import extension\n"
        "heavy = [m for m in ('ipywidgets', 'plotly', 'pygments', 'IPython', 'anywidget')"
        " if m in sys.modules]\n"
        "ours = sorted(m for m in sys.modules if m.startswith('ansor_lab.jupyter.'))\n"
        "print(json.dumps([heavy, ours]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    heavy, ours = json.loads(out)
    assert heavy == []
    assert ours == ["ansor_lab.jupyter.extension"]


def test_highlight_keeps_big_code_small():
    from ansor_lab.jupyter.html import highlight

    code = "\n".join(f"x{i} = {i} + y" for i in range(2000))
    page = highlight(code)
    assert "<style>" in page and 'class="' in page  # class-based beyond INLINE_LINES
    assert len(page) < 40 * len(code)
