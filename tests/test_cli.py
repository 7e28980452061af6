"""The ``ansor-lab`` command: info and demo in process; tune, show, export, replay, distill
and merge as a subprocess, as scripts and CI jobs run them."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import ansor_lab
from ansor_lab.cli import cpu_feature_summary, main

ROOT = str(pathlib.Path(__file__).resolve().parents[1])


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


# -- the commands for scripts and CI, run as a user runs them: a subprocess ----------------

WORKLOAD = """
from ansor_lab import te


def matmul(n, m):
    A = te.placeholder((n, m), name="A")
    B = te.placeholder((m, n), name="B")
    k = te.reduce_axis((0, m), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]
"""
FAST = ["--param", "population=16", "--param", "generations=1"]
FAST += ["--param", "sample_init_min_population=8", "--seed", "0", "-q"]
TUNE = ["--args", "[16, 8]", "--target", "llvm -num-cores=1", *FAST]


def cli(*argv: str, cwd: object = None) -> subprocess.CompletedProcess:
    """``python -m ansor_lab.cli ARGV`` in ``cwd`` with this checkout on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, "-m", "ansor_lab.cli", *argv]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A directory with wl.py and log.json: 4 trials of a 16x8 matmul."""
    d = tmp_path_factory.mktemp("cli")
    (d / "wl.py").write_text(WORKLOAD)
    p = cli("tune", "wl.py:matmul", *TUNE, "--trials", "4", "--log", "log.json", "--json", cwd=d)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["trials"] == 4 and summary["resumed_from"] == 0
    assert summary["workload_key"] == '["matmul", 16, 8]'
    lines = (d / "log.json").read_text().splitlines()
    assert len(lines) == 4
    costs = [json.loads(x)["costs"] for x in lines if json.loads(x)["error_no"] == 0]
    assert summary["best_cost"] == pytest.approx(min(sum(c) / len(c) for c in costs))
    assert summary["best_gflops"] == pytest.approx(2 * 16 * 16 * 8 / summary["best_cost"] / 1e9)
    return d


def _copy(src: pathlib.Path, dst: pathlib.Path) -> pathlib.Path:
    shutil.copy(src, dst)
    return dst


def test_tune_resume_counts_the_log_and_appends(tuned: pathlib.Path, tmp_path: pathlib.Path):
    _copy(tuned / "wl.py", tmp_path / "wl.py")
    _copy(tuned / "log.json", tmp_path / "log.json")
    # without --resume an existing log is never appended to by accident
    p = cli("tune", "wl.py:matmul", *TUNE, "--trials", "6", "--log", "log.json", cwd=tmp_path)
    assert p.returncode == 2 and "pass --resume to continue it" in p.stderr
    p = cli(
        "tune",
        "wl.py:matmul",
        *TUNE,
        "--trials",
        "6",
        "--log",
        "log.json",
        "--resume",
        "--json",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert (summary["resumed_from"], summary["trials"]) == (4, 2)
    lines = (tmp_path / "log.json").read_text().splitlines()
    assert len(lines) == 6 and lines[:4] == (tuned / "log.json").read_text().splitlines()
    # the resumed search did not measure a program the log already had
    decisions = [
        json.dumps(json.loads(x)["decisions"]) + str(json.loads(x)["sketch"]) for x in lines
    ]
    assert len(set(decisions)) == 6


def test_show_prints_best_errors_and_curve(tuned: pathlib.Path):
    p = cli("show", "log.json", "--json", cwd=tuned)
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)["workloads"]
    assert row["workload_key"] == '["matmul", 16, 8]' and row["records"] == 4
    assert row["flop_ct"] == 2 * 16 * 16 * 8
    assert row["best_gflops"] == pytest.approx(row["flop_ct"] / row["best_cost"] / 1e9)
    curve = row["curve_gflops"]
    assert len(curve) == 4 and curve == sorted(curve) and curve[-1] == row["best_gflops"]
    text = cli("show", "log.json", cwd=tuned)
    assert text.returncode == 0
    assert '[1] ["matmul", 16, 8]  on llvm' in text.stdout
    assert re.search(r"records 4, errors: none", text.stdout)
    assert re.search(rf"best .* {row['best_gflops']:.2f} GFLOPS", text.stdout)
    assert re.search(r"curve   \|[▁▂▃▄▅▆▇█]{4}\|", text.stdout)


def test_export_writes_a_script_that_rebuilds_checks_and_times(tuned, tmp_path):
    _copy(tuned / "log.json", tmp_path / "log.json")
    p = cli("export", "log.json", "-o", "best.py", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    record = json.loads((tmp_path / "best.json").read_text())
    best_line = min(
        (json.loads(x) for x in (tuned / "log.json").read_text().splitlines()),
        key=lambda r: sum(r["costs"]) / len(r["costs"]) if r["costs"] else 1e9,
    )
    assert record == best_line  # best.json is the best record, field for field
    script = (tmp_path / "best.py").read_text()
    assert "def apply_trace(sch):" in script and "sch.sample_perfect_tile(" in script
    run = subprocess.run(
        [sys.executable, "best.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    assert run.returncode == 0, run.stderr
    assert re.search(r"^C: max abs error \S+ \(OK\)$", run.stdout, re.M)
    assert re.search(r"^time: [\d.]+ us, [\d.]+ GFLOPS on llvm", run.stdout, re.M)
    # the script's check can fail: a wrong reference makes it say so and exit 1
    broken = script.replace(
        "expected = te.evaluate(args, inputs)",
        "expected = {t: v + 1 for t, v in te.evaluate(args, inputs).items()}",
    )
    assert broken != script
    (tmp_path / "broken.py").write_text(broken)
    run = subprocess.run(
        [sys.executable, "broken.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    assert run.returncode == 1 and "(MISMATCH)" in run.stdout


def test_replay_prints_ir_source_time_and_checks(tuned, tmp_path):
    _copy(tuned / "log.json", tmp_path / "log.json")
    assert cli("export", "log.json", "-o", "best.py", cwd=tmp_path).returncode == 0
    p = cli("replay", "best.json", "--number", "2", "--repeat", "1", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "@T.prim_func" in p.stdout and "define" in p.stdout  # loop IR, then LLVM IR
    assert re.search(r"^check OK; time [\d.]+ (us|ms), [\d.]+ GFLOPS on llvm", p.stdout, re.M)
    p = cli("replay", "best.json", "--json", "--number", "2", "--repeat", "1", cwd=tmp_path)
    out = json.loads(p.stdout)
    assert p.returncode == 0 and out["ok"] is True and out["max_abs_error"]["C"] < 1e-4
    assert out["gflops"] == pytest.approx(2 * 16 * 16 * 8 / out["cost"] / 1e9)


def test_replay_exits_1_when_the_program_disagrees_with_the_reference(
    tuned, tmp_path, monkeypatch, capsys
):
    import ansor_lab.dsl.reference as reference

    _copy(tuned / "log.json", tmp_path / "log.json")
    monkeypatch.chdir(tmp_path)
    assert main(["export", "log.json", "-o", "best.py"]) == 0
    real = reference.reference_outputs
    monkeypatch.setattr(
        reference, "reference_outputs", lambda args, arrays: [a + 1 for a in real(args, arrays)]
    )
    assert main(["replay", "best.json", "--no-source", "--number", "1", "--repeat", "1"]) == 1
    assert "check MISMATCH" in capsys.readouterr().out


def test_distill_keeps_the_best_line_and_merge_joins_logs(tuned, tmp_path):
    _copy(tuned / "log.json", tmp_path / "a.json")
    p = cli("distill", "a.json", "-o", "d.json", "--json", cwd=tmp_path)
    assert p.returncode == 0 and json.loads(p.stdout) == {
        "read": 4,
        "written": 1,
        "output": "d.json",
    }
    (line,) = (tmp_path / "d.json").read_text().splitlines()
    exported = cli("export", "a.json", "-o", "best.py", cwd=tmp_path)
    assert exported.returncode == 0
    assert json.loads(line) == json.loads((tmp_path / "best.json").read_text())
    p = cli("merge", "a.json", "d.json", "-o", "m.json", "--json", cwd=tmp_path)
    assert p.returncode == 0 and json.loads(p.stdout)["written"] == 5
    merged = (tmp_path / "m.json").read_text().splitlines()
    assert merged == (tmp_path / "a.json").read_text().splitlines() + [line]
    # -o is written afresh, not appended to
    assert cli("merge", "d.json", "-o", "m.json", cwd=tmp_path).returncode == 0
    assert (tmp_path / "m.json").read_text().splitlines() == [line]


@pytest.mark.parametrize(
    ("argv", "phrase"),
    [
        (["show", "missing.json"], "no such log 'missing.json'"),
        (["tune", "wl.py:nothere", "--trials", "4", "--log", "x.json"], "defines no function"),
        (
            ["tune", "wl.py:matmul", "--args", "16", "--trials", "4", "--log", "x.json"],
            "not a list",
        ),
        (
            ["tune", "wl.py:matmul", "--args", "[16, 8]", "--trials", "0", "--log", "x.json"],
            "give at least 1 measurement",
        ),
        (["replay", "wl.py"], "is not one JSON object"),
        (
            [
                "tune",
                "wl.py:matmul",
                "--args",
                "[16, 8]",
                "--trials",
                "2",
                "--log",
                "x.json",
                "--target",
                "lvm",
            ],
            "target",
        ),
    ],
)
def test_bad_usage_exits_2_with_a_clear_message(tuned, argv, phrase):
    p = cli(*argv, cwd=tuned)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert f"ansor-lab {argv[0]}: error:" in p.stderr and phrase in p.stderr
    assert "Traceback" not in p.stderr


def test_dask_flag_uses_dask_runner_when_present(monkeypatch):
    from ansor_lab import auto_scheduler
    from ansor_lab.cli.tune import dask_runner
    from ansor_lab.errors import CommandLineError

    monkeypatch.delattr(auto_scheduler, "DaskRunner", raising=False)
    with pytest.raises(CommandLineError, match="--dask needs auto_scheduler.DaskRunner"):
        dask_runner("tcp://127.0.0.1:8786")

    class FakeRunner:
        def __init__(self, address):
            self.address = address

    monkeypatch.setattr(auto_scheduler, "DaskRunner", FakeRunner, raising=False)
    monkeypatch.delattr(auto_scheduler, "DaskBuilder", raising=False)
    runner, builder = dask_runner("tcp://127.0.0.1:8786")
    assert isinstance(runner, FakeRunner) and runner.address == "tcp://127.0.0.1:8786"
    assert builder is None
