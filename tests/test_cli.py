"""The ``ansor-lab`` command: ``info`` and ``demo`` run in process and print what they promise."""

from __future__ import annotations

import re

import pytest

import ansor_lab
from ansor_lab.cli import cpu_feature_summary, main


def test_info_prints_version_target_and_hardware(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^ansor_lab\s+{re.escape(ansor_lab.__version__)}$", out, re.M)
    target = str(ansor_lab.Target("llvm"))
    assert re.search(rf"^target\s+{re.escape(target)}$", out, re.M)
    cores = re.search(r"^cores\s+(\d+) usable", out, re.M)
    assert cores and int(cores.group(1)) == ansor_lab.Target("llvm").num_cores >= 1
    assert re.search(r"^cpu features\s+.*\(\d+ features enabled\)$", out, re.M)
    assert re.search(r"^nvcc\s+(not found|\S*nvcc: .+)$", out, re.M)
    assert re.search(r"^cuda gpu\s+(available|not available)", out, re.M)


def test_feature_summary_names_enabled_simd_only() -> None:
    text = cpu_feature_summary("+avx,+avx2,-avx512f,+fma,+sse4.2,+cx8")
    assert text == "sse4.2, avx, avx2, fma (5 features enabled)"
    assert "none of the usual" in cpu_feature_summary("-avx,+cx8")


def test_demo_checks_against_numpy_and_reports_gflops(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--size", "48", "--number", "2", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    # 2 * 48^3 multiply-adds plus one exp per output element
    assert f"({2 * 48**3 + 48 * 48:.4g} FLOPs)" in out
    assert "C[i, j] = sum(A[i, k] * B[k, j]) over [k:48]" in out
    assert "@T.prim_func" in out and "for k in range(48):" in out
    err = re.search(r"max abs error vs numpy: (\S+) \(OK\)", out)
    assert err and float(err.group(1)) < 1e-4
    ours = re.search(r"^ansor_lab \(default\)\s+([\d.]+)\s+([\d.]+)$", out, re.M)
    ref = re.search(r"^numpy exp\(a @ b\)\s+([\d.]+)\s+([\d.]+)$", out, re.M)
    assert ours and ref
    assert float(ours.group(2)) > 0 and float(ref.group(2)) > 0


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_bad_size_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--size", "0"])
    assert exc.value.code == 2
