"""bench/bench_prior.py: the ranking numbers (arithmetic on fixed scores; no timing)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from bench_prior import OPS, ranking  # noqa: E402 - the bench directory is not a package


def test_a_prior_that_orders_like_the_clock_scores_one():
    costs = np.array([4.0, 1.0, 3.0, 2.0])
    row = ranking(costs, 1.0 / costs)
    assert row == {"n": 4, "rho": pytest.approx(1.0), "top1": 1.0, "top5": 1.0, "top12": 1.0}


def test_a_reversed_prior_and_its_first_picks():
    costs = np.arange(1.0, 21.0)  # 1..20 seconds; the prior likes the slowest best
    row = ranking(costs, costs.copy())
    assert row["rho"] == pytest.approx(-1.0)
    assert row["top1"] == 20.0 and row["top5"] == 16.0 and row["top12"] == 9.0


def test_both_benches_operators_are_offered():
    assert {"conv_grouped", "gemv_ffn", "dw_s2_mobilenet", "bmm_vit"} <= set(OPS)
