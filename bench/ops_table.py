"""The arithmetic and tables of bench/bench_ops.py, apart from any timing (unit-tested).

``bench_ops.py`` appends one JSON record per measurement to a JSON-lines file (so a killed
run loses nothing); this module turns those records into rows and tables:

- ``kind="ours"``: one search of one seed, at one budget (``trials``): ``ours_s`` (the
  best program re-timed), ``rel_error``, ``tune_s`` (wall time to that budget), ``invalid``;
- ``kind="ms"``: MetaSchedule's best at a budget: ``ms_s``, ``rel_error``, ``tune_s``;
- ``kind="numpy"`` / ``kind="torch"``: a peer's time ``s`` for an operator and thread count;
- ``kind="side_by_side"``: per operator and budget, every seed's best program (``ours``:
  seed -> seconds), numpy and PyTorch timed in turns in one process (``bench_ops.in_turns``)
  and MetaSchedule's best (``ms``) re-timed in its own between the rounds: the seeds' spread
  and the ratios without the machine's drift between measurements;
- ``kind="bandwidth"``: the streaming read bandwidth ``gbs`` of a thread count (``stat``:
  the best of 15 repeats; a record without it is an older median of 7).

Every ratio is a peer's time over ours (> 1: we are faster). Our time for a ratio is the
median over the seeds; the seeds' best, worst, median and spread (worst time / best time,
>= 1) are reported apart.
"""

from __future__ import annotations

import math
import statistics

PEERS = ("numpy", "torch", "ms")
#: the small-budget stability target of issue 21: the worst seed within 10% of the best
SPREAD_TARGET = 1.10
#: a program is correct when its max abs error over max(1, max |reference|) is below this
REL_ERROR_OK = 1e-3
#: bytes the GEMV of bench_ops (gemv_ffn) reads: its weight matrix
GEMV_BYTES = 768 * 3072 * 4


