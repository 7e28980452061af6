"""The roofline: how fast a kernel is against what this machine can do.

A kernel's arithmetic intensity is its FLOPs (the DAG's count) over the bytes it must
move at least once (every argument buffer read or written once); its achieved GFLOPS is
FLOPs over its time. The machine's roof is ``min(peak GFLOPS, bandwidth x intensity)``:
below the ridge point a kernel is memory bound, above it compute bound.

The peaks are measured once and cached on disk (``~/.cache/ansor_lab/roofline.json``,
or ``$ANSOR_LAB_CACHE_DIR``). Peak compute is the larger of two float32 measurements on
every usable core: a loop of independent multiply-adds at the host's vector width
(compiled with LLVM for this CPU), and a numpy (BLAS) matmul. A BLAS alone is not a roof:
OpenBLAS 0.3.31 runs 256-bit kernels on Zen 5, half of what its AVX-512 units do, and
tuned kernels went through that roof. Memory bandwidth is the streaming read bandwidth of
every usable core (``measure.bandwidth.read_bandwidth``: our read-sum kernel over a buffer
far larger than the last-level cache, cached per machine).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AnsorLabError
from ..measure.peak import _CHAINS, _fma_loop_ir, multiply_add_peak_gflops  # noqa: F401


class RooflineError(AnsorLabError, ValueError):
    """A kernel or log could not be placed on the roofline."""


@dataclass(frozen=True)
class MachinePeaks:
    """Peak float32 GFLOPS and memory bandwidth (GB/s) of this machine."""

    peak_gflops: float
    bandwidth_gbs: float
    cpu: str = ""
    method: str = ""
    measured_at: float = 0.0

    @property
    def ridge_intensity(self) -> float:
        """FLOPs per byte where the memory roof meets the compute roof."""
        return self.peak_gflops / self.bandwidth_gbs

    def attainable_gflops(self, intensity: float) -> float:
        """The roof at ``intensity`` FLOPs per byte."""
        return min(self.peak_gflops, self.bandwidth_gbs * intensity)


@dataclass(frozen=True)
class RooflinePoint:
    """One measured kernel: FLOPs, bytes moved (compulsory) and seconds per run."""

    label: str
    flops: float
    bytes: float
    seconds: float

    @property
    def intensity(self) -> float:
        """FLOPs per byte."""
        return self.flops / self.bytes if self.bytes else float("inf")

    @property
    def gflops(self) -> float:
        """Achieved GFLOPS."""
        return self.flops / self.seconds / 1e9 if self.seconds > 0 else 0.0


def cache_file() -> Path:
    """Where measured peaks are cached."""
    root = os.environ.get("ANSOR_LAB_CACHE_DIR")
    base = (
        Path(root)
        if root
        else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ansor_lab"
    )
    return base / "roofline.json"


def _machine_key() -> str:
    try:
        from ..codegen.target import host_cpu

        cpu = host_cpu()[0]
    except Exception:  # noqa: BLE001 - no LLVM: still cache per core count
        cpu = "unknown"
    return f"{cpu}|{os.cpu_count()}"


def _best_seconds(fn: Any, repeats: int) -> float:
    fn()  # warm-up (page faults, thread pool start)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _measure_peak_gflops(n: int = 512, repeats: int = 8) -> float:
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    t = _best_seconds(lambda: np.matmul(a, b, out=c), repeats)
    return 2.0 * n**3 / t / 1e9


_BANDWIDTH_METHOD = "read bandwidth: measure.bandwidth.read_bandwidth on every core"
_FMA_METHOD = "LLVM multiply-add loop on every core, or numpy float32 matmul 512^3 (BLAS)"


def _measure_bandwidth_gbs(cache: Path) -> float:
    from ..codegen.target import Target
    from ..measure.bandwidth import read_bandwidth

    return read_bandwidth(threads=max(1, Target("llvm").num_cores), path=cache).gbs


def measure_peaks(force: bool = False, path: str | os.PathLike | None = None) -> MachinePeaks:
    """This machine's peaks: read from the cache, or measured (a second or two) and cached."""
    file = Path(path) if path is not None else cache_file()
    key = _machine_key()
    data: dict = {}
    if file.exists():
        try:
            data = json.loads(file.read_text())
        except (OSError, ValueError):
            data = {}
    # peaks measured by an older method (a BLAS matmul alone) are measured again
    cached = data.get(key)
    method = cached.get("method", "") if isinstance(cached, dict) else ""
    if not force and method.startswith(_FMA_METHOD) and _BANDWIDTH_METHOD in method:
        try:
            return MachinePeaks(**cached)
        except TypeError:
            pass
    peaks = MachinePeaks(
        peak_gflops=max(multiply_add_peak_gflops(), _measure_peak_gflops()),
        bandwidth_gbs=_measure_bandwidth_gbs(file.with_name("bandwidth.json")),
        cpu=key,
        method=f"{_FMA_METHOD}; {_BANDWIDTH_METHOD}",
        measured_at=time.time(),
    )
    data[key] = asdict(peaks)
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(file)
    except OSError:
        pass  # a read-only home: the numbers are still returned
    return peaks


# --------------------------------------------------------------------------------------
# Kernels and logs


