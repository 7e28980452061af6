"""``time_evaluator`` takes TVM's keywords, honours them, and refuses misspelt ones."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import IgnoredArgumentWarning, RuntimeArgumentError, UnknownKeywordError
from ansor_lab.runtime import module as runtime_module


@pytest.fixture(scope="module")
def add_one():
    A = te.placeholder((3, 4), "float32", name="A")
    B = te.compute((3, 4), lambda i, j: A[i, j] + 1.0, name="B")
    return tvm.build(te.create_schedule(B.op), [A, B], target="llvm")


def _args():
    return np.ones((3, 4), "float32"), np.zeros((3, 4), "float32")


class _RecordingFlusher(runtime_module.CacheFlusher):
    made: list = []

    def __init__(self, target, nbytes=None):
        super().__init__(target, nbytes)
        self.calls = 0
        _RecordingFlusher.made.append(self)

    def __call__(self):
        self.calls += 1
        super().__call__()


@pytest.fixture
def flushers(monkeypatch):
    _RecordingFlusher.made = []
    monkeypatch.setattr(runtime_module, "CacheFlusher", _RecordingFlusher)
    return _RecordingFlusher.made


def test_a_misspelt_keyword_is_an_error_naming_it(add_one):
    with pytest.raises(UnknownKeywordError) as info:
        add_one.time_evaluator(numbr=3)
    msg = str(info.value)
    assert "unknown keyword 'numbr' (did you mean 'number'?)" in msg
    assert "it accepts func_name, dev, number, repeat, min_repeat_ms, " in msg
    assert "f_preproc, enable_cpu_cache_flush" in msg


def test_several_unknown_keywords_are_all_named(add_one):
    with pytest.raises(UnknownKeywordError, match=r"unknown keywords 'repaet' .*, 'zzz'"):
        add_one.time_evaluator(zzz=1, repaet=2)


def test_tvm_signature_positionally(add_one):
    a, b = _args()
    # TVM's order: func_name, dev, number, repeat, min_repeat_ms,
    # limit_zero_time_iterations, cooldown_interval_ms, repeats_to_cooldown,
    # cache_flush_bytes, f_preproc
    timer = add_one.time_evaluator("main", tvm.cpu(), 2, 3, 0, 100, 0, 1, 0, "")
    result = timer(a, b)
    assert len(result.results) == 3 and all(t > 0 for t in result.results)
    np.testing.assert_array_equal(b, a + 1)


def test_cooldown_after_every_repeats_to_cooldown(add_one, monkeypatch):
    sleeps = []
    monkeypatch.setattr(runtime_module.time, "sleep", sleeps.append)
    add_one.time_evaluator(number=1, repeat=7, cooldown_interval_ms=4, repeats_to_cooldown=3)(
        *_args()
    )
    # after repeats 3 and 6; none after the last
    assert sleeps == [0.004, 0.004]
    sleeps.clear()
    add_one.time_evaluator(number=1, repeat=3, cooldown_interval_ms=2)(*_args())
    assert sleeps == [0.002, 0.002]


def test_cache_flush_bytes_flushes_that_many_bytes_before_every_repeat(add_one, flushers):
    res = add_one.time_evaluator(number=1, repeat=4, cache_flush_bytes=1 << 16)(*_args())
    assert len(res.results) == 4
    (flusher,) = flushers
    assert flusher.buf.nbytes == 1 << 16
    assert flusher.calls == 4


def test_f_preproc_cache_flush_flushes_the_whole_cache(add_one, flushers):
    add_one.time_evaluator(number=1, repeat=2, f_preproc="cache_flush_cpu_non_first_arg")(*_args())
    (flusher,) = flushers
    target = add_one.target
    assert flusher.buf.nbytes >= max(target.l2_bytes, target.l3_bytes)
    assert flusher.calls == 2


def test_defaults_flush_nothing_and_warn_nothing(add_one, flushers):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        add_one.time_evaluator(number=1, repeat=2)(*_args())
    assert flushers == []


def test_an_unknown_preprocessor_is_ignored_with_our_warning(add_one, flushers):
    with pytest.warns(IgnoredArgumentWarning, match="f_preproc='my_preproc' is ignored"):
        timer = add_one.time_evaluator(number=1, repeat=2, f_preproc="my_preproc")
    assert len(timer(*_args()).results) == 2
    assert flushers == []


def test_limit_zero_time_iterations_stops_a_clock_that_never_moves(monkeypatch):
    runs = []
    monkeypatch.setattr(runtime_module.time, "perf_counter", lambda: 5.0)
    costs = runtime_module.time_repeats(
        runs.append, number=1, repeat=2, min_repeat_ms=1, limit_zero_time_iterations=3
    )
    assert costs == [0.0, 0.0]
    # three tries per repeat; the count grows while nothing is measured and carries over
    assert len(runs) == 6 and runs[:4] == [1, 1618, 2617924, 2617924]


def test_bad_values_are_refused(add_one):
    with pytest.raises(RuntimeArgumentError, match="repeats_to_cooldown at least 1"):
        add_one.time_evaluator(repeats_to_cooldown=0)
    with pytest.raises(RuntimeArgumentError, match="cache_flush_bytes must be at least 0"):
        add_one.time_evaluator(cache_flush_bytes=-1)
