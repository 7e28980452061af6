"""The README's set-up commands are the ones CI runs, and what it points to exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text().splitlines()


def test_readme_starts_with_the_two_setup_commands() -> None:
    lab, tests = README[0], README[1]
    for line in (lab, tests):
        assert line.startswith("python3 -m venv .venv && .venv/bin/pip install -e ")
    assert '".[jupyter]"' in lab and "jupyter lab --no-browser --ip=127.0.0.1" in lab
    assert lab.rstrip().endswith(" notebooks/")
    assert '".[test,jupyter]"' in tests and tests.endswith('python -m pytest -n 2 -q -m "not slow"')
    assert README[2] == ""


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert README[1] in ci, ".ci/run must run the README's second line unchanged"
    assert any(line.strip() == ".venv/bin/ruff check ." for line in ci)
    # the README's line is the default tier; CI runs the slow tier after it
    assert ".venv/bin/python -m pytest -n 2 -q -m slow" in ci


def test_files_named_in_readme_exist() -> None:
    text = "\n".join(README)
    named = set(re.findall(r"\b((?:bench|notebooks|binder|ansor_lab)/[\w./-]+\.\w+)", text))
    assert "bench/bench_build.py" in named
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"README names missing files: {missing}"


def test_binder_installs_what_pyproject_declares() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = set(project["dependencies"]) | set(project["optional-dependencies"]["jupyter"])
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    listed = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    assert listed == wanted, "binder/requirements.txt drifted from pyproject.toml"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    post = ROOT / "binder" / "postBuild"
    assert post.stat().st_mode & 0o111 and 'pip install --no-cache-dir -e ".[jupyter]"' in (
        post.read_text()
    )


def test_quick_start_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code = re.search(r"```python\n(.*?)```", "\n".join(README), re.S)
    assert code, "README has no ```python quick-start block"
    exec(compile(code.group(1), "README.md quick start", "exec"), {})  # our own README
    out = capsys.readouterr().out
    assert "D[i, j] = T.exp(C[i, j])" in out and "@T.prim_func" in out
    assert re.search(r"^[0-9.e-]+ s$", out, re.M) and "define " in out