def _tensors_of(obj: Any) -> list:
    """The argument tensors (inputs and outputs) of a schedule, func, task, DAG or list."""
    from ..dsl.dag import ComputeDAG
    from ..ir import nodes as N

    if isinstance(obj, ComputeDAG):
        return list(obj.tensors)
    if hasattr(obj, "compute_dag") and hasattr(obj, "args"):  # SearchTask
        return list(obj.args)
    if hasattr(obj, "mod") and hasattr(obj, "trace"):  # tir.Schedule
        if obj.args is None:
            raise RooflineError("this schedule has no argument list; pass the tensors")
        return list(obj.args)
    if isinstance(obj, N.IRModule):
        obj = next(iter(obj.functions.values()))
    if isinstance(obj, N.PrimFunc):
        if getattr(obj.source, "args", None) is None:
            raise RooflineError(
                "this PrimFunc does not come from te.create_prim_func; pass "
                "its tensors [A, B, C] instead"
            )
        return list(obj.source.args)
    if isinstance(obj, (list, tuple)):
        return list(obj)
    raise RooflineError(
        f"cannot find the tensors of a {type(obj).__name__}; pass a "
        "tir.Schedule, a PrimFunc, a SearchTask, a ComputeDAG or [A, B, C]"
    )


def flops_and_bytes(obj: Any) -> tuple[float, float]:
    """(FLOPs of one run, bytes of every argument buffer) of a kernel."""
    from ..dsl.dag import ComputeDAG

    tensors = _tensors_of(obj)
    dag = obj if isinstance(obj, ComputeDAG) else ComputeDAG(tensors)
    # the arguments, and every input even when only the outputs were given
    moved = {id(t.op): t for t in tensors}
    for op in dag.placeholders:
        moved.setdefault(id(op), op.output(0))
    nbytes = 0.0
    for t in moved.values():
        nbytes += float(np.prod(t.shape, dtype=np.float64)) * np.dtype(t.dtype).itemsize
    return float(dag.flop_ct), nbytes


def arithmetic_intensity(obj: Any) -> float:
    """FLOPs per byte of compulsory memory traffic (each argument moved once)."""
    flops, nbytes = flops_and_bytes(obj)
    return flops / nbytes


def kernel_point(obj: Any, seconds: float, label: str = "kernel") -> RooflinePoint:
    """A kernel (schedule, func, task, DAG or tensors) that ran in ``seconds``."""
    flops, nbytes = flops_and_bytes(obj)
    return RooflinePoint(label, flops, nbytes, float(seconds))


def log_points(
    log_file: str, workload_key: str | None = None, label: str = "trial"
) -> list[RooflinePoint]:
    """One point per successful record of a tuning log (optionally one workload's)."""
    from ..dsl.serialize import dag_from_json
    from ..measure.records import load_records

    sizes: dict = {}
    points = []
    for k, (inp, res) in enumerate(load_records(log_file)):
        if res.error_no != 0 or (workload_key and inp.workload_key != workload_key):
            continue
        if inp.structure_key not in sizes:
            sizes[inp.structure_key] = flops_and_bytes(dag_from_json(inp.dag))
        flops, nbytes = sizes[inp.structure_key]
        points.append(RooflinePoint(f"{label} {k}", inp.flop_ct or flops, nbytes, res.mean_cost))
    return points


def roofline_figure(
    points: Any = (),
    peaks: MachinePeaks | None = None,
    candidates: Any = (),
    title: str = "roofline",
) -> Any:
    """A plotly figure: the roof, the ``points`` (named kernels) and ``candidates`` (a
    tuning log's trials) by arithmetic intensity (x, log) and GFLOPS (y, log)."""
    import plotly.graph_objects as go

    peaks = peaks or measure_peaks()
    points, candidates = list(points), list(candidates)
    every = points + candidates
    xs = [p.intensity for p in every] + [peaks.ridge_intensity]
    lo = min(xs) / 4 if every else peaks.ridge_intensity / 64
    hi = max(xs) * 4 if every else peaks.ridge_intensity * 16
    grid = np.geomspace(lo, hi, 64)
    grid = np.unique(np.append(grid, peaks.ridge_intensity))
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=grid,
            y=[peaks.attainable_gflops(x) for x in grid],
            mode="lines",
            name="roof",
            line={"color": "black"},
            hovertemplate="intensity %{x:.3g} FLOP/B: at most %{y:.1f} GFLOPS<extra></extra>",
        )
    )
    if candidates:
        fig.add_trace(
            go.Scatter(
                x=[p.intensity for p in candidates],
                y=[p.gflops for p in candidates],
                mode="markers",
                name="tuning candidates",
                text=[p.label for p in candidates],
                marker={"color": "#8fb3d9", "size": 7, "opacity": 0.7},
                hovertemplate="%{text}: %{y:.2f} GFLOPS<extra></extra>",
            )
        )
    add_kernel_points(fig, points, "top center")
    title = f"{title} (peak {peaks.peak_gflops:.0f} GFLOPS, {peaks.bandwidth_gbs:.1f} GB/s)"
    log_log_layout(fig, title, 720, 460)
    return fig


def add_kernel_points(fig: Any, points: Any, textposition: str = "top center") -> None:
    """The labelled red dots of measured kernels on a roofline figure."""
    import plotly.graph_objects as go  # noqa: PLC0415 - plotly only when drawing

    if not points:
        return
    fig.add_trace(
        go.Scatter(
            x=[p.intensity for p in points],
            y=[p.gflops for p in points],
            mode="markers+text",
            name="kernels",
            text=[p.label for p in points],
            textposition=textposition,
            marker={"color": "#d62728", "size": 11},
            hovertemplate="%{text}: %{x:.3g} FLOP/B, %{y:.2f} GFLOPS<extra></extra>",
        )
    )


def log_log_layout(fig: Any, title: str, width: int, height: int) -> None:
    """A roofline's axes: arithmetic intensity against GFLOPS, both logarithmic."""
    fig.update_layout(
        title=title,
        xaxis={"type": "log", "title": "arithmetic intensity (FLOP / byte)"},
        yaxis={"type": "log", "title": "GFLOPS"},
        width=width,
        height=height,
    )
