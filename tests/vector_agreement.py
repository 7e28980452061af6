"""The printed vector form agrees with what the LLVM generator emitted.

``check(func, reports)`` takes a function in ``prepare``'s form for llvm and the loop
reports its compilation produced, and asserts, loop by loop in program order, that the
vector form (``codegen.vector_form``) shows what the generator did: the lanes, the
power-of-two chunks, and per chunk each memory access's kind (vector, broadcast scalar,
gather/scatter, masked), counted as the generator counts them (a whole contiguous access
of a chunk whose width is not a power of two may be a masked one of the next power,
``padded_loads`` / ``padded_stores``); scalar fallbacks and transposed copies carry the
generator's own outcome as their mark.
"""

from __future__ import annotations

from ansor_lab.codegen.pipeline import VECTORIZE_KEY
from ansor_lab.codegen.vector_form import is_simd, vector_accesses, vector_loops
from ansor_lab.ir import nodes as N
from ansor_lab.ir.visitor import walk_stmts

_LOADS = {
    "contiguous": "vector_loads",
    "scalar": "scalar_loads",
    "strided": "strided_loads",
    "gather": "gathers",
}
_STORES = {"contiguous": "vector_stores", "scalar": "scalar_stores", "gather": "scatters"}


def expected_counts(chunks: tuple) -> tuple[dict, dict]:
    """(the generator's access counts, summed over chunks, that the vector statements
    imply; masked contiguous accesses, which the generator does whole when every lane's
    element provably exists, as {(plain key, masked keys): count})."""
    counts: dict = {}
    flexible: dict = {}
    for _, stmt in chunks:
        for acc in vector_accesses(stmt):
            keys = _LOADS if acc.op == "load" else _STORES
            if acc.masked and acc.kind == "contiguous":
                alt = "masked_loads" if acc.op == "load" else "masked_stores|blend_stores"
                flexible[(keys[acc.kind], alt)] = flexible.get((keys[acc.kind], alt), 0) + 1
            elif acc.masked and acc.kind == "scalar" and acc.op == "store":
                continue  # stored if any lane is on: not counted
            else:
                counts[keys[acc.kind]] = counts.get(keys[acc.kind], 0) + 1
    return counts, flexible


def check(func: N.PrimFunc, reports: list) -> list[str]:
    """Assert the vector form of ``func`` agrees with ``reports``; returns each
    vectorized loop's outcome (``SIMD x16 (8+8)``, ``scalar loop (...)``, ...)."""
    _, loops = vector_loops(func)
    pending = iter(loops)
    marked = [
        s
        for s in walk_stmts(func.body)
        if isinstance(s, N.For) and s.annotation(VECTORIZE_KEY) is not None
    ]
    vector_reports = [r for r in reports if r.kind == "vectorized"]
    assert len(marked) == len(vector_reports), (
        [s.annotation(VECTORIZE_KEY) for s in marked],
        [str(r) for r in vector_reports],
    )
    outcomes = []
    for loop, rep in zip(marked, vector_reports):
        if not is_simd(loop):
            assert rep.outcome == loop.annotation(VECTORIZE_KEY), (str(rep), loop)
            outcomes.append(rep.outcome)
            continue
        vloop = next(pending)
        assert vloop.name == loop.loop_var.name == rep.name
        widths = [n for n, _ in vloop.chunks]
        assert sum(widths) == vloop.lanes and rep.outcome == f"SIMD x{vloop.lanes}", str(rep)
        got = dict(rep.detail)
        for kind in ("loads", "stores"):  # padded: a whole access, masked to a power of two
            padded = int(got.pop(f"padded_{kind}", 0))
            if padded:
                assert any(n & (n - 1) for n in widths), (str(rep), widths)
                got[f"vector_{kind}"] = int(got.get(f"vector_{kind}", 0)) + padded
        shown = "+".join(str(n) for n in widths)
        assert got.pop("chunks", str(vloop.lanes)) == shown, (shown, str(rep))
        counts, flexible = expected_counts(vloop.chunks)
        for (plain, alts), n in flexible.items():
            taken = sum(got.pop(a, 0) for a in alts.split("|"))
            assert 0 <= taken <= n, (str(rep), flexible)
            counts[plain] = counts.get(plain, 0) + n - taken
        assert {k: v for k, v in counts.items() if v} == got, (str(rep), counts)
        outcomes.append(rep.outcome + (f" ({shown})" if len(widths) > 1 else ""))
    assert next(pending, None) is None
    return outcomes
