"""Runtime: build(), Module, time_evaluator, devices and NDArrays."""

from .build import build, lower
from .module import BenchmarkResult, Module
from .ndarray import Device, NDArray, cpu, cuda

__all__ = ["build", "lower", "BenchmarkResult", "Module", "Device", "NDArray", "cpu", "cuda"]
