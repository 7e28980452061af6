"""Shared fixtures of the performance-path tests. These tests check which code is
generated (SIMD, gathers, masks, threads, unrolled bodies, the timer's loop) and that it
computes the right numbers; how fast it runs is measured in ``bench/``, not asserted."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import vector_agreement

from ansor_lab.codegen import llvm as codegen_llvm
from ansor_lab.codegen.target import host_cpu


@pytest.fixture(scope="session")
def cpu_features() -> set[str]:
    """The host CPU's LLVM feature flags that are on (``{"avx2", "avx512f", ...}``)."""
    return {f[1:] for f in host_cpu()[1].split(",") if f.startswith("+")}


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator, so a failure replays."""
    return np.random.default_rng(20240611)


@pytest.fixture
def rand(rng: np.random.Generator) -> Callable[..., np.ndarray]:
    """``rand(shape, dtype)``: small integers for int dtypes (sums stay exact and in range),
    uniform floats in [-1, 1) otherwise."""

    def make(shape: tuple, dtype: str = "float32") -> np.ndarray:
        if dtype.startswith("int"):
            return rng.integers(-20, 20, size=shape).astype(dtype)
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)

    return make


@pytest.fixture(autouse=True)
def vector_form_agrees(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every program these tests compile: the printed vector form of its SIMD loops
    (``get_source("tir")``) agrees with the code the generator emitted for them."""
    checked: list = []
    generate_ir = codegen_llvm.generate_ir

    def generate_and_check(func, target, options=None):
        text, reports = generate_ir(func, target, options)
        checked.append(vector_agreement.check(func, reports))
        return text, reports

    monkeypatch.setattr(codegen_llvm, "generate_ir", generate_and_check)
    return checked
