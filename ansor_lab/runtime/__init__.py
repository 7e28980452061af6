"""Runtime: build(), Module, time_evaluator, devices and NDArrays."""

from .build import build, lower
from .export import load_module
from .module import BenchmarkResult, Module
from .ndarray import (
    Device,
    NDArray,
    array as tensor,  # TVM >= 0.22: tvm.runtime.tensor(np_array, device)
    cpu,
    cuda,
)

__all__ = [
    "build",
    "load_module",
    "lower",
    "BenchmarkResult",
    "Module",
    "Device",
    "NDArray",
    "cpu",
    "cuda",
    "tensor",
]
