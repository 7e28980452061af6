"""The memory hierarchy of this machine, measured live, and the roofline it implies.

``stream_bandwidth`` reads buffers of growing size again and again with a compiled,
vectorized kernel of ours (a column sum over a ``(rows, 128)`` view: every load is a full
vector, the 128 sums stay in the L1 cache) and reports GB/s per size: the rate falls in
steps where the buffer stops fitting in a cache level. ``cache_levels`` reads the cache
sizes the kernel reports (Linux sysfs). ``hierarchy_figure`` plots bandwidth against
size; ``hierarchical_roofline_figure`` draws one memory roof per level under the compute
peak, with kernels as points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .roofline import add_kernel_points, log_log_layout

#: the width of the streamed view: 128 float32 = 8 AVX-512 vectors per row
_WIDTH = 128


@dataclass(frozen=True)
class BandwidthPoint:
    """Reading a buffer of ``nbytes`` ran at ``gbs`` GB/s."""

    nbytes: int
    gbs: float


@dataclass(frozen=True)
class CacheLevel:
    """One data cache level: its name ("L1d", "L2", "L3") and size in bytes."""

    name: str
    nbytes: int


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG") or 0) * scale


def cache_levels(root: str = "/sys/devices/system/cpu/cpu0/cache") -> list[CacheLevel]:
    """The data caches of CPU 0, smallest first (empty where sysfs does not say)."""
    levels = []
    for index in sorted(Path(root).glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or size <= 0:
            continue
        levels.append(CacheLevel("L1d" if level == 1 else f"L{level}", size))
    return sorted(levels, key=lambda c: c.nbytes)


def _stream_kernel(rows: int) -> Any:
    """A built column sum ``out[j] = sum_k A[k, j]``, ``j`` vectorized and innermost."""
    from .. import build, te, tir

    A = te.placeholder((rows, _WIDTH), name="A")
    k = te.reduce_axis((0, rows), name="k")
    S = te.compute((_WIDTH,), lambda j: te.sum(A[k, j], axis=k), name="S")
    sch = tir.Schedule(te.create_prim_func([A, S]))
    (j, kk) = sch.get_loops(sch.get_block("S"))
    sch.reorder(kk, j)
    sch.vectorize(j)
    return build(sch.mod, target="llvm")


def default_sizes(max_bytes: int = 256 << 20) -> list[int]:
    """Buffer sizes from 16 KiB to ``max_bytes``, two per octave."""
    sizes, n = [], 16 << 10
    while n <= max_bytes:
        sizes += [n, int(n * 1.5)]
        n *= 2
    return [s for s in sizes if s <= max_bytes]


def stream_bandwidth(
    sizes: list[int] | None = None, seconds_per_size: float = 0.03
) -> list[BandwidthPoint]:
    """Read bandwidth (GB/s) for each buffer size in bytes (one core, float32)."""
    points = []
    for size in sizes or default_sizes():
        rows = max(1, size // (4 * _WIDTH))
        f = _stream_kernel(rows)
        a = np.ones((rows, _WIDTH), dtype="float32")
        out = np.zeros(_WIDTH, dtype="float32")
        nbytes = a.nbytes
        once = f.time_evaluator(number=1, repeat=1)(a, out).mean
        number = max(1, int(seconds_per_size / 3 / max(once, 1e-9)))
        best = min(f.time_evaluator(number=number, repeat=3)(a, out).results)
        if not math.isclose(float(out[0]), rows, rel_tol=1e-3):
            raise AssertionError(f"the stream kernel summed {out[0]}, not {rows}")
        points.append(BandwidthPoint(nbytes, nbytes / best / 1e9))
    return points


def level_bandwidths(points: list[BandwidthPoint], levels: list[CacheLevel]) -> dict[str, float]:
    """The bandwidth of each level: the best rate of the sizes that fit in it (and not in
    the level below, which would be that level's rate); "memory" for sizes past the last."""
    out: dict[str, float] = {}
    lower = 0
    for level in levels:
        inside = [p.gbs for p in points if lower < p.nbytes <= level.nbytes * 0.75]
        if inside:
            out[level.name] = float(np.median(inside))
        lower = level.nbytes
    beyond = [p.gbs for p in points if p.nbytes > 2 * lower]
    if beyond:
        out["memory"] = float(np.median(beyond))
    return out


def _fmt_bytes(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n:g} B"


def hierarchy_figure(points: list[BandwidthPoint], levels: list[CacheLevel] = ()) -> Any:
    """Bandwidth against buffer size (log x), with a dashed line at each cache size."""
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[p.nbytes for p in points],
            y=[p.gbs for p in points],
            mode="lines+markers",
            name="read bandwidth",
            text=[_fmt_bytes(p.nbytes) for p in points],
            hovertemplate="%{text}: %{y:.1f} GB/s<extra></extra>",
        )
    )
    biggest = max((p.nbytes for p in points), default=0)
    for level in levels:
        if level.nbytes > 2 * biggest:
            continue  # a cache larger than every buffer measured: no step to see
        fig.add_vline(x=level.nbytes, line_dash="dash", line_color="gray")
        # annotations on a log axis take the exponent as x
        fig.add_annotation(
            x=math.log10(level.nbytes),
            y=1.0,
            yref="paper",
            yanchor="bottom",
            text=f"{level.name} {_fmt_bytes(level.nbytes)}",
            showarrow=False,
        )
    fig.update_layout(
        title="the memory hierarchy: reading a buffer again and again, one core",
        xaxis={"type": "log", "title": "buffer size (bytes)"},
        yaxis={"title": "GB/s", "rangemode": "tozero"},
        width=720,
        height=420,
    )
    return fig


def hierarchical_roofline_figure(
    peak_gflops: float, roofs: dict[str, float], points: Any = (), title: str = "roofline"
) -> Any:
    """One memory roof per level (GB/s x intensity) under the compute peak; kernels
    (``RooflinePoint``s) as labelled points."""
    import plotly.graph_objects as go

    points = list(points)
    xs = [p.intensity for p in points] + [peak_gflops / bw for bw in roofs.values()]
    grid = np.geomspace(min(xs) / 4, max(xs) * 4, 96)
    fig = go.Figure()
    for name, bw in roofs.items():
        fig.add_trace(
            go.Scatter(
                x=grid,
                y=np.minimum(peak_gflops, bw * grid),
                mode="lines",
                name=f"{name} roof ({bw:.0f} GB/s)",
                hovertemplate="%{x:.3g} FLOP/B: at most %{y:.1f} GFLOPS<extra></extra>",
            )
        )
    add_kernel_points(fig, points, "middle right")
    log_log_layout(fig, f"{title} (peak {peak_gflops:.0f} GFLOPS on one core)", 760, 480)
    return fig
