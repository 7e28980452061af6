"""The read-bandwidth measurement's API (small buffers; no timing is asserted)."""

from __future__ import annotations

import json

import pytest

from ansor_lab.measure import bandwidth as bw


@pytest.mark.parametrize("threads", [1, 2])
def test_measure_read_bandwidth_reports_what_it_read(threads):
    got = bw.measure_read_bandwidth(1 << 20, threads=threads, repeats=2, passes=2)
    assert isinstance(got, bw.BandwidthMeasurement)
    assert got.threads == threads and got.repeats == 2
    # whole blocks of 8 vectors per thread, at most the size asked for
    assert 0 < got.nbytes <= 1 << 20
    assert got.nbytes % (threads * bw.CHAINS * 4) == 0
    assert 0 < got.gbs <= got.best_gbs
    assert got.method == bw.METHOD and got.cpu


@pytest.mark.parametrize(
    ("nbytes", "threads", "repeats"), [(0, 1, 1), (1 << 20, 0, 1), (1 << 20, 1, 0)]
)
def test_bad_arguments_say_what_to_write(nbytes, threads, repeats):
    with pytest.raises(bw.BandwidthError, match="threads >= 1"):
        bw.measure_read_bandwidth(nbytes, threads, repeats)


def test_read_bandwidth_is_cached_per_machine_and_thread_count(tmp_path):
    path = tmp_path / "bw.json"
    first = bw.read_bandwidth(1, path=path, nbytes=1 << 20)
    again = bw.read_bandwidth(1, path=path, nbytes=1 << 20)
    assert again == first  # read back, not measured again
    two = bw.read_bandwidth(2, path=path, nbytes=1 << 20)
    data = json.loads(path.read_text())
    assert sorted(k.rsplit("|", 1)[1] for k in data) == ["threads=1", "threads=2"]
    assert data[next(k for k in data if k.endswith("threads=2"))]["gbs"] == two.gbs
    forced = bw.read_bandwidth(1, path=path, nbytes=1 << 20, force=True)
    assert forced.measured_at > first.measured_at


def test_default_buffer_is_past_the_last_level_cache():
    assert 256 << 20 <= bw.default_nbytes() <= 512 << 20


def test_machine_balance_reads_the_cache_and_never_measures_unless_asked(tmp_path):
    path = tmp_path / "bw.json"
    assert bw.machine_balance(1, path=path) is None  # nothing cached: no measurement
    assert not path.exists()
    key = bw._machine_key(1) + "|balance|memory"
    fresh = {"gbs": 10.0, "peak_gflops": 200.0, "method": bw.METHOD, "nbytes": bw.default_nbytes()}
    path.write_text(json.dumps({key: fresh}))
    assert bw.machine_balance(1, path=path) == pytest.approx(0.05)
    for stale in ({"method": "older"}, {"nbytes": 1 << 20}):
        path.write_text(json.dumps({key: {**fresh, **stale}}))
        assert bw.machine_balance(1, path=path) is None


def test_balance_levels_run_from_l2_to_memory():
    levels = bw.bandwidth_levels()
    assert levels[-1] == ("memory", bw.default_nbytes())
    sizes = [s for _, s in levels]
    assert sizes == sorted(sizes) and all(s <= bw.MAX_LEVEL_BYTES for s in sizes[:-1])
