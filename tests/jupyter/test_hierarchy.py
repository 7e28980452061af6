"""The memory hierarchy measured live: cache sizes, stream bandwidth, the figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansor_lab.jupyter import (
    BandwidthPoint,
    CacheLevel,
    cache_levels,
    hierarchical_roofline_figure,
    hierarchy_figure,
    kernel_point,
    level_bandwidths,
    stream_bandwidth,
)
from ansor_lab.jupyter.hierarchy import default_sizes


def fake_sysfs(root: Path) -> Path:
    for k, (level, kind, size) in enumerate(
        [
            (1, "Data", "48K"),
            (1, "Instruction", "32K"),
            (2, "Unified", "2048K"),
            (3, "Unified", "32M"),
        ]
    ):
        d = root / f"index{k}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    return root


def test_cache_levels_from_sysfs(tmp_path: Path) -> None:
    levels = cache_levels(str(fake_sysfs(tmp_path)))
    assert levels == [
        CacheLevel("L1d", 48 << 10),
        CacheLevel("L2", 2 << 20),
        CacheLevel("L3", 32 << 20),
    ]
    assert cache_levels(str(tmp_path / "missing")) == []


def test_level_bandwidths_takes_the_sizes_inside_each_level() -> None:
    levels = [CacheLevel("L1d", 64 << 10), CacheLevel("L2", 1 << 20)]
    points = [
        BandwidthPoint(16 << 10, 300.0),
        BandwidthPoint(32 << 10, 320.0),
        BandwidthPoint(256 << 10, 100.0),
        BandwidthPoint(512 << 10, 90.0),
        BandwidthPoint(8 << 20, 20.0),
    ]
    bw = level_bandwidths(points, levels)
    assert bw == {"L1d": 310.0, "L2": 95.0, "memory": 20.0}


def test_default_sizes_two_per_octave() -> None:
    sizes = default_sizes(256 << 10)
    assert sizes[:4] == [16 << 10, 24 << 10, 32 << 10, 48 << 10] and sizes[-1] == 256 << 10


def test_stream_bandwidth_measures_and_checks_its_sum() -> None:
    points = stream_bandwidth([32 << 10, 1 << 20], seconds_per_size=0.005)
    assert [p.nbytes for p in points] == [32 << 10, 1 << 20]
    assert all(p.gbs > 0.1 for p in points)


def test_figures() -> None:
    pytest.importorskip("plotly")
    from ansor_lab import te

    points = [BandwidthPoint(16 << 10, 300.0), BandwidthPoint(8 << 20, 20.0)]
    fig = hierarchy_figure(points, [CacheLevel("L1d", 48 << 10)])
    assert list(fig.data[0].y) == [300.0, 20.0]
    assert fig.layout.shapes and fig.layout.xaxis.type == "log"
    A = te.placeholder((64, 64), name="A")
    B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
    k = kernel_point([A, B], 1e-6, "double")
    fig = hierarchical_roofline_figure(100.0, {"L1d": 300.0, "memory": 20.0}, [k])
    assert [t.name for t in fig.data] == ["L1d roof (300 GB/s)", "memory roof (20 GB/s)", "kernels"]
    assert max(fig.data[1].y) == pytest.approx(100.0)  # the compute peak caps every roof
    assert fig.data[2].text == ("double",)