def geomean(xs) -> float | None:
    """Geometric mean of the positive finite values (None when there are none)."""
    xs = [x for x in xs if x is not None and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def ratio(peer_s: float | None, ours_s: float | None) -> float | None:
    """A peer's time over ours (> 1: we are faster); None when either is missing."""
    if not peer_s or not ours_s or not math.isfinite(peer_s) or not math.isfinite(ours_s):
        return None
    return peer_s / ours_s


def spread(times: list[float]) -> dict:
    """Best, worst and median time of the seeds, and the spread worst / best (>= 1)."""
    ts = sorted(t for t in times if t is not None and math.isfinite(t) and t > 0)
    if not ts:
        return {"best_s": None, "worst_s": None, "median_s": None, "spread": None, "n": 0}
    return {
        "best_s": ts[0],
        "worst_s": ts[-1],
        "median_s": statistics.median(ts),
        "spread": ts[-1] / ts[0],
        "n": len(ts),
    }


def record_key(rec: dict) -> tuple:
    """What identifies a record for resuming: a second record with this key is a repeat."""
    return (
        rec["kind"],
        rec.get("op"),
        rec.get("threads"),
        rec.get("trials"),
        rec.get("seed"),
    )


def build_rows(records: list[dict], flops: dict[str, float], families: dict[str, str]) -> list:
    """One row per (operator, threads, trials) with our seeds, each peer and the ratios.

    The last record of a key wins (a re-run replaces an earlier measurement). ``flops`` and
    ``families`` map operator names to their flop count and family.
    """
    last = {record_key(r): r for r in records}
    ours: dict[tuple, list[dict]] = {}
    for r in last.values():
        if r["kind"] == "ours":
            ours.setdefault((r["op"], r["threads"], r["trials"]), []).append(r)
    peer_s = {
        (r["kind"], r["op"], r["threads"]): r["s"]
        for r in last.values()
        if r["kind"] in ("numpy", "torch")
    }
    peer_cpu = {
        (r["kind"], r["op"], r["threads"]): r.get("cpu_s")
        for r in last.values()
        if r["kind"] in ("numpy", "torch")
    }
    ms = {}
    for r in last.values():
        if r["kind"] == "ms":
            ms.setdefault((r["op"], r["threads"], r["trials"]), []).append(r)
    turns = {  # the seeds and peers timed in turns
        (r["op"], r["threads"], r["trials"]): r
        for r in last.values()
        if r["kind"] == "side_by_side"
    }
    rows = []
    for (op, thr, trials), recs in ours.items():
        recs = sorted(recs, key=lambda r: r.get("seed") or 0)
        sp = spread([r["ours_s"] for r in recs])
        cpu = spread([r.get("ours_cpu_s") for r in recs])
        ms_recs = ms.get((op, thr, trials), [])
        ms_sp = spread([r["ms_s"] for r in ms_recs])
        times = {
            "numpy": peer_s.get(("numpy", op, thr)),
            "torch": peer_s.get(("torch", op, thr)),
            "ms": ms_sp["median_s"],
        }
        cpu_times = {  # the process CPU clock (1 thread): what the load leaves out
            "numpy": peer_cpu.get(("numpy", op, thr)),
            "torch": peer_cpu.get(("torch", op, thr)),
            "ms": spread([r.get("ms_cpu_s") for r in ms_recs])["median_s"],
        }
        row = {
            "op": op,
            "family": families.get(op, "?"),
            "threads": thr,
            "trials": trials,
            "seeds": sp["n"],
            "ours_s": sp["median_s"],
            "ours_best_s": sp["best_s"],
            "ours_worst_s": sp["worst_s"],
            "spread": sp["spread"],
            "cpu_spread": cpu["spread"],  # the same on the CPU clock (1 thread)
            "ours_cpu_s": cpu["median_s"],
            "ours_cpu_best_s": cpu["best_s"],
            "ours_cpu_worst_s": cpu["worst_s"],
            "gflops": flops.get(op, 0.0) / sp["median_s"] / 1e9 if sp["median_s"] else None,
            "rel_error": max(r["rel_error"] for r in recs),
            "tune_s": statistics.median(r["tune_s"] for r in recs),
            "invalid": max(r.get("invalid", 0) for r in recs),
            "ms_tune_s": statistics.median(r["tune_s"] for r in ms_recs) if ms_recs else None,
            "ms_rel_error": max((r["rel_error"] for r in ms_recs), default=None),
            **{f"{p}_s": times[p] for p in PEERS},
            **{f"vs_{p}": ratio(times[p], sp["median_s"]) for p in PEERS},
            **{f"cpu_vs_{p}": ratio(cpu_times[p], cpu["median_s"]) for p in PEERS},
        }
        avail = {p: t for p, t in times.items() if t}
        best = min(avail, key=avail.get) if avail else None
        row["best_peer"] = best
        row["vs_best"] = ratio(avail[best], sp["median_s"]) if best else None
        avail = {p: t for p, t in cpu_times.items() if t}
        best = min(avail, key=avail.get) if avail else None
        row["cpu_vs_best"] = ratio(avail[best], cpu["median_s"]) if best else None
        row["tune_vs_ms"] = (
            row["tune_s"] / row["ms_tune_s"] if row["ms_tune_s"] else None
        )  # < 1: we tune faster
        row.update(in_turns_columns(turns.get((op, thr, trials))))
        rows.append(row)
    order = {op: k for k, op in enumerate(flops)}
    rows.sort(key=lambda r: (r["threads"], r["trials"], order.get(r["op"], len(order))))
    return rows


def in_turns_columns(rec: dict | None) -> dict:
    """The side-by-side columns of a row (None without a ``side_by_side`` record): the
    seeds' spread and each peer's time over our seeds' median, all timed in turns."""
    if rec is None:
        return {"turns_spread": None, "turns_vs_numpy": None, "turns_vs_torch": None,
                "turns_vs_ms": None, "turns_vs_best": None, "turns_n": 0}  # fmt: skip
    sp = spread(list(rec["ours"].values()))
    vs = {p: ratio(rec.get(p), sp["median_s"]) for p in PEERS}
    best = [v for v in vs.values() if v]
    return {
        "turns_spread": sp["spread"],
        "turns_vs_numpy": vs["numpy"],
        "turns_vs_torch": vs["torch"],
        "turns_vs_ms": vs["ms"],
        "turns_vs_best": min(best) if best else None,
        "turns_n": sp["n"],
    }


def family_summary(rows: list[dict]) -> dict[str, dict]:
    """Per family (in order of appearance) and ``"GEOMEAN"``: the geomean of each ratio."""
    out: dict[str, dict] = {}
    keys = [f"{c}vs_{p}" for c in ("", "cpu_") for p in (*PEERS, "best")]
    for fam in dict.fromkeys(r["family"] for r in rows):
        sel = [r for r in rows if r["family"] == fam]
        out[fam] = {k: geomean([r[k] for r in sel]) for k in keys}
    out["GEOMEAN"] = {k: geomean([r[k] for r in rows]) for k in keys}
    return out


def _x(v) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _g(gflop: float, s: float | None) -> str:
    return "-" if not s else f"{gflop / s:.1f}"


def _n(v, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def format_report(rows: list[dict], bandwidth: dict | None = None) -> str:
    """The tables: per operator, the seeds' spread, per family + geomean, tuning time,
    bandwidth, correctness."""
    lines: list[str] = []
    head = (
        f"{'operator':18} {'thr':>3} {'trials':>6} {'ours us':>9} {'GFLOPS':>7} {'numpy':>7}"
        f" {'torch':>7} {'MS':>7} {'best peer':>14} {'tune s':>6} {'MS s':>5} {'err':>8}"
        f" {'MS err':>8}"
    )
    lines += [head, "-" * len(head)]
    for r in rows:
        best = f"{_x(r['vs_best'])} {r['best_peer'] or ''}".strip()
        us = _n(r["ours_s"] and r["ours_s"] * 1e6, "9.1f")
        lines.append(
            f"{r['op']:18} {r['threads']:>3} {r['trials']:>6} {us:>9}"
            f" {_n(r['gflops'], '7.1f'):>7} {_x(r['vs_numpy']):>7} {_x(r['vs_torch']):>7}"
            f" {_x(r['vs_ms']):>7} {best:>14} {_n(r['tune_s'], '6.0f'):>6}"
            f" {_n(r['ms_tune_s'], '5.0f'):>5} {_n(r['rel_error'], '8.1e'):>8}"
            f" {_n(r['ms_rel_error'], '8.1e'):>8}"
        )
    lines.append(
        "(peer columns: the peer's time over ours, > 1 means we are faster; ours is the median"
        " of the seeds)"
    )
    if any(r["cpu_vs_best"] for r in rows):
        lines.append(
            f"\ncpu clock (1 thread): {'operator':18} {'trials':>6} {'numpy':>7} {'torch':>7}"
            f" {'MS':>7} {'best peer':>9}"
        )
        for r in rows:
            if r["cpu_vs_best"]:
                lines.append(
                    f"                      {r['op']:18} {r['trials']:>6}"
                    f" {_x(r['cpu_vs_numpy']):>7} {_x(r['cpu_vs_torch']):>7}"
                    f" {_x(r['cpu_vs_ms']):>7} {_x(r['cpu_vs_best']):>9}"
                )
    if any(r["seeds"] > 1 for r in rows):
        lines.append(
            f"\nseeds: {'operator':18} {'thr':>3} {'trials':>6} {'n':>2} {'best GF':>8}"
            f" {'median':>8} {'worst GF':>8} {'spread':>7} | cpu clock: {'best':>6} {'median':>6}"
            f" {'worst':>6} {'spread':>6}"
        )
        for r in rows:
            f = r["gflops"] * r["ours_s"] if r["gflops"] else 0.0  # flops / 1e9
            ok = "ok" if r["spread"] is not None and r["spread"] <= SPREAD_TARGET else "OVER"
            lines.append(
                f"       {r['op']:18} {r['threads']:>3} {r['trials']:>6} {r['seeds']:>2}"
                f" {f / r['ours_best_s']:8.1f} {f / r['ours_s']:8.1f} {f / r['ours_worst_s']:8.1f}"
                f" {r['spread']:6.2f}x | {'':10} {_g(f, r['ours_cpu_best_s']):>6}"
                f" {_g(f, r['ours_cpu_s']):>6} {_g(f, r['ours_cpu_worst_s']):>6}"
                f" {_x(r['cpu_spread']):>6} {ok}"
            )
        lines.append(f"(spread: worst seed's time over the best's; target <= {SPREAD_TARGET}x)")
    if any(r["turns_n"] for r in rows):
        lines.append(
            "\ntimed in turns (the seeds' best programs, numpy and torch in one process, MS's"
            " best re-timed in its own between the rounds; wall clock):"
            f"\n       {'operator':18} {'thr':>3} {'trials':>6} {'n':>2} {'spread':>7}"
            f" {'numpy':>7} {'torch':>7} {'MS':>7} {'best peer':>9}"
        )
        for r in rows:
            if r["turns_n"]:
                ok = "ok" if r["turns_spread"] <= SPREAD_TARGET else "OVER"
                lines.append(
                    f"       {r['op']:18} {r['threads']:>3} {r['trials']:>6} {r['turns_n']:>2}"
                    f" {r['turns_spread']:6.2f}x {_x(r['turns_vs_numpy']):>7}"
                    f" {_x(r['turns_vs_torch']):>7} {_x(r['turns_vs_ms']):>7}"
                    f" {_x(r['turns_vs_best']):>9} {ok}"
                )
        timed = [r for r in rows if r["turns_n"]]
        lines.append(
            f"       {'GEOMEAN':18} {'':>3} {'':>6} {'':>2} {'':>7}"
            + "".join(
                f" {_x(geomean([r[f'turns_vs_{p}'] for r in timed])):>{w}}"
                for p, w in (("numpy", 7), ("torch", 7), ("ms", 7), ("best", 9))
            )
        )
    for thr, trials in sorted({(r["threads"], r["trials"]) for r in rows}):
        sel = [r for r in rows if r["threads"] == thr and r["trials"] == trials]
        lines.append(f"\nper family, {thr} thread(s), {trials} trials (geomean of peer/ours):")
        for fam, g in family_summary(sel).items():
            lines.append(
                f"  {fam:12} numpy {_x(g['vs_numpy']):>7}  torch {_x(g['vs_torch']):>7}"
                f"  MS {_x(g['vs_ms']):>7}  best peer {_x(g['vs_best']):>7}"
                + (
                    f"  | cpu clock: numpy {_x(g['cpu_vs_numpy']):>7}  torch"
                    f" {_x(g['cpu_vs_torch']):>7}  MS {_x(g['cpu_vs_ms']):>7}  best"
                    f" {_x(g['cpu_vs_best']):>7}"
                    if g["cpu_vs_best"]
                    else ""
                )
            )
        tuned = [r for r in sel if r["ms_tune_s"]]
        if tuned:
            ours_t = sum(r["tune_s"] for r in tuned)
            ms_t = sum(r["ms_tune_s"] for r in tuned)
            lines.append(
                f"  tuning wall time ({len(tuned)} ops): ours {ours_t:.0f} s, MetaSchedule"
                f" {ms_t:.0f} s = {ours_t / ms_t:.2f}x (per op geomean"
                f" {_x(geomean([r['tune_vs_ms'] for r in tuned]))})"
            )
    for thr, gbs in (bandwidth or {}).items():
        gemv = [r for r in rows if r["family"] == "gemv" and r["threads"] == thr]
        share = "".join(  # the GEMV reads its 768x3072 float32 weights once
            f"; GEMV {r['trials']} trials: {GEMV_BYTES / r['ours_s'] / 1e9:.1f} GB/s"
            f" = {GEMV_BYTES / r['ours_s'] / 1e9 / gbs:.0%}"
            for r in gemv
            if r["ours_s"]
        )
        lines.append(f"\nstreaming read bandwidth, {thr} thread(s): {gbs:.1f} GB/s{share}")
    bad = [r["op"] for r in rows if not r["rel_error"] < REL_ERROR_OK]
    bad += [
        f"{r['op']} (MS)"
        for r in rows
        if r["ms_rel_error"] is not None and not r["ms_rel_error"] < REL_ERROR_OK
    ]
    lines.append("\ncorrectness: " + ("every program matches numpy" if not bad else f"FAIL {bad}"))
    return "\n".join(lines)
