"""bench/bench_ops.py's arrays: inputs and the output start on 64 bytes, as the tuner's do.

An output 4 or 16 bytes off made the same column-sum program time 63 us instead of 47 us in
the bench's re-time, and that showed as a seed spread the search did not cause."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from bench_ops import SelfTimed, in_turns, inputs_for, output_for  # noqa: E402 - the bench directory is not a package

from ansor_lab import te  # noqa: E402


def test_inputs_and_output_are_aligned_and_the_output_zeroed():
    a = te.placeholder((7, 13), name="A")
    b = te.placeholder((13,), name="B")
    c = te.compute((7, 13), lambda i, j: a[i, j] + b[j], name="C")
    for _ in range(5):  # several allocations: numpy's own would land 16 bytes apart
        ins, out = inputs_for([a, b, c]), output_for([a, b, c])
        assert [x.shape for x in ins] == [(7, 13), (13,)] and out.shape == (7, 13)
        assert all(x.ctypes.data % 64 == 0 for x in (*ins, out))
        assert out.dtype == np.float32 and not out.any()
        assert all(-1 <= x.min() and x.max() < 1 and x.std() > 0.3 for x in ins)


def test_in_turns_times_every_function_each_round_starting_from_a_different_one():
    calls: list[str] = []
    fns = {n: (lambda n=n: calls.append(n)) for n in "abc"}
    t = in_turns(fns, rounds=3)
    assert set(t) == {"a", "b", "c"} and all(0 < v < 1e-3 for v in t.values())
    firsts = [calls[0]]  # the first call of each round's first function
    for prev, cur in zip(calls, calls[1:]):
        if cur != prev and len(firsts) < 7:
            firsts.append(cur)
    assert firsts[:7] == ["a", "b", "c", "b", "c", "a", "c"]


def test_in_turns_takes_a_self_timed_measurement_in_its_rounds():
    told = iter([0.5, None, 0.3, 0.4])
    t = in_turns({"a": lambda: None, "ms": SelfTimed(lambda: next(told), every=2)}, rounds=7)
    assert t["ms"] == pytest.approx(0.4)  # rounds 0, 2, 4, 6; the None left out
    assert in_turns({"a": lambda: None, "b": SelfTimed(lambda: None)}, rounds=1).keys() == {"a"}
