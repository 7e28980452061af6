"""bench/ops_table.py: the ratios, spreads, family geomeans and tables of bench_ops.py
(arithmetic on fixed records; no timing)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from ops_table import (  # noqa: E402 - the bench directory is not a package
    build_rows,
    family_summary,
    format_report,
    geomean,
    ratio,
    record_key,
    spread,
)

FLOPS = {"gemm": 2e9, "conv": 1e9, "softmax": 1e6}
FAMILIES = {"gemm": "gemm", "conv": "conv", "softmax": "softmax"}


def ours(op, seed, s, trials=64, err=1e-7, tune_s=10.0):
    return dict(kind="ours", op=op, threads=1, trials=trials, seed=seed, ours_s=s,
                rel_error=err, tune_s=tune_s, invalid=0)  # fmt: skip


def peer(kind, op, s):
    return dict(kind=kind, op=op, threads=1, s=s)


def ms(op, s, tune_s=100.0, err=2e-7):
    return dict(kind="ms", op=op, threads=1, trials=64, seed=0, ms_s=s, rel_error=err,
                tune_s=tune_s)  # fmt: skip


RECORDS = [
    # gemm: seeds 0.010, 0.012, 0.011 -> median 0.011, spread 1.2
    ours("gemm", 0, 0.010, tune_s=9.0),
    ours("gemm", 1, 0.012, tune_s=11.0),
    ours("gemm", 2, 0.011, tune_s=10.0),
    peer("numpy", "gemm", 0.022),
    peer("torch", "gemm", 0.0055),
    ms("gemm", 0.0165, tune_s=40.0),
    # conv: one seed, no torch
    ours("conv", 0, 0.004),
    peer("numpy", "conv", 0.040),
    ms("conv", 0.008),
    # softmax: no MetaSchedule
    ours("softmax", 0, 2e-5),
    peer("numpy", "softmax", 4e-5),
    peer("torch", "softmax", 1e-5),
]


def test_geomean_ratio_and_spread():
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([None, 0.0, math.inf, 3.0]) == pytest.approx(3.0)
    assert geomean([None]) is None
    assert ratio(0.03, 0.01) == pytest.approx(3.0)
    assert ratio(None, 0.01) is None and ratio(0.01, None) is None
    s = spread([0.012, 0.010, math.inf, 0.011, None])
    assert s == {"best_s": 0.010, "worst_s": 0.012, "median_s": 0.011,
                 "spread": pytest.approx(1.2), "n": 3}  # fmt: skip
    assert spread([])["spread"] is None


def test_rows_ratios_best_peer_and_tuning_time():
    rows = {r["op"]: r for r in build_rows(RECORDS, FLOPS, FAMILIES)}
    assert list(rows) == ["gemm", "conv", "softmax"]  # the operators' order
    g = rows["gemm"]
    assert g["seeds"] == 3 and g["ours_s"] == pytest.approx(0.011)
    assert g["ours_best_s"] == 0.010 and g["ours_worst_s"] == 0.012
    assert g["spread"] == pytest.approx(1.2)
    assert g["gflops"] == pytest.approx(2e9 / 0.011 / 1e9)
    assert g["vs_numpy"] == pytest.approx(2.0)
    assert g["vs_torch"] == pytest.approx(0.5)
    assert g["vs_ms"] == pytest.approx(1.5)
    assert g["best_peer"] == "torch" and g["vs_best"] == pytest.approx(0.5)
    assert g["tune_s"] == 10.0 and g["ms_tune_s"] == 40.0
    assert g["tune_vs_ms"] == pytest.approx(0.25)
    c = rows["conv"]
    assert c["vs_torch"] is None and c["best_peer"] == "ms" and c["vs_best"] == pytest.approx(2)
    s = rows["softmax"]
    assert s["vs_ms"] is None and s["ms_tune_s"] is None and s["tune_vs_ms"] is None
    assert s["best_peer"] == "torch" and s["vs_best"] == pytest.approx(0.5)


def test_last_record_of_a_key_wins():
    rows = build_rows([*RECORDS, ours("conv", 0, 0.002)], FLOPS, FAMILIES)
    conv = next(r for r in rows if r["op"] == "conv")
    assert conv["ours_s"] == 0.002 and conv["vs_numpy"] == pytest.approx(20.0)
    assert record_key(ours("conv", 0, 1.0)) == ("ours", "conv", 1, 64, 0)
    assert record_key(peer("numpy", "conv", 1.0)) == ("numpy", "conv", 1, None, None)


def test_cpu_clock_ratios():
    recs = [
        {**ours("gemm", 0, 0.010), "ours_cpu_s": 0.008},
        {**ours("gemm", 1, 0.012), "ours_cpu_s": 0.009},
        {**peer("numpy", "gemm", 0.022), "cpu_s": 0.017},
        {**ms("gemm", 0.0165), "ms_cpu_s": 0.0136},
    ]
    (g,) = build_rows(recs, FLOPS, FAMILIES)
    assert g["cpu_spread"] == pytest.approx(9 / 8)
    assert g["cpu_vs_numpy"] == pytest.approx(0.017 / 0.0085)
    assert g["cpu_vs_ms"] == pytest.approx(0.0136 / 0.0085)
    assert g["cpu_vs_torch"] is None
    assert g["cpu_vs_best"] == pytest.approx(0.0136 / 0.0085)
    text = format_report([g])
    assert "cpu clock (1 thread)" in text
    assert "181.8 166.7 1.20x | 250.0 235.3 222.2 1.12x OVER" in " ".join(text.split())
    assert "gemm 64 2.00x - 1.60x 1.60x" in " ".join(text.split())
    assert family_summary([g])["GEOMEAN"]["cpu_vs_best"] == pytest.approx(1.6)


def test_family_geomeans():
    rows = build_rows(RECORDS, FLOPS, FAMILIES)
    fam = family_summary(rows)
    assert list(fam) == ["gemm", "conv", "softmax", "GEOMEAN"]
    assert fam["conv"]["vs_numpy"] == pytest.approx(10.0)
    assert fam["GEOMEAN"]["vs_numpy"] == pytest.approx((2.0 * 10.0 * 2.0) ** (1 / 3))
    assert fam["GEOMEAN"]["vs_ms"] == pytest.approx(math.sqrt(1.5 * 2.0))
    assert fam["GEOMEAN"]["vs_torch"] == pytest.approx(0.5)
    assert fam["GEOMEAN"]["vs_best"] == pytest.approx((0.5 * 2.0 * 0.5) ** (1 / 3))


def test_report_tables():
    rows = build_rows(RECORDS, FLOPS, FAMILIES)
    text = format_report(rows, {1: 12.5})
    lines = text.splitlines()
    gemm = next(line for line in lines if line.startswith("gemm "))
    assert gemm.split() == ["gemm", "1", "64", "11000.0", "181.8", "2.00x", "0.50x", "1.50x",
                            "0.50x", "torch", "10", "40", "1.0e-07", "2.0e-07"]  # fmt: skip
    seeds = next(line for line in lines if line.strip().startswith("gemm ") and "OVER" in line)
    assert seeds.split()[4:] == ["200.0", "181.8", "166.7", "1.20x", "|", "-", "-", "-", "-",
                                 "OVER"]  # fmt: skip
    assert any(line.strip().split()[:2] == ["conv", "1"] and line.endswith("ok") for line in lines)
    assert "  tuning wall time (2 ops): ours 20 s, MetaSchedule 140 s = 0.14x" in text
    assert "streaming read bandwidth, 1 thread(s): 12.5 GB/s" in text
    gemv = build_rows([ours("gemv", 0, 768 * 3072 * 4 / 5e9)], {"gemv": 1.0}, {"gemv": "gemv"})
    assert "12.5 GB/s; GEMV 64 trials: 5.0 GB/s = 40%" in format_report(gemv, {1: 12.5})
    assert text.endswith("correctness: every program matches numpy")
    bad = build_rows([*RECORDS, ms("conv", 0.008, err=0.5)], FLOPS, FAMILIES)
    assert format_report(bad).endswith("correctness: FAIL ['conv (MS)']")


def test_seeds_and_peers_timed_in_turns():
    turns = dict(kind="side_by_side", op="gemm", threads=1, trials=64,
                 ours={"0": 0.010, "1": 0.0104, "2": 0.0102}, numpy=0.0204, torch=0.0051,
                 ms=0.0153)  # fmt: skip
    rows = build_rows([*RECORDS, turns], FLOPS, FAMILIES)
    g = next(r for r in rows if r["op"] == "gemm")
    assert g["turns_n"] == 3 and g["turns_spread"] == pytest.approx(1.04)
    assert g["turns_vs_numpy"] == pytest.approx(2.0)
    assert g["turns_vs_torch"] == pytest.approx(0.5)
    assert g["turns_vs_ms"] == pytest.approx(1.5)
    assert g["turns_vs_best"] == pytest.approx(0.5)
    assert g["spread"] == pytest.approx(1.2)  # the seeds' own re-times are kept apart
    conv = next(r for r in rows if r["op"] == "conv")
    assert conv["turns_n"] == 0 and conv["turns_spread"] is None
    text = " ".join(format_report(rows).split())
    assert "timed in turns" in text
    assert "gemm 1 64 3 1.04x 2.00x 0.50x 1.50x 0.50x ok" in text
    assert "GEOMEAN 2.00x 0.50x 1.50x 0.50x" in text  # one operator timed in turns
